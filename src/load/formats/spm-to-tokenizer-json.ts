/**
 * A SentencePiece model as transformers 5 converts it to a tokenizer.json (its "fast" tokenizer;
 * transformers 5 never runs sentencepiece itself), so a SentencePiece directory can be answered
 * the way `AutoTokenizer` answers it, through the tokenizer.json encoder:
 *
 * - `llama` — `LlamaTokenizer` / `LlamaTokenizerFast` (tokenizer_class in tokenizer_config.json):
 *   BPE over the pieces with merges generated from the vocabulary (`generate_merges`: every split
 *   of a piece into two pieces, ordered by the merged piece's id, then the left part's length),
 *   `fuse_unk`, `byte_fallback`, no unknown token, no normalizer, a Metaspace pre-tokenizer whose
 *   prepend scheme is `always` with `legacy: true`, `first` without (transformers 5's default is
 *   `legacy: false`), `never` with `add_prefix_space: false`; added tokens `<unk>`, `<s>`, `</s>`
 *   and the model's CONTROL (special) and USER_DEFINED (not special) pieces.
 * - `generic` — `TokenizersBackend` (no model-specific class): BPE as above but with `unk_piece`
 *   as the unknown token, or Unigram over (piece, score) with `unk_id`; normalizer the
 *   precompiled charsmap (if any) then " " → "▁"; no pre-tokenizer (so no dummy prefix); added
 *   tokens the proto's unk/bos/eos pieces and its CONTROL and USER_DEFINED pieces.
 *
 * Neither applies `remove_extra_whitespaces`, and `llama` drops the normalization rules: where a
 * model relies on them, the converted tokenizer's ids differ from sentencepiece's (which is why
 * SentencePieceProcessor exists). Model-specific classes (T5, ALBERT, XLNet, Gemma…) convert
 * differently and are not covered. The result's `post_processor` is null: BOS/EOS insertion
 * (`add_bos_token`, …) belongs to the caller, as for any tokenizer.json.
 *
 * Checked against transformers 5.18's own conversion (test/fixtures/formats/sentencepiece/*.transformers.json).
 *
 * Layer: load.
 */

import { DeltatokError } from "../../errors.js";
import {
  PIECE_CONTROL,
  PIECE_USER_DEFINED,
  type SentencePieceModelData,
} from "../../encoder/model/sentencepiece-model.js";

export type SpmConversionTarget =
  | {
      readonly kind: "llama";
      /** tokenizer_config.json `legacy` (transformers 5 default: false). */
      readonly legacy: boolean;
      /** tokenizer_config.json `add_prefix_space` (default: true). */
      readonly addPrefixSpace?: boolean;
    }
  | { readonly kind: "generic" };

/** One `added_tokens` entry of a tokenizer.json. */
export interface AddedTokenJson {
  id: number;
  content: string;
  single_word: boolean;
  lstrip: boolean;
  rstrip: boolean;
  normalized: boolean;
  special: boolean;
}

/** The tokenizer.json transformers builds (plain JSON data, as `JSON.parse` of the file gives). */
export interface ConvertedTokenizerJson {
  version: "1.0";
  truncation: null;
  padding: null;
  added_tokens: AddedTokenJson[];
  normalizer: Record<string, unknown> | null;
  pre_tokenizer: Record<string, unknown> | null;
  post_processor: null;
  decoder: Record<string, unknown>;
  model: Record<string, unknown>;
}

const SPACE_SYMBOL = "\u2581";

