/**
 * Reads Mistral's `tekken.json` the way mistral-common's `Tekkenizer.from_file` loads it
 * (mistral-common 1.12), so token ids equal what mistral-common counts:
 * - `config.version` must be a version mistral-common knows (v1 … v15); `special_tokens` is
 *   required after v7 and defaults to mistral-common's 20 deprecated control tokens before;
 * - the special tokens occupy ids 0 .. `default_num_special_tokens` − 1: the listed ones (their
 *   `rank` must equal their position — mistral-common encodes by `rank` but decodes by position,
 *   so anything else is inconsistent and refused), then `<SPECIAL_{i}>` fillers;
 * - the vocabulary is cut to `default_vocab_size` − `default_num_special_tokens` entries, each
 *   `{rank, token_bytes, token_str}` with rank = index, the first 256 being the single bytes in
 *   order; entry i is token id i + `default_num_special_tokens` (the special-slot offset);
 * - text is encoded by tiktoken over that vocabulary with `config.pattern` and no special tokens:
 *   text that spells `<s>` or `[INST]` is ordinary text; special ids come only from the caller.
 * `image` / `audio` / `multimodal` sections are not read. Pure: bytes in, data out.
 *
 * Layer: load.
 */

import { DeltatokError } from "../../errors.js";
import { parseJsonBytes } from "../json-text.js";
import { decodeBase64 } from "./base64.js";
import { denseRanks, type TiktokenRanks } from "./tiktoken-ranks.js";

/** Largest tekken.json read (bytes). Mistral's are 15–20 MB. */
export const MAX_TEKKEN_BYTES = 64 * 1024 * 1024;

/** Versions mistral-common 1.12 accepts (TokenizerVersion), oldest first. */
export const TEKKEN_VERSIONS: readonly string[] = ["v1", "v2", "v3", "v7", "v11", "v13", "v15"];

/** mistral-common's special tokens for files without `special_tokens` (versions up to v7). */
export const TEKKEN_DEPRECATED_SPECIALS: readonly string[] = [
  "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]",
  "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
  "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]",
];

export interface TekkenSpecialToken {
  /** Token id (= its slot, 0 .. numSpecialTokens − 1). */
  readonly id: number;
  readonly text: string;
  /** `is_control` (fillers and deprecated defaults: true). */
  readonly isControl: boolean;
  /** Whether the file listed it (false for `<SPECIAL_{i}>` fillers and the deprecated defaults). */
  readonly listed: boolean;
}

export interface TekkenModel {
  /** `config.version`, e.g. "v7". */
  readonly version: string;
  /** `config.pattern`: the tiktoken pre-tokenizer pattern. */
  readonly pattern: string;
  /** `default_num_special_tokens`: ids below it are special; vocabulary ids start at it. */
  readonly numSpecialTokens: number;
  /** `default_vocab_size`: specials plus the vocabulary kept. */
  readonly vocabSize: number;
  /** The vocabulary kept, ranks 0 .. vocabSize − numSpecialTokens − 1. */
  readonly ranks: TiktokenRanks;
  /** All special tokens, by id. */
  readonly specialTokens: readonly TekkenSpecialToken[];
}

/** Token id of vocabulary rank `rank` (the special-slot offset). */
export function tekkenTokenId(model: TekkenModel, rank: number): number {
  return rank + model.numSpecialTokens;
}

