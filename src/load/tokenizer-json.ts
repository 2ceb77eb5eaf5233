/**
 * Checking a parsed tokenizer.json and building its encoder.
 *
 * Layer: load.
 */

import { buildEncoder, EncoderBuildError, type EncoderBuild, type EncoderJson, type SharedEncoder } from "../encoder/build.js";
import { scannerFor } from "../encoder/pretokenize/index.js";
import type { Encoder } from "../encoder/types.js";
import { DeltatokError } from "../errors.js";
import { libraryEncoder } from "./fallback.js";
import type { AddedTokenJson, TokenizerComponentJson, TokenizerJson, TokenizerModelJson } from "./types.js";

/** Model types the runtime tokenizer implements (WordLevel through its vocabulary-lookup model). */
const SUPPORTED_MODELS = new Set(["BPE", "WordPiece", "Unigram", "WordLevel"]);
const COMPONENTS = ["normalizer", "pre_tokenizer", "post_processor", "decoder"] as const;

function invalid(file: string, message: string, field?: string): DeltatokError {
  return new DeltatokError("DT_TOKENIZER_INVALID", `${file}: ${message}`, field === undefined ? {} : { path: field });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** The model type the Rust `tokenizers` crate would infer for a model without `type`. */
function inferModelType(model: Record<string, unknown>): string {
  if ("merges" in model) return "BPE";
  if (Array.isArray(model["vocab"])) return "Unigram";
  if ("continuing_subword_prefix" in model || "max_input_chars_per_word" in model) return "WordPiece";
  return "WordLevel";
}

/** Largest token id: the Rust crate reads ids as u32. */
const MAX_ID = 0xffffffff;

/**
 * The fields the Rust crate requires of the model types deltatok's encoder hands to the library
 * fallback (WordPiece, WordLevel, Unigram from tokenizer.json): a model it would refuse to
 * deserialize is refused here, never run on a library that reads it more leniently.
 */
function checkFallbackModel(model: Record<string, unknown>, type: string, file: string): void {
  if (type === "Unigram") {
    const vocab = model["vocab"];
    if (!Array.isArray(vocab)) throw invalid(file, "model.vocab of a Unigram model must be a list of [piece, score]", "model.vocab");
    vocab.forEach((e: unknown, i) => {
      if (!Array.isArray(e) || e.length !== 2 || typeof e[0] !== "string" || typeof e[1] !== "number") {
        throw invalid(file, `model.vocab[${i}] of a Unigram model must be [piece, score]`, `model.vocab[${i}]`);
      }
    });
    const unk = model["unk_id"];
    if (unk !== undefined && unk !== null && (typeof unk !== "number" || !Number.isInteger(unk) || unk < 0 || unk >= vocab.length)) {
      throw invalid(file, `model.unk_id ${JSON.stringify(unk)} is not an index of model.vocab (0..${vocab.length - 1})`, "model.unk_id");
    }
    return;
  }
  if (type !== "WordPiece" && type !== "WordLevel") return;
  const vocab = model["vocab"];
  if (!isObject(vocab)) throw invalid(file, `model.vocab of a ${type} model must be an object of token → id`, "model.vocab");
  for (const [token, id] of Object.entries(vocab)) {
    if (typeof id !== "number" || !Number.isInteger(id) || id < 0 || id > MAX_ID) {
      throw invalid(file, `model.vocab[${JSON.stringify(token)}] must be a token id (an integer in 0..${MAX_ID}), got ${JSON.stringify(id)}`, "model.vocab");
    }
  }
  const str = (name: string): void => {
    if (typeof model[name] !== "string") throw invalid(file, `model.${name} of a ${type} model must be a string (the Rust crate requires it)`, `model.${name}`);
  };
  str("unk_token");
  if (type === "WordPiece") {
    str("continuing_subword_prefix");
    const m = model["max_input_chars_per_word"];
    if (typeof m !== "number" || !Number.isInteger(m) || m < 0) {
      throw invalid(file, "model.max_input_chars_per_word of a WordPiece model must be a non-negative integer", "model.max_input_chars_per_word");
    }
  }
}

function checkAddedToken(raw: unknown, i: number, file: string, strict: boolean): AddedTokenJson {
  const field = `added_tokens[${i}]`;
  if (!isObject(raw)) throw invalid(file, `${field} must be an object`, field);
  const { id, content } = raw;
  if (typeof id !== "number" || !Number.isInteger(id) || id < 0 || id > MAX_ID) {
    throw invalid(file, `${field}.id must be a token id (an integer in 0..${MAX_ID}), got ${String(id)}`, `${field}.id`);
  }
  if (typeof content !== "string" || (content === "" && !strict)) {
    throw invalid(file, `${field}.content must be a non-empty string`, `${field}.content`);
  }
  const flag = (name: string, dflt: boolean): boolean => {
    const v = raw[name];
    if ((v === undefined || v === null) && !strict) return dflt;
    if (typeof v !== "boolean") throw invalid(file, `${field}.${name} must be true or false${strict ? " (the Rust crate requires every flag)" : ""}`, `${field}.${name}`);
    return v;
  };
  const special = flag("special", false);
  const token: AddedTokenJson = {
    id,
    content,
    special,
    lstrip: flag("lstrip", false),
    rstrip: flag("rstrip", false),
    single_word: flag("single_word", false),
    normalized: flag("normalized", !special),
  };
  return token;
}

/** The top-level fields the Rust crate's deserializer knows; any other is refused there. */
const TOP_LEVEL = new Set(["version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer", "post_processor", "decoder", "model"]);

function checkTopLevel(parsed: Record<string, unknown>, file: string): void {
  for (const key of Object.keys(parsed)) {
    if (!TOP_LEVEL.has(key)) throw invalid(file, `unknown top-level field ${JSON.stringify(key)} (the Rust crate refuses it)`, key);
  }
  const version = parsed["version"];
  if (version !== undefined && version !== "1.0") throw invalid(file, `unknown tokenizer version ${JSON.stringify(version)} (the Rust crate reads "1.0")`, "version");
}

/** A model's own id of a token, as the Rust crate's models answer it. */
function modelTokenIds(model: Record<string, unknown>, type: string): (token: string) => number | undefined {
  const vocab = model["vocab"];
  if (type === "Unigram" && Array.isArray(vocab)) {
    let index: Map<string, number> | null = null;
    return (token) => {
      if (index === null) {
        index = new Map();
        for (let i = 0; i < vocab.length; i++) {
          const piece = (vocab[i] as unknown[])[0];
          if (typeof piece === "string" && !index.has(piece)) index.set(piece, i);
        }
      }
      return index.get(token);
    };
  }
  const map = isObject(vocab) ? vocab : {};
  return (token) => (Object.hasOwn(map, token) ? (map[token] as number) : undefined);
}

/** How a checked file's added-token ids were assigned: the vocabulary size used (null: none needed) and the ids that moved. */
const ADDED_IDS = new WeakMap<object, { size: number | null; moved: readonly string[] }>();

/**
 * The vocabulary size a checked tokenizer.json's added-token ids were assigned with, or null when
 * no added token needed it. Counting a large vocabulary object's keys costs more than the rest of
 * the check, so the size is first taken from the file (the id it writes for the first added token
 * outside the vocabulary, right for every file the crate wrote); the loader compares it with the
 * built model's size and checks the file again with that size when they differ.
 */
export function addedIdsVocabSize(json: TokenizerJson): number | null {
  return ADDED_IDS.get(json)?.size ?? null;
}

/** The DELTATOK_ADDED_TOKEN_ID warning for a checked file whose added-token ids moved (once its ids are final), or null. */
export function movedAddedIdsWarning(json: TokenizerJson, file: string): { readonly code: string; readonly message: string } | null {
  const moved = ADDED_IDS.get(json)?.moved ?? [];
  if (moved.length === 0) return null;
  return {
    code: "DELTATOK_ADDED_TOKEN_ID",
    message: `${file}: ${moved.length} added token(s) get another id than the file writes, as the Rust crate loads them: ${moved.slice(0, 3).join(", ")}${moved.length > 3 ? ", ..." : ""}`,
  };
}

/**
 * The added tokens as the Rust crate loads them: the `id` written in the file is not read. In
 * file order, a token whose content is already an added token or in the model's vocabulary takes
 * that id; any other takes the vocabulary size if no added id reaches it yet, else the largest
 * added id + 1. An empty content is skipped, and so is an exact repeat (same content and flags);
 * a later token given an id already taken replaces the earlier one. Files the crate wrote always
 * agree with this; where a file's ids differ, a DELTATOK_ADDED_TOKEN_ID warning says so (the
 * crate logs the same).
 */
function assignAddedIds(
  tokens: readonly AddedTokenJson[],
  model: Record<string, unknown>,
  type: string,
  vocabSize: number | undefined,
): { tokens: AddedTokenJson[]; size: number | null; moved: string[] } {
  const idOf = modelTokenIds(model, type);
  const byContent = new Map<string, number>();
  const byId = new Map<number, AddedTokenJson>();
  let size: number | null = vocabSize ?? null;
  let maxAdded = -1;
  const moved: string[] = [];
  for (const t of tokens) {
    if (t.content === "") continue;
    const same = byId.get(byContent.get(t.content) ?? -1);
    if (same !== undefined && same.content === t.content && same.special === t.special && same.lstrip === t.lstrip && same.rstrip === t.rstrip && same.single_word === t.single_word && same.normalized === t.normalized) continue;
    let id = byContent.get(t.content) ?? idOf(t.content);
    if (id === undefined) {
      size ??= t.id; // taken on trust from the file; the loader checks it (addedIdsVocabSize)
      id = maxAdded < 0 ? size : maxAdded >= size || size === 0 ? maxAdded + 1 : size;
    }
    if (id !== t.id) moved.push(`${JSON.stringify(t.content)} ${t.id} → ${id}`);
    byContent.set(t.content, id);
    maxAdded = Math.max(maxAdded, id);
    byId.set(id, id === t.id ? t : { ...t, id });
  }
  return { tokens: [...byId.values()], size, moved };
}

/**
 * Checks the parts of tokenizer.json deltatok relies on and returns the typed view: a new top-level
 * object whose `added_tokens` entries carry every flag and whose `model` carries its `type`
 * (vocabularies and merges are shared with `parsed`, not copied).
 *
 * A tokenizer.json read from a file (`source` "file") is held to what the Rust crate's
 * deserializer accepts — known top-level fields, version "1.0", every added-token flag present —
 * and its added tokens get the ids the crate gives them (assignAddedIds). A tokenizer.json deltatok
 * converted from another format ("converted") carries the ids its format defines.
 */
export function checkTokenizerJson(parsed: unknown, file: string, source: "file" | "converted" = "file", vocabSize?: number): TokenizerJson {
  if (!isObject(parsed)) throw invalid(file, "must hold a JSON object");
  const strict = source === "file";
  if (strict) checkTopLevel(parsed, file);
  const model = parsed["model"];
  if (model === undefined) throw invalid(file, 'has no "model"', "model");
  if (!isObject(model)) throw invalid(file, '"model" must be an object', "model");
  const rawType = model["type"];
  if (rawType !== undefined && typeof rawType !== "string") throw invalid(file, "model.type must be a string", "model.type");
  const type = rawType ?? inferModelType(model);
  if (!SUPPORTED_MODELS.has(type)) {
    throw invalid(
      file,
      `model.type "${type}" is not supported (supported: ${[...SUPPORTED_MODELS].join(", ")})`,
      "model.type",
    );
  }
  checkFallbackModel(model, type, file);
  const added = parsed["added_tokens"];
  if (added === undefined) throw invalid(file, 'has no "added_tokens"', "added_tokens");
  if (!Array.isArray(added)) throw invalid(file, '"added_tokens" must be a list', "added_tokens");
  const checkedAdded = added.map((t: unknown, i) => checkAddedToken(t, i, file, strict));
  const assigned = strict ? assignAddedIds(checkedAdded, model, type, vocabSize) : null;
  const addedTokens = assigned?.tokens ?? checkedAdded;

  const out: Record<string, unknown> = { ...parsed };
  for (const key of COMPONENTS) {
    const v = parsed[key];
    if (v === undefined || v === null) out[key] = null;
    else if (!isObject(v) || typeof v["type"] !== "string") {
      throw invalid(file, `"${key}" must be null or an object with a string "type"`, key);
    }
  }
  out["added_tokens"] = addedTokens;
  out["model"] = rawType === undefined ? { ...model, type } : model;
  if (assigned !== null) ADDED_IDS.set(out, { size: assigned.size, moved: assigned.moved });
  return out as unknown as TokenizerJson;
}

/** A model's vocabulary size as the Rust crate counts it (`get_vocab_size`: its distinct tokens). */
export function modelVocabSize(json: TokenizerJson, encoder: Encoder): number {
  // deltatok's BPE tables counted them while building
  const tokenCount = (encoder as { model?: { tables?: { buffers?: { tokenCount?: unknown } } } }).model?.tables?.buffers?.tokenCount;
  if (typeof tokenCount === "number") return tokenCount;
  const vocab = json.model["vocab"];
  if (Array.isArray(vocab)) return vocab.length;
  return isObject(vocab) ? Object.keys(vocab).length : 0;
}

/** A built tokenizer: deltatok's encoder with its shareable form, or the library fallback (not shareable). */
export interface BuiltTokenizer {
  readonly encoder: Encoder;
  readonly shared: SharedEncoder | null;
}

/**
 * Builds the encoder of a checked tokenizer.json: deltatok's own, or — for a component it does
 * not implement — the library's stock pipeline (src/load/fallback.ts, loudly). What the Rust crate
 * refuses to build is DT_TOKENIZER_INVALID.
 */
export async function buildTokenizer(json: TokenizerJson, runtimeConfig: Record<string, unknown>, file: string): Promise<BuiltTokenizer> {
  let built: EncoderBuild;
  try {
    built = buildEncoder(json as unknown as EncoderJson, { scannerFor });
  } catch (e) {
    if (e instanceof EncoderBuildError) throw invalid(file, e.message, e.path);
    throw e;
  }
  if (built.ok) return { encoder: built.encoder, shared: built.shared };
  // The library's vocabulary-lookup model takes its unknown token from the config; WordLevel
  // keeps it in the model.
  let config = runtimeConfig;
  const unk = json.model["unk_token"];
  if (json.model.type === "WordLevel" && typeof unk === "string" && typeof config["unk_token"] !== "string") {
    config = { ...config, unk_token: unk };
  }
  return { encoder: await libraryEncoder(json, config, built.unsupported, file), shared: null };
}

/**
 * Freezes the typed view: the top level, added tokens, pipeline components (deeply), and the model
 * object with its vocabulary and merges list (not each merge pair: that would cost up to 0.3 s on
 * large vocabularies for no benefit).
 */
export function freezeTokenizerJson(json: TokenizerJson): void {
  const stackFreeze = (root: unknown): void => {
    const stack: unknown[] = [root];
    while (stack.length > 0) {
      const v = stack.pop();
      if (v === null || typeof v !== "object" || Object.isFrozen(v)) continue;
      Object.freeze(v);
      for (const child of Object.values(v)) if (child !== null && typeof child === "object") stack.push(child);
    }
  };
  for (const t of json.added_tokens) Object.freeze(t);
  Object.freeze(json.added_tokens);
  for (const key of COMPONENTS) {
    const c: TokenizerComponentJson | null = json[key];
    if (c !== null) stackFreeze(c);
  }
  const model: TokenizerModelJson = json.model;
  for (const d of Object.values(Object.getOwnPropertyDescriptors(model))) {
    // an accessor (a rebuilt core's lazily made vocab and merges, src/load/shared-core.ts) freezes its own value
    const value: unknown = d.value;
    if (value !== null && typeof value === "object") Object.freeze(value);
  }
  Object.freeze(model);
  Object.freeze(json);
}