export function sentencePieceToTokenizerJson(model: SentencePieceModelData, target: SpmConversionTarget): ConvertedTokenizerJson {
  const bpe = target.kind === "llama" || model.trainer.modelType === "bpe";
  if (target.kind === "llama" && model.trainer.modelType !== "bpe") {
    throw new DeltatokError(
      "DT_TOKENIZER_UNSUPPORTED",
      "converting a SentencePiece UNIGRAM model as LlamaTokenizer is not supported (transformers builds BPE merges from its vocabulary)",
    );
  }
  // {piece: id} as Python builds it: first position, last id.
  const vocab = new Map<string, number>();
  model.pieces.forEach((piece, id) => vocab.set(piece, id));

  let modelJson: Record<string, unknown>;
  if (bpe) {
    modelJson = {
      type: "BPE",
      dropout: null,
      unk_token: target.kind === "llama" ? null : model.trainer.unkPiece,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: true,
      byte_fallback: target.kind === "llama" ? true : model.trainer.byteFallback,
      ignore_merges: false,
      vocab: Object.fromEntries([...vocab].sort((a, b) => a[1] - b[1])),
      merges: generateMerges(vocab),
    };
  } else {
    modelJson = {
      type: "Unigram",
      unk_id: model.trainer.unkId,
      vocab: model.pieces.map((piece, id) => [piece, model.scores[id] as number]),
      byte_fallback: model.trainer.byteFallback,
    };
  }

  let normalizer: Record<string, unknown> | null;
  let preTokenizer: Record<string, unknown> | null;
  let decoder: Record<string, unknown>;
  if (target.kind === "llama") {
    const addPrefixSpace = target.addPrefixSpace ?? true;
    normalizer = null;
    preTokenizer = {
      type: "Metaspace",
      replacement: SPACE_SYMBOL,
      prepend_scheme: addPrefixSpace ? (target.legacy ? "always" : "first") : "never",
      split: false,
    };
    const steps: Array<Record<string, unknown>> = [
      { type: "Replace", pattern: { String: SPACE_SYMBOL }, content: " " },
      { type: "ByteFallback" },
      { type: "Fuse" },
    ];
    if (addPrefixSpace) steps.push({ type: "Strip", content: " ", start: 1, stop: 0 });
    decoder = { type: "Sequence", decoders: steps };
  } else {
    const normalizers: Array<Record<string, unknown>> = [];
    if (model.normalizer.precompiledCharsmap.length > 0) {
      normalizers.push({ type: "Precompiled", precompiled_charsmap: Buffer.from(model.normalizer.precompiledCharsmap).toString("base64") });
    }
    normalizers.push({ type: "Replace", pattern: { String: " " }, content: SPACE_SYMBOL });
    normalizer = { type: "Sequence", normalizers };
    preTokenizer = null;
    const steps: Array<Record<string, unknown>> = [{ type: "Replace", pattern: { String: SPACE_SYMBOL }, content: " " }];
    if (model.trainer.byteFallback) steps.push({ type: "ByteFallback" }, { type: "Fuse" });
    decoder = { type: "Sequence", decoders: steps };
  }

  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: addedTokens(model, target, vocab),
    normalizer,
    pre_tokenizer: preTokenizer,
    post_processor: null,
    decoder,
    model: modelJson,
  };
}

/**
 * transformers' `generate_merges(vocab)`: for each piece in vocabulary order, its splits into two
 * pieces (Python string slicing: by code point) ordered by the parts' ids; then all of them
 * ordered (stably) by the merged piece's id, the left part's length and the right part's length.
 */
export function generateMerges(vocab: ReadonlyMap<string, number>): Array<[string, string]> {
  const merges: Array<{ left: string; right: string; id: number; leftLength: number; rightLength: number }> = [];
  for (const [merge, id] of vocab) {
    const chars = Array.from(merge);
    const local: Array<{ left: string; right: string; id: number; leftLength: number; rightLength: number }> = [];
    for (let i = 1; i < chars.length; i++) {
      const left = chars.slice(0, i).join("");
      const right = chars.slice(i).join("");
      if (vocab.has(left) && vocab.has(right)) local.push({ left, right, id, leftLength: i, rightLength: chars.length - i });
    }
    local.sort((a, b) => (vocab.get(a.left) as number) - (vocab.get(b.left) as number) || (vocab.get(a.right) as number) - (vocab.get(b.right) as number));
    merges.push(...local);
  }
  merges.sort((a, b) => a.id - b.id || a.leftLength - b.leftLength || a.rightLength - b.rightLength);
  return merges.map((m) => [m.left, m.right]);
}

function addedTokens(model: SentencePieceModelData, target: SpmConversionTarget, vocab: ReadonlyMap<string, number>): AddedTokenJson[] {
  const out = new Map<string, AddedTokenJson>();
  let next = model.pieces.length;
  const add = (content: string, special: boolean): void => {
    if (out.has(content)) return;
    const id = vocab.get(content) ?? next++;
    out.set(content, { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special });
  };
  const t = model.trainer;
  if (target.kind === "llama") {
    add("<unk>", true);
    add("<s>", true);
    add("</s>", true);
  } else {
    if (t.unkId >= 0) add(t.unkPiece, true);
    if (t.bosId >= 0) add(t.bosPiece, true);
    if (t.eosId >= 0) add(t.eosPiece, true);
  }
  model.pieces.forEach((piece, id) => {
    const type = model.types[id];
    if (type === PIECE_CONTROL) add(piece, true);
    else if (type === PIECE_USER_DEFINED) add(piece, false);
  });
  return [...out.values()].sort((a, b) => a.id - b.id);
}
