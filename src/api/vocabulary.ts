/**
 * The tokenizer outside chat templates, as transformers' fast tokenizers answer it: decode,
 * id ↔ token conversion, the special tokens a plain `encode` adds, and the metadata
 * (`vocab_size`, `len`, special tokens and their ids, `model_max_length`, ...).
 *
 * - `decode(ids, skip_special_tokens, clean_up_tokenization_spaces)`: Rust `Tokenizer.decode`
 *   (ids the vocabulary does not hold are dropped, `skip_special_tokens` drops added tokens
 *   marked special), then transformers' `clean_up_tokenization` when asked or when
 *   tokenizer_config.json says so (transformers' default is false).
 * - A plain encode with `add_special_tokens` wraps the ids as the tokenizer.json post-processor
 *   does for one sequence (TemplateProcessing, Bert/Roberta, Sequence); transformers' Llama and
 *   Gemma tokenizer classes replace that processor by one built from `add_bos_token` /
 *   `add_eos_token` of tokenizer_config.json, and so does this for those classes.
 */
import { DeltatokError } from "../errors.js";
import type { LoadedTokenizer } from "../load/types.js";

/** What transformers exposes about a tokenizer (the Python client's attributes). */
export interface TokenizerInfo {
  /** The tokenizer as asked for (name, directory, file or model id). */
  name_or_path: string;
  /** Tokens of the model's vocabulary, added tokens not counted (transformers' `vocab_size`). */
  vocab_size: number;
  /** Every token id, added tokens included (transformers' `len(tokenizer)`). */
  length: number;
  /** `model_max_length` of tokenizer_config.json (transformers' default: 1e30). */
  model_max_length: number;
  padding_side: string;
  truncation_side: string;
  clean_up_tokenization_spaces: boolean;
  /** The special-token variables (`bos_token`, `eos_token`, ..., `additional_special_tokens`). */
  special_tokens_map: Record<string, string | string[]>;
  /** Ids of the named special tokens (null when the token is not in the vocabulary). */
  special_token_ids: Record<string, number | null>;
  /** Ids of the added tokens marked special, ascending. */
  all_special_ids: number[];
  /** Every added token by id: content and flags. */
  added_tokens_decoder: Record<string, { content: string; special: boolean; lstrip: boolean; rstrip: boolean; normalized: boolean; single_word: boolean }>;
  /** Ids a plain encode with add_special_tokens puts before and after the text. */
  special_ids_around: { before: number[]; after: number[]; source: string };
  /** Names of the chat templates ("default", "tool_use", ...). */
  chat_templates: string[];
  /** The chat templates' sources by name (transformers' `tokenizer.chat_template`). */
  chat_template_sources: Record<string, string>;
  /**
   * What `__call__` returns: tokenizer_config.json's `model_input_names`, else transformers'
   * default for the class (the generic PreTrainedTokenizerFast adds token_type_ids).
   */
  model_input_names: string[];
  /** tokenizer_config.json's `tokenizer_class`, when given. */
  tokenizer_class: string | null;
  /** tokenizer.json's model type (`BPE`, `Unigram`, `WordPiece`, `WordLevel`): transformers 5 skips the decode cleanup on BPE. */
  model_type: string;
}

export interface DecodeOptions {
  /** Drop added tokens marked special. @defaultValue false */
  skip_special_tokens?: boolean;
  /** Apply transformers' clean_up_tokenization. @defaultValue tokenizer_config.json's, else false */
  clean_up_tokenization_spaces?: boolean | null;
}

const VERY_LARGE_INTEGER = 1e30;
const FLAG_CLASSES = new Set(["LlamaTokenizer", "LlamaTokenizerFast", "CodeLlamaTokenizer", "CodeLlamaTokenizerFast", "GemmaTokenizer", "GemmaTokenizerFast"]);

/** transformers' clean_up_tokenization: spaces before punctuation and English contractions. */
export function cleanUpTokenization(s: string): string {
  const pairs: Array<[string, string]> = [
    [" .", "."],
    [" ?", "?"],
    [" !", "!"],
    [" ,", ","],
    [" ' ", "'"],
    [" n't", "n't"],
    [" 'm", "'m"],
    [" 's", "'s"],
    [" 've", "'ve"],
    [" 're", "'re"],
  ];
  for (const [a, b] of pairs) s = s.split(a).join(b);
  return s;
}

type Json = Record<string, unknown>;

export class Vocabulary {
  readonly #loaded: LoadedTokenizer;
  /** Token by id (model vocabulary, then added tokens over it); undefined where no token has the id. */
  readonly #tokens: Array<string | undefined>;
  readonly #ids: Map<string, number>;
  readonly #special: Set<number>;
  readonly #vocabSize: number;
  readonly #around: { before: number[]; after: number[]; source: string } | DeltatokError;

