/**
 * Telling tokenizer formats apart in a directory, and reading the chosen one.
 *
 * Candidates, and which wins by default when several are present (first listed):
 * 1. `tokenizer.json` — what deltatok always read; kept first so no directory that loads today
 *    changes. (transformers 5 with mistral-common installed picks `tekken.json` over it; pass
 *    `prefer: "tekken"` for that.)
 * 2. `tekken.json` (Mistral).
 * 3. a tiktoken rank file: `tiktoken.model`, else the one `*.tiktoken`, else a `tokenizer.model`
 *    whose content is tiktoken text. Two `*.tiktoken` files (and no tiktoken.model) are ambiguous.
 * 4. a SentencePiece `tokenizer.model` (protobuf).
 * `tokenizer.model` is told apart by content: a protobuf ModelProto starts with field 1
 * (byte 0x0A); a rank file's first non-empty line is `base64 rank`; anything else is refused.
 *
 * Reading a tiktoken directory also settles its family, pattern (pattern-source.ts) and special
 * tokens. Every file is read with its size bound checked first. tokenizer.json itself is not
 * read here (load.ts does that).
 *
 * Layer: load.
 */

import { createHash } from "node:crypto";
import { open, readdir } from "node:fs/promises";
import { join } from "node:path";

import { DeltatokError } from "../../errors.js";
import type { SentencePieceModelData } from "../../encoder/model/sentencepiece-model.js";
import { parseJsonBytes } from "../json-text.js";
import { resolveTiktokenPattern, type PatternResolution } from "./pattern-source.js";
import { readBoundedFile } from "./read-bounded.js";
import { MAX_SENTENCEPIECE_MODEL_BYTES, readSentencePieceModel } from "./sentencepiece-model.js";
import { MAX_TEKKEN_BYTES, readTekken, type TekkenModel } from "./tekken.js";
import {
  addedTokenContents,
  familySpecialTokens,
  hasRank,
  identifyTiktokenFamily,
  TIKTOKEN_FAMILIES,
  type TiktokenFamily,
  type TiktokenFamilyName,
  type TiktokenSpecialToken,
} from "./tiktoken-families.js";
import { MAX_TIKTOKEN_RANK_BYTES, readTiktokenRanks, type TiktokenRanks } from "./tiktoken-ranks.js";

export type TokenizerFileFormat = "tokenizer.json" | "tekken" | "tiktoken" | "sentencepiece";

/** Largest tokenizer_config.json / tokenization_*.py read here (bytes). */
export const MAX_SIDE_FILE_BYTES = 16 * 1024 * 1024;
/** Bytes of tokenizer.model looked at to tell tiktoken text from protobuf. */
const SNIFF_BYTES = 4096;

export interface FormatCandidate {
  readonly format: TokenizerFileFormat;
  /** Absolute path. */
  readonly file: string;
}

export interface DetectedFormats {
  /** The candidate used. */
  readonly chosen: FormatCandidate;
  /** Every candidate found, in precedence order (`chosen` included). */
  readonly candidates: readonly FormatCandidate[];
}

export interface DetectOptions {
  /** Use this format when the directory has it, whatever the default precedence says. */
  readonly prefer?: TokenizerFileFormat;
}