function invalid(file: string, path: string, reason: string): DeltatokError {
  return new DeltatokError("DT_TOKENIZER_INVALID", `${file}: ${path}: ${reason}`, { path });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function nonNegativeInteger(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

/** Parses and validates a tekken.json. `file` names it in error messages. */
export function readTekken(bytes: Uint8Array, file: string): TekkenModel {
  if (bytes.length > MAX_TEKKEN_BYTES) {
    throw new DeltatokError("DT_TOKENIZER_TOO_LARGE", `${file} is ${bytes.length} bytes; tekken.json is read up to ${MAX_TEKKEN_BYTES} bytes`);
  }
  const root = parseJsonBytes(bytes, file, "DT_TOKENIZER_INVALID");
  if (!isObject(root)) throw invalid(file, "(root)", "must be a JSON object");
  const config = root.config;
  if (!isObject(config)) throw invalid(file, "config", "must be an object");
  const version = config.version;
  if (typeof version !== "string" || !TEKKEN_VERSIONS.includes(version)) {
    throw new DeltatokError(
      "DT_TOKENIZER_UNSUPPORTED",
      `${file}: config.version ${JSON.stringify(version)} is not a tekken version mistral-common knows (${TEKKEN_VERSIONS.join(", ")})`,
      { path: "config.version" },
    );
  }
  const pattern = config.pattern;
  if (typeof pattern !== "string" || pattern === "") throw invalid(file, "config.pattern", "must be a non-empty string");
  const vocabSize = config.default_vocab_size;
  const numSpecial = config.default_num_special_tokens;
  if (!nonNegativeInteger(numSpecial)) throw invalid(file, "config.default_num_special_tokens", "must be a non-negative integer");
  if (!nonNegativeInteger(vocabSize)) throw invalid(file, "config.default_vocab_size", "must be a non-negative integer");
  const vocab = root.vocab;
  if (!Array.isArray(vocab)) throw invalid(file, "vocab", "must be a list");
  if (vocabSize > vocab.length + numSpecial) {
    throw invalid(file, "config.default_vocab_size", `${vocabSize} exceeds the ${vocab.length} vocabulary entries plus ${numSpecial} special tokens`);
  }
  const inner = vocabSize - numSpecial;
  if (inner < 256) {
    throw invalid(file, "config.default_vocab_size", `leaves ${inner} vocabulary entries after ${numSpecial} special tokens; the 256 single bytes alone need 256`);
  }

  const specialTokens = readSpecials(root.special_tokens, version, numSpecial, file);

  const tokens: Uint8Array[] = [];
  for (let i = 0; i < inner; i++) {
    const entry = vocab[i] as unknown;
    const path = `vocab[${i}]`;
    if (!isObject(entry)) throw invalid(file, path, "must be an object");
    const keys = Object.keys(entry).sort().join(",");
    if (keys !== "rank,token_bytes,token_str") {
      throw invalid(file, path, `must have exactly the keys rank, token_bytes, token_str (has ${keys || "none"})`);
    }
    if (entry.rank !== i) throw invalid(file, `${path}.rank`, `is ${JSON.stringify(entry.rank)}; entry ${i} must have rank ${i}`);
    const encoded = entry.token_bytes;
    const token = typeof encoded === "string" ? decodeBase64(encoded) : null;
    if (token === null || token.length === 0) throw invalid(file, `${path}.token_bytes`, "is not non-empty base64");
    if (i < 256 && !(token.length === 1 && token[0] === i)) {
      throw invalid(file, `${path}.token_bytes`, `entry ${i} must be the single byte 0x${i.toString(16).padStart(2, "0")}`);
    }
    tokens.push(token);
  }
  const ranks = denseRanks(tokens, file, (i) => `vocab[${i}]`);
  return { version, pattern, numSpecialTokens: numSpecial, vocabSize, ranks, specialTokens };
}

function readSpecials(value: unknown, version: string, numSpecial: number, file: string): TekkenSpecialToken[] {
  const out: TekkenSpecialToken[] = [];
  if (value === undefined || value === null) {
    if (TEKKEN_VERSIONS.indexOf(version) > TEKKEN_VERSIONS.indexOf("v7")) {
      throw invalid(file, "special_tokens", `is required for tekken ${version} (mistral-common refuses the file without it)`);
    }
    TEKKEN_DEPRECATED_SPECIALS.forEach((text, id) => out.push({ id, text, isControl: true, listed: false }));
  } else {
    if (!Array.isArray(value)) throw invalid(file, "special_tokens", "must be a list");
    value.forEach((entry: unknown, i) => {
      const path = `special_tokens[${i}]`;
      if (!isObject(entry)) throw invalid(file, path, "must be an object");
      if (typeof entry.token_str !== "string") throw invalid(file, `${path}.token_str`, "must be a string");
      if (entry.rank !== i) {
        throw invalid(file, `${path}.rank`, `is ${JSON.stringify(entry.rank)}; special token ${i} must have rank ${i} (mistral-common encodes by rank and decodes by position)`);
      }
      if (entry.is_control !== undefined && typeof entry.is_control !== "boolean") {
        throw invalid(file, `${path}.is_control`, "must be a boolean");
      }
      out.push({ id: i, text: entry.token_str, isControl: entry.is_control !== false, listed: true });
    });
  }
  if (out.length > numSpecial) {
    throw invalid(file, "special_tokens", `${out.length} special tokens do not fit in default_num_special_tokens = ${numSpecial}`);
  }
  for (let id = out.length; id < numSpecial; id++) out.push({ id, text: `<SPECIAL_${id}>`, isControl: true, listed: false });
  const seen = new Map<string, number>();
  for (const t of out) {
    const other = seen.get(t.text);
    if (other !== undefined) throw invalid(file, `special_tokens[${t.id}].token_str`, `${JSON.stringify(t.text)} is also special token ${other}`);
    seen.set(t.text, t.id);
  }
  return out;
}