  constructor(loaded: LoadedTokenizer) {
    this.#loaded = loaded;
    const model = loaded.tokenizerJson.model as Json;
    const tokens: Array<string | undefined> = [];
    const ids = new Map<string, number>();
    let size = 0;
    const vocab = model.vocab;
    if (Array.isArray(vocab)) {
      // Unigram: [piece, score] pairs, id = position
      vocab.forEach((entry, i) => {
        const piece = Array.isArray(entry) ? entry[0] : entry;
        if (typeof piece === "string") {
          tokens[i] = piece;
          if (!ids.has(piece)) ids.set(piece, i);
        }
      });
      size = vocab.length;
    } else if (vocab !== null && typeof vocab === "object") {
      for (const [t, id] of Object.entries(vocab as Record<string, unknown>)) {
        if (typeof id !== "number") continue;
        tokens[id] = t;
        ids.set(t, id);
        size++;
      }
    }
    this.#vocabSize = size;
    this.#special = new Set();
    for (const a of loaded.tokenizerJson.added_tokens) {
      tokens[a.id] = a.content;
      ids.set(a.content, a.id);
      if (a.special) this.#special.add(a.id);
    }
    this.#tokens = tokens;
    this.#ids = ids;
    let around: { before: number[]; after: number[]; source: string } | DeltatokError;
    try {
      around = this.#specialsAround();
    } catch (e) {
      around = e instanceof DeltatokError ? e : new DeltatokError("DT_TOKENIZER_INVALID", String(e));
    }
    this.#around = around;
  }