/** Which tokenizer files `dir` holds and which one is used. */
export async function detectTokenizerFormats(dir: string, options: DetectOptions = {}): Promise<DetectedFormats> {
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch (e) {
    const code = (e as { code?: unknown } | null)?.code;
    if (code === "ENOENT" || code === "ENOTDIR") throw new DeltatokError("DT_TOKENIZER_NOT_FOUND", `tokenizer directory not found: ${dir}`, { cause: e });
    throw new DeltatokError("DT_TOKENIZER_INVALID", `tokenizer directory ${dir} is unreadable: ${(e as Error).message}`, { cause: e });
  }
  const has = (name: string): boolean => names.includes(name);
  const candidates: FormatCandidate[] = [];
  if (has("tokenizer.json")) candidates.push({ format: "tokenizer.json", file: join(dir, "tokenizer.json") });
  if (has("tekken.json")) candidates.push({ format: "tekken", file: join(dir, "tekken.json") });
  let modelKind: "tiktoken" | "sentencepiece" | null = null;
  if (has("tokenizer.model")) modelKind = await sniffModelFile(join(dir, "tokenizer.model"));
  const tiktokenFiles = has("tiktoken.model") ? ["tiktoken.model"] : names.filter((n) => n.endsWith(".tiktoken"));
  if (tiktokenFiles.length > 1) {
    throw new DeltatokError(
      "DT_TOKENIZER_AMBIGUOUS",
      `${dir} holds several tiktoken rank files (${tiktokenFiles.join(", ")}) and no tiktoken.model; keep one of them`,
    );
  }
  if (tiktokenFiles.length === 1) candidates.push({ format: "tiktoken", file: join(dir, tiktokenFiles[0] as string) });
  else if (modelKind === "tiktoken") candidates.push({ format: "tiktoken", file: join(dir, "tokenizer.model") });
  if (modelKind === "sentencepiece") candidates.push({ format: "sentencepiece", file: join(dir, "tokenizer.model") });
  if (candidates.length === 0) {
    throw new DeltatokError(
      "DT_TOKENIZER_NOT_FOUND",
      `${dir} holds no tokenizer file: ${join(dir, "tokenizer.json")} not found, nor tekken.json, tiktoken.model, *.tiktoken or tokenizer.model`,
    );
  }
  const preferred = options.prefer === undefined ? undefined : candidates.find((c) => c.format === options.prefer);
  if (options.prefer !== undefined && preferred === undefined) {
    throw new DeltatokError(
      "DT_TOKENIZER_NOT_FOUND",
      `${dir} holds no ${options.prefer} tokenizer file (found: ${candidates.map((c) => c.format).join(", ")})`,
    );
  }
  return { chosen: preferred ?? (candidates[0] as FormatCandidate), candidates };
}

/** Whether a tokenizer.model is tiktoken text or a SentencePiece protobuf (by its first bytes). */
export async function sniffModelFile(file: string): Promise<"tiktoken" | "sentencepiece"> {
  const head = await readHead(file, SNIFF_BYTES);
  const kind = sniffModelBytes(head);
  if (kind === null) {
    throw new DeltatokError(
      "DT_TOKENIZER_INVALID",
      `${file} is neither a SentencePiece model (protobuf) nor a tiktoken rank file (base64 token and rank per line)`,
    );
  }
  return kind;
}

/** The kind of a tokenizer.model from its first bytes, or null when it is neither. */
export function sniffModelBytes(head: Uint8Array): "tiktoken" | "sentencepiece" | null {
  if (head.length > 0 && head[0] === 0x0a) return "sentencepiece";
  let start = 0;
  while (start < head.length && (head[start] === 0x0a || head[start] === 0x0d)) start++;
  let end = start;
  while (end < head.length && head[end] !== 0x0a && head[end] !== 0x0d) end++;
  const line = String.fromCharCode(...head.subarray(start, Math.min(end, start + 1024)));
  return /^[A-Za-z0-9+/]+={0,2}[ \t]+[0-9]+[ \t]*$/.test(line) ? "tiktoken" : null;
}

