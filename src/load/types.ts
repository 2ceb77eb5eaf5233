/**
 * Public types of the loading layer.
 *
 * Layer: load.
 */

import type { Encoder } from "../encoder/types.js";

/** Options of {@link loadTokenizer}. */
export interface LoadOptions {
  /**
   * Chat template override: template source text. Wins over the tokenizer's own templates (they
   * are not offered at all then): the loaded tokenizer has exactly one template, `"default"`.
   * Must be a non-empty string. Mutually exclusive with `chatTemplateFile`.
   * @defaultValue undefined (use the tokenizer's templates)
   */
  chatTemplate?: string | undefined;
  /**
   * Chat template override read from a file: `.json` files hold `{"chat_template": ...}` like
   * HF's `chat_template.json` (a string, or a list of `{name, template}` for named templates);
   * any other file is template text (`.jinja`), read as UTF-8 with universal newlines like
   * Python's `open(path).read()`. Relative paths resolve against `process.cwd()`. Wins over the
   * tokenizer's own templates. Mutually exclusive with `chatTemplate`.
   * @defaultValue undefined
   */
  chatTemplateFile?: string | undefined;
  /**
   * The pre-tokenizer pattern of a tiktoken rank file (tiktoken's `pat_str`, a Rust regex): wins
   * over tokenizer_config.json, `tokenization_*.py` and the family table
   * (src/load/formats/README.md). Refused (DT_INVALID_OPTION) for any other tokenizer format.
   * @defaultValue undefined (the directory's own pattern)
   */
  pattern?: string | undefined;
  /**
   * The on-disk cache of built tokenizers (src/load/disk-cache.ts): a directory, or `"off"`.
   * A relative directory resolves against `process.cwd()`.
   * @defaultValue `DELTATOK_CACHE_DIR` (also `"off"`), else `$XDG_CACHE_HOME/deltatok`, else `~/.cache/deltatok`
   */
  cacheDir?: string | undefined;
  /**
   * Bound of the disk cache's entries, in bytes: past it, least recently used entries are removed
   * after a write; an entry larger than it is neither written nor read.
   * @defaultValue 1 GiB (DEFAULT_CACHE_MAX_BYTES)
   */
  cacheMaxBytes?: number | undefined;
  /**
   * Environment for the hub-cache lookup of `org/name` model ids: `HF_HUB_CACHE` (legacy alias
   * `HUGGINGFACE_HUB_CACHE`), `HF_HOME`, `XDG_CACHE_HOME`, `HOME`.
   * @defaultValue process.env
   */
  env?: Readonly<Record<string, string | undefined>> | undefined;
}

/** How a spec was resolved. */
export type TokenizerOrigin = "bundled" | "directory" | "file" | "hub-cache" | "encoding";

/** Any JSON value, read-only. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

/**
 * One tokenizer.json `added_tokens` entry. Flags missing from the file are filled with the
 * defaults @huggingface/tokenizers applies (`false`, and `normalized = !special`), so this view
 * and the runtime tokenizer always agree.
 */
export interface AddedTokenJson {
  readonly id: number;
  readonly content: string;
  readonly special: boolean;
  readonly lstrip: boolean;
  readonly rstrip: boolean;
  readonly single_word: boolean;
  readonly normalized: boolean;
}

/** A pipeline component of tokenizer.json (normalizer, pre-tokenizer, ...): `type` plus its settings. */
export interface TokenizerComponentJson {
  readonly type: string;
  readonly [key: string]: JsonValue;
}

/**
 * The tokenization model of tokenizer.json. `type` is always set: when the file leaves it out,
 * it is inferred the way the Rust `tokenizers` crate does (merges → BPE, vocab list → Unigram,
 * `continuing_subword_prefix` → WordPiece, else WordLevel).
 */
export interface TokenizerModelJson {
  readonly type: string;
  readonly [key: string]: JsonValue;
}