  /** Token of each id (null for an id no token has), as `convert_ids_to_tokens`. */
  idsToTokens(ids: readonly number[], skipSpecialTokens = false): Array<string | null> {
    const out: Array<string | null> = [];
    for (let i = 0; i < ids.length; i++) {
      const id = checkId(ids[i], i);
      if (skipSpecialTokens && this.#special.has(id)) continue;
      out.push(this.#tokens[id] ?? null);
    }
    return out;
  }

  /** Id of each token, null for a token not in the vocabulary (transformers answers unk_token_id). */
  tokensToIds(tokens: readonly string[]): Array<number | null> {
    return tokens.map((t, i) => {
      if (typeof t !== "string") throw new DeltatokError("DT_INVALID_REQUEST", `tokens[${i}] must be a string`, { path: `tokens[${i}]` });
      return this.#ids.get(t) ?? null;
    });
  }

  /** Every token by id, null where no token has the id (the list behind `get_vocab`). */
  tokenList(): Array<string | null> {
    return Array.from({ length: this.#tokens.length }, (_, i) => this.#tokens[i] ?? null);
  }

  /** Text of token ids, as transformers' `decode`. */
  decode(ids: readonly number[], o: DecodeOptions = {}): string {
    const kept: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const id = checkId(ids[i], i);
      if (this.#tokens[id] === undefined) continue; // Rust drops ids it has no token for
      if (o.skip_special_tokens === true && this.#special.has(id)) continue;
      kept.push(id);
    }
    let text = "";
    if (kept.length > 0) {
      try {
        text = this.#loaded.tokenizer.decode(kept);
      } catch (e) {
        throw new DeltatokError("DT_TOKENIZE_FAILED", `decode failed: ${(e as Error)?.message ?? e}`, { cause: e });
      }
    }
    const cleanUp = o.clean_up_tokenization_spaces ?? (this.#loaded.config.clean_up_tokenization_spaces === true);
    return cleanUp ? cleanUpTokenization(text) : text;
  }

  /** `ids` wrapped in the special tokens a plain encode with add_special_tokens adds. */
  withSpecialTokens(ids: readonly number[]): number[] {
    if (this.#around instanceof DeltatokError) throw this.#around;
    const { before, after } = this.#around;
    return before.length === 0 && after.length === 0 ? ids.slice() : [...before, ...ids, ...after];
  }

  info(): TokenizerInfo {
    const l = this.#loaded;
    const c = l.config;
    const names: Record<string, number | null> = {};
    for (const [k, v] of Object.entries(l.specialTokens)) if (typeof v === "string") names[k] = this.#ids.get(v) ?? null;
    const added: TokenizerInfo["added_tokens_decoder"] = {};
    for (const a of l.tokenizerJson.added_tokens) {
      added[String(a.id)] = { content: a.content, special: a.special, lstrip: a.lstrip, rstrip: a.rstrip, normalized: a.normalized, single_word: a.single_word };
    }
    const str = (v: unknown, d: string) => (typeof v === "string" ? v : d);
    const uniq = new Set<string>(this.#ids.keys());
    return {
      name_or_path: l.spec,
      vocab_size: this.#vocabSize,
      length: uniq.size,
      model_max_length: typeof c.model_max_length === "number" ? c.model_max_length : VERY_LARGE_INTEGER,
      padding_side: str(c.padding_side, "right"),
      truncation_side: str(c.truncation_side, "right"),
      clean_up_tokenization_spaces: c.clean_up_tokenization_spaces === true,
      special_tokens_map: { ...l.specialTokens } as Record<string, string | string[]>,
      special_token_ids: names,
      all_special_ids: [...this.#special].sort((a, b) => a - b),
      added_tokens_decoder: added,
      special_ids_around:
        this.#around instanceof DeltatokError
          ? { before: [], after: [], source: `unsupported: ${this.#around.message}` }
          : { before: [...this.#around.before], after: [...this.#around.after], source: this.#around.source },
      chat_templates: [...l.templates.keys()],
      chat_template_sources: Object.fromEntries(l.templates),
      model_input_names:
        Array.isArray(c.model_input_names) && c.model_input_names.every((x) => typeof x === "string")
          ? [...(c.model_input_names as string[])]
          : c.tokenizer_class === "PreTrainedTokenizerFast" || c.tokenizer_class === "PreTrainedTokenizer"
            ? ["input_ids", "token_type_ids", "attention_mask"]
            : ["input_ids", "attention_mask"],
      tokenizer_class: typeof c.tokenizer_class === "string" ? c.tokenizer_class : null,
      model_type: l.tokenizerJson.model.type,
    };
  }

  #specialsAround(): { before: number[]; after: number[]; source: string } {
    const c = this.#loaded.config;
    const cls = typeof c.tokenizer_class === "string" ? c.tokenizer_class : "";
    if (FLAG_CLASSES.has(cls) && (typeof c.add_bos_token === "boolean" || typeof c.add_eos_token === "boolean")) {
      // transformers' Llama/Gemma classes rebuild the post-processor from these flags
      const bos = this.#loaded.specialTokens.bos_token;
      const eos = this.#loaded.specialTokens.eos_token;
      const before: number[] = [];
      const after: number[] = [];
      if (c.add_bos_token !== false && typeof bos === "string" && this.#ids.has(bos)) before.push(this.#ids.get(bos) as number);
      if (c.add_eos_token === true && typeof eos === "string" && this.#ids.has(eos)) after.push(this.#ids.get(eos) as number);
      return { before, after, source: `${cls}: add_bos_token / add_eos_token` };
    }
    const r = processorAround(this.#loaded.tokenizerJson.post_processor as Json | null);
    return { ...r, source: "tokenizer.json post_processor" };
  }
}

function checkId(v: unknown, i: number): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > 0xffffffff) {
    throw new DeltatokError("DT_INVALID_REQUEST", `ids[${i}] must be a token id (an integer ≥ 0), got ${String(v)}`, { path: `ids[${i}]` });
  }
  return v;
}

/** The ids a post-processor puts around one sequence. */
function processorAround(p: Json | null): { before: number[]; after: number[] } {
  if (p === null || p === undefined) return { before: [], after: [] };
  switch (p.type) {
    case "ByteLevel":
      return { before: [], after: [] };
    case "TemplateProcessing": {
      const specials = (p.special_tokens ?? {}) as Record<string, { ids?: number[] }>;
      const before: number[] = [];
      const after: number[] = [];
      let seen = false;
      for (const piece of (p.single ?? []) as Json[]) {
        if ("Sequence" in piece) {
          seen = true;
          continue;
        }
        const name = (piece.SpecialToken as { id?: string } | undefined)?.id;
        const ids = name === undefined ? undefined : specials[name]?.ids;
        if (ids === undefined) throw new DeltatokError("DT_TOKENIZER_INVALID", `post_processor names special token ${String(name)} without ids`);
        (seen ? after : before).push(...ids);
      }
      return { before, after };
    }
    case "BertProcessing":
    case "RobertaProcessing": {
      const cls = p.cls as [string, number];
      const sep = p.sep as [string, number];
      return { before: [cls[1]], after: [sep[1]] };
    }
    case "Sequence": {
      let before: number[] = [];
      let after: number[] = [];
      for (const q of (p.processors ?? []) as Json[]) {
        const r = processorAround(q);
        before = [...r.before, ...before];
        after = [...after, ...r.after];
      }
      return { before, after };
    }
    default:
      throw new DeltatokError("DT_TOKENIZER_INVALID", `add_special_tokens: post_processor type ${String(p.type)} is not supported`);
  }
}
