/**
 * A tokenizer read from another format (tiktoken ranks, tekken.json, a SentencePiece model) as
 * deltatok's encoder runs it: the tokenizer.json it stands for, plus — for rank-based formats —
 * the vocabulary and merges as a BPE source built straight from the ranks (no merge list is
 * written out). The rest of deltatok (segmented encoding, streaming cut rules, offsets, worker
 * tables) then reads it as it reads any tokenizer.json.
 *
 * - tiktoken: BPE over the ranks with `ignore_merges` (tiktoken answers a piece that is itself a
 *   token with that token), every pair of tokens whose bytes join into a token a merge ranked by
 *   the joined token's rank (tiktoken's `_byte_pair_merge`: the lowest rank, the leftmost on
 *   ties; pairs that make the same token share its rank), the pattern a Split in tiktoken's
 *   dialect (`extensions.patternFlavor`), then a ByteLevel mapping without its own split. Special
 *   tokens are added tokens matched on the raw text (tiktoken's `allowed_special="all"`). Kimi:
 *   the `added_tokens_decoder` entries are raw added tokens (transformers' slow path splits at
 *   them first), the other reserved names are matched after an empty normalizer, inside Kimi's
 *   cuts (`extensions.sectionCuts`), as Kimi's `encode` matches them inside each piece.
 * - tekken: the same over the vocabulary kept, token id = rank + the special slots; the special
 *   tokens are never matched in text (mistral-common encodes text with no special tokens) but
 *   decode and look up (`extensions.unmatchedTokens`).
 * - SentencePiece: transformers 5's conversion (spm-to-tokenizer-json.ts), chosen from
 *   tokenizer_config.json's `tokenizer_class` (LlamaTokenizer / LlamaTokenizerFast: `llama`
 *   with `legacy` and `add_prefix_space`; anything else: `generic`).
 *
 * Layer: load.
 */

import type { AddedTokenDef } from "../../encoder/added-vocabulary.js";
import type { EncoderExtensions } from "../../encoder/build.js";
import { CHAR_OF_BYTE } from "../../encoder/model/byte-alphabet.js";
import { hashBytes, type BpeSource } from "../../encoder/model/bpe-tables.js";
import { U32List } from "../../encoder/u32-list.js";
import { DeltatokError } from "../../errors.js";
import type { FormatTokenizer, TiktokenDirectory } from "./directory.js";
import { sentencePieceToTokenizerJson, type SpmConversionTarget } from "./spm-to-tokenizer-json.js";
import type { TekkenModel } from "./tekken.js";
import type { TiktokenRanks } from "./tiktoken-ranks.js";

/** A tokenizer.json-shaped object for a format, and where its vocabulary comes from. */
export interface FormatEncoderJson {
  /** tokenizer.json's fields (without `model.vocab` / `model.merges` when `source` is set). */
  readonly json: Record<string, unknown> & { readonly extensions?: EncoderExtensions };
  /** The vocabulary and merges, or null when `json.model` carries them (SentencePiece). */
  readonly source: BpeSource | null;
  /** One line saying what was read and how it runs, for stats and summaries. */
  readonly description: string;
}

/** tiktoken's rank dialect: the pattern as a Split, then the byte mapping alone. */
function tiktokenPreTokenizer(pattern: string): Record<string, unknown> {
  return {
    type: "Sequence",
    pretokenizers: [
      { type: "Split", pattern: { Regex: pattern }, behavior: "Isolated", invert: false },
      { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false },
    ],
  };
}

const BYTE_LEVEL_DECODER = { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true };

function rankModel(): Record<string, unknown> {
  return {
    type: "BPE",
    dropout: null,
    unk_token: null,
    continuing_subword_prefix: null,
    end_of_word_suffix: null,
    fuse_unk: false,
    byte_fallback: false,
    ignore_merges: true,
  };
}

function added(id: number, content: string, normalized: boolean): AddedTokenDef & { single_word: boolean; lstrip: boolean; rstrip: boolean; normalized: boolean; special: boolean } {
  return { id, content, single_word: false, lstrip: false, rstrip: false, normalized, special: true };
}

/**
 * The BPE source of a rank vocabulary: token i spelled in GPT-2's byte alphabet (one character per
 * byte) with id `rank + idOffset`; a merge for every split of a token into two tokens, ranked by
 * the token's rank.
 */