/** Parsed tokenizer.json, typed where deltatok reads it. */
export interface TokenizerJson {
  readonly version?: string | undefined;
  readonly truncation?: JsonValue | undefined;
  readonly padding?: JsonValue | undefined;
  readonly added_tokens: readonly AddedTokenJson[];
  readonly normalizer: TokenizerComponentJson | null;
  readonly pre_tokenizer: TokenizerComponentJson | null;
  readonly post_processor: TokenizerComponentJson | null;
  readonly decoder: TokenizerComponentJson | null;
  readonly model: TokenizerModelJson;
}

/** How the patterns of a loaded tokenizer run. */
export interface PatternReport {
  /**
   * True when every pattern-driven component runs with the Rust crate's semantics (deltatok's
   * encoder: a scanner or the Oniguruma translation); false on the library fallback, whose ids
   * may differ on some texts (see `notes`).
   */
  readonly exact: boolean;
  /** One line per pattern-driven component: where it is, and what runs it. */
  readonly notes: readonly string[];
}

/** A loaded tokenizer with everything a render needs. Frozen; shared by every load of the same files. */
export interface LoadedTokenizer {
  /** What the user asked for ("qwen3", a directory, or an org/name model id). */
  readonly spec: string;
  /** How `spec` was resolved. */
  readonly origin: TokenizerOrigin;
  /** Where files came from (absolute directory). */
  readonly dir: string;
  /**
   * Stable identity of the tokenizer: xxhash64 (seed 0, 16 lowercase hex digits) of the
   * tokenizer.json bytes, one 0x00 byte, then the tokenizer_config.json bytes (nothing when the
   * file is absent). A NUL never occurs in valid JSON, so the split is unambiguous. Two loads of
   * the same files give the same id. Templates and special_tokens_map.json are not part of it.
   * A directory without tokenizer.json hashes the file its tokenizer was read from (rank file,
   * tekken.json, tokenizer.model) in its place, then 0x00 and the `pattern` option when given.
   */
  readonly id: string;
  /** The encoder: deltatok's own, or the library fallback (`tokenizer.engine`). */
  readonly tokenizer: Encoder;
  /** Parsed tokenizer.json (the object the tokenizer was built from). */
  readonly tokenizerJson: TokenizerJson;
  /**
   * Whether every pattern of the pipeline runs with the Rust crate's semantics, and what runs
   * each (a note per component). `exact` is false only on the library fallback, announced by a
   * `DELTATOK_TOKENIZER_FALLBACK` warning at load.
   */
  readonly patterns: PatternReport;
  /** Parsed tokenizer_config.json (`{}` when the directory has none). */
  readonly config: Readonly<Record<string, unknown>>;
  /**
   * The special-token variables `apply_chat_template` passes to the template
   * (transformers 4.4x/4.5x `special_tokens_map`): `bos_token`, `eos_token`, `unk_token`,
   * `sep_token`, `pad_token`, `cls_token`, `mask_token` as strings (AddedToken dicts → their
   * `content`; null, absent or empty → omitted), `additional_special_tokens` as a string list when
   * non-empty, then the named entries of a dict-valued `extra_special_tokens` (e.g. Gemma 3's
   * `boi_token`), which transformers adds to the same map.
   */
  readonly specialTokens: Readonly<Record<string, string | string[]>>;
  /** Named chat templates: "default" and others (e.g. "tool_use"). Empty when the tokenizer ships none. */
  readonly templates: ReadonlyMap<string, string>;
  /** Where each template came from (file path, `<file>#chat_template[1]`, `options.chatTemplate`). */
  readonly templateSources: ReadonlyMap<string, string>;
}

/** What {@link selectTemplate} is asked for. */
export interface TemplateRequest {
  /**
   * A template name (a key of `templates`) or template source text. When it is neither a known
   * name nor looks like template source (a bare word such as `tool_use`), selection fails with
   * DT_TEMPLATE_NOT_FOUND instead of rendering the word as a template.
   */
  chatTemplate?: string | undefined;
  /**
   * Whether tools were passed at all. transformers tests `tools is not None`, so an empty list
   * counts as tools given.
   */
  hasTools: boolean;
}