async function readHead(file: string, n: number): Promise<Uint8Array> {
  let handle;
  try {
    handle = await open(file, "r");
  } catch (e) {
    throw new DeltatokError("DT_TOKENIZER_INVALID", `${file} is unreadable: ${(e as Error).message}`, { cause: e });
  }
  try {
    const buffer = new Uint8Array(n);
    const { bytesRead } = await handle.read(buffer, 0, n, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** A tiktoken directory read: ranks, pattern, family and special tokens. */
export interface TiktokenDirectory {
  readonly format: "tiktoken";
  readonly file: string;
  readonly ranks: TiktokenRanks;
  readonly pattern: PatternResolution;
  /** The recognized family and why, or null. */
  readonly family: { readonly family: TiktokenFamily; readonly reason: string } | null;
  /**
   * Special tokens (id, text): the family's layout, or for an unknown family the
   * `added_tokens_decoder` entries whose ids are not ranks.
   */
  readonly specialTokens: readonly TiktokenSpecialToken[];
  /** Long texts are cut as Kimi cuts them (encoder/model/kimi-chunks.ts) before encoding. */
  readonly kimiChunks: boolean;
}

export type FormatTokenizer =
  | { readonly format: "tokenizer.json"; readonly file: string }
  | { readonly format: "tekken"; readonly file: string; readonly model: TekkenModel }
  | { readonly format: "sentencepiece"; readonly file: string; readonly model: SentencePieceModelData }
  | TiktokenDirectory;

export interface ReadFormatOptions extends DetectOptions {
  /** The tiktoken pre-tokenizer pattern to use (overrides every other source). */
  readonly pattern?: string;
}

/** Detects and reads the tokenizer of `dir` (tokenizer.json is only located, not read). */
export async function readFormatDirectory(dir: string, options: ReadFormatOptions = {}): Promise<FormatTokenizer> {
  const { chosen } = await detectTokenizerFormats(dir, options);
  switch (chosen.format) {
    case "tokenizer.json":
      return { format: "tokenizer.json", file: chosen.file };
    case "tekken":
      return { format: "tekken", file: chosen.file, model: readTekken(await readBoundedFile(chosen.file, MAX_TEKKEN_BYTES, "tekken.json"), chosen.file) };
    case "sentencepiece":
      return {
        format: "sentencepiece",
        file: chosen.file,
        model: readSentencePieceModel(await readBoundedFile(chosen.file, MAX_SENTENCEPIECE_MODEL_BYTES, "SentencePiece model"), chosen.file),
      };
    case "tiktoken":
      return readTiktokenDirectory(dir, chosen.file, options.pattern ?? null);
  }
}

async function readTiktokenDirectory(dir: string, file: string, override: string | null): Promise<TiktokenDirectory> {
  const bytes = await readBoundedFile(file, MAX_TIKTOKEN_RANK_BYTES, "tiktoken rank file");
  const ranks = readTiktokenRanks(bytes, file);
  const names = (await readdir(dir)).sort();
  const configFile = join(dir, "tokenizer_config.json");
  const config = names.includes("tokenizer_config.json")
    ? parseJsonBytes(await readBoundedFile(configFile, MAX_SIDE_FILE_BYTES, "tokenizer_config.json"), configFile, "DT_TOKENIZER_INVALID")
    : null;
  const pythonNames = names.filter((n) => /^tokenization_.*\.py$/.test(n));
  const pythonSources = [];
  for (const name of pythonNames) {
    const text = new TextDecoder("utf-8", { ignoreBOM: false }).decode(await readBoundedFile(join(dir, name), MAX_SIDE_FILE_BYTES, name));
    pythonSources.push({ name, text });
  }
  const family = identifyTiktokenFamily({
    pythonFiles: pythonNames,
    autoMapTokenizer: autoMapTokenizer(config),
    rankFileSha256: createHash("sha256").update(bytes).digest("hex"),
  });
  const pattern = resolveTiktokenPattern({ override, tokenizerConfig: config, pythonSources, family, dir });
  const added = addedTokenContents(config, configFile);
  const specialTokens =
    family !== null
      ? familySpecialTokens(family.family, ranks, added, file)
      : [...(added ?? new Map<number, string>())]
          .filter(([id]) => !hasRank(ranks, id))
          .map(([id, text]) => ({ id, text }))
          .sort((a, b) => a.id - b.id);
  return { format: "tiktoken", file, ranks, pattern, family, specialTokens, kimiChunks: family?.family.kimiChunks === true };
}

/**
 * An OpenAI encoding's rank file (openai-encodings.ts found it and checked its hash): the family's
 * pattern (or `override`) and its fixed special tokens.
 */
export function readTiktokenEncoding(name: TiktokenFamilyName, bytes: Uint8Array, file: string, override: string | null): TiktokenDirectory {
  const ranks = readTiktokenRanks(bytes, file);
  const family = { family: TIKTOKEN_FAMILIES[name], reason: `the encoding ${name} by name` };
  const pattern = resolveTiktokenPattern({ override, tokenizerConfig: null, pythonSources: [], family, dir: file });
  return { format: "tiktoken", file, ranks, pattern, family, specialTokens: familySpecialTokens(family.family, ranks, null, file), kimiChunks: false };
}

/** tokenizer_config.json's `auto_map.AutoTokenizer` slow class (first entry), if any. */
function autoMapTokenizer(config: unknown): string | null {
  const autoMap = (config as { auto_map?: { AutoTokenizer?: unknown } } | null)?.auto_map?.AutoTokenizer;
  if (Array.isArray(autoMap) && typeof autoMap[0] === "string") return autoMap[0];
  if (typeof autoMap === "string") return autoMap;
  return null;
}