export function rankBpeSource(ranks: TiktokenRanks, idOffset: number): BpeSource {
  const spelled: string[] = new Array(ranks.size);
  const vocab = new Map<string, number>();
  const units = new Uint16Array(ranks.bytes.length);
  for (let k = 0; k < units.length; k++) units[k] = CHAR_OF_BYTE[ranks.bytes[k] as number] as number;
  const utf16 = new TextDecoder("utf-16le");
  for (let i = 0; i < ranks.size; i++) {
    const s = utf16.decode(units.subarray(ranks.offsets[i] as number, ranks.offsets[i + 1] as number));
    spelled[i] = s;
    vocab.set(s, (ranks.ranks[i] as number) + idOffset);
  }
  // Every split of a token into two tokens, found by bytes: (left entry, right entry, entry).
  const { bytes, offsets } = ranks;
  let cap = 16;
  while (cap < ranks.size * 2) cap *= 2;
  const mask = cap - 1;
  const slots = new Int32Array(cap).fill(-1);
  for (let i = 0; i < ranks.size; i++) {
    let slot = hashBytes(bytes, offsets[i] as number, offsets[i + 1] as number) & mask;
    while (slots[slot] !== -1) slot = (slot + 1) & mask;
    slots[slot] = i; // the reader refused duplicate tokens
  }
  const find = (s: number, e: number): number => {
    for (let slot = hashBytes(bytes, s, e) & mask; ; slot = (slot + 1) & mask) {
      const i = slots[slot] as number;
      if (i < 0) return -1;
      const os = offsets[i] as number;
      if ((offsets[i + 1] as number) - os !== e - s) continue;
      let k = 0;
      while (k < e - s && bytes[os + k] === bytes[s + k]) k++;
      if (k === e - s) return i;
    }
  };
  const merges = new U32List(ranks.size * 6);
  for (let i = 0; i < ranks.size; i++) {
    const s = offsets[i] as number;
    const e = offsets[i + 1] as number;
    for (let k = s + 1; k < e; k++) {
      const a = find(s, k);
      if (a < 0) continue;
      const b = find(k, e);
      if (b < 0) continue;
      merges.push(a);
      merges.push(b);
      merges.push(i);
    }
  }
  const r = ranks.ranks;
  return {
    vocab,
    mergeCount: merges.length / 3,
    forEachMerge(f) {
      const d = merges.data;
      for (let j = 0; j < merges.length; j += 3) f(spelled[d[j] as number] as string, spelled[d[j + 1] as number] as string, r[d[j + 2] as number] as number);
    },
    forEachMergeIds(f) {
      const d = merges.data;
      for (let j = 0; j < merges.length; j += 3) {
        const i = d[j + 2] as number;
        f((r[d[j] as number] as number) + idOffset, (r[d[j + 1] as number] as number) + idOffset, r[i] as number, (r[i] as number) + idOffset);
      }
    },
    byteLevel: true,
    continuingSubwordPrefix: null,
    mergeFormat: "pairs",
  };
}

function tiktokenJson(t: TiktokenDirectory, addedDecoder: ReadonlyMap<number, string> | null): FormatEncoderJson {
  const kimi = t.kimiChunks;
  // Kimi: transformers' slow path splits at the added tokens of added_tokens_decoder first; the
  // other reserved names are tiktoken specials, matched inside each of Kimi's pieces.
  const raw = (id: number, text: string): boolean => !kimi || addedDecoder?.get(id) === text;
  const tokens = t.specialTokens.map((s) => added(s.id, s.text, !raw(s.id, s.text)));
  const extensions: EncoderExtensions = kimi ? { patternFlavor: "rust-regex", sectionCuts: "kimi" } : { patternFlavor: "rust-regex" };
  const family = t.family === null ? "no known family" : `${t.family.family.name} family (${t.family.reason})`;
  return {
    json: {
      version: "1.0",
      truncation: null,
      padding: null,
      added_tokens: tokens,
      normalizer: tokens.some((x) => x.normalized) ? { type: "Sequence", normalizers: [] } : null,
      pre_tokenizer: tiktokenPreTokenizer(t.pattern.pattern),
      post_processor: null,
      decoder: BYTE_LEVEL_DECODER,
      model: rankModel(),
      extensions,
    },
    source: rankBpeSource(t.ranks, 0),
    description: `tiktoken rank file, ${family}, pattern from ${t.pattern.source}`,
  };
}

function tekkenJson(m: TekkenModel): FormatEncoderJson {
  const unmatched = m.specialTokens.map((s) => added(s.id, s.text, false));
  return {
    json: {
      version: "1.0",
      truncation: null,
      padding: null,
      added_tokens: [],
      normalizer: null,
      pre_tokenizer: tiktokenPreTokenizer(m.pattern),
      post_processor: null,
      decoder: BYTE_LEVEL_DECODER,
      model: rankModel(),
      extensions: { patternFlavor: "rust-regex", unmatchedTokens: unmatched },
    },
    source: rankBpeSource(m.ranks, m.numSpecialTokens),
    description: `tekken.json ${m.version} (${m.numSpecialTokens} special slots, never matched in text)`,
  };
}

/** The conversion transformers 5 applies, from tokenizer_config.json. */
export function spmTarget(config: Readonly<Record<string, unknown>>): SpmConversionTarget {
  const cls = config["tokenizer_class"];
  if (cls === "LlamaTokenizer" || cls === "LlamaTokenizerFast") {
    const legacy = config["legacy"];
    const prefix = config["add_prefix_space"];
    return { kind: "llama", legacy: legacy === true, ...(typeof prefix === "boolean" ? { addPrefixSpace: prefix } : {}) };
  }
  return { kind: "generic" };
}

/** The tokenizer.json a format stands for. `config` is tokenizer_config.json (`{}` when absent). */
export function formatEncoderJson(f: Exclude<FormatTokenizer, { format: "tokenizer.json" }>, config: Readonly<Record<string, unknown>>, addedDecoder: ReadonlyMap<number, string> | null): FormatEncoderJson {
  switch (f.format) {
    case "tiktoken":
      return tiktokenJson(f, addedDecoder);
    case "tekken":
      return tekkenJson(f.model);
    case "sentencepiece": {
      const target = spmTarget(config);
      const json: Record<string, unknown> & { extensions?: EncoderExtensions } = sentencePieceToTokenizerJson(f.model, target) as unknown as Record<string, unknown>;
      // transformers hands the model's float32 scores to the crate in memory, never through JSON
      if (f.model.trainer.modelType === "unigram") json.extensions = { unigramScores: "exact" };
      const how = target.kind === "llama" ? `LlamaTokenizer, legacy ${target.legacy}` : "TokenizersBackend";
      return { json, source: null, description: `SentencePiece ${f.model.trainer.modelType} model, as transformers 5 converts it (${how})` };
    }
    default:
      throw new DeltatokError("DT_INTERNAL", `no encoder for format ${String((f as { format: unknown }).format)}`);
  }
}
