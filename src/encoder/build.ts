/**
 * Building deltatok's encoder from tokenizer.json, and again in another thread from its shared
 * form (the JSON without vocabulary and merges, plus the BPE tables in SharedArrayBuffers).
 *
 * `buildEncoder` answers `{ ok: false, unsupported }` naming the first component this encoder
 * does not implement; the loader then runs the library's stock pipeline and says so.
 * Refusals of the Rust crate (a merge naming a token the vocabulary lacks, …) are thrown as
 * `EncoderBuildError`.
 *
 * Layer: encoder.
 */

import { AddedMatcher, type AddedTokenDef } from "./added-vocabulary.js";
import { buildDecoder } from "./decode/decoders.js";
import { BpeModel, type BpeOptions } from "./model/bpe.js";
import { BpeTables, BpeTablesError, bpeSourceFromJson, buildBpeTables, type BpeSource, type BpeTableBuffers } from "./model/bpe-tables.js";
import { PieceMemo, type PieceMemoSizes } from "./model/piece-memo.js";
import { buildNormalizer } from "./normalize/normalizers.js";
import { Pipeline } from "./pipeline.js";
import { kimiChunks } from "./model/kimi-chunks.js";
import { scannerForPattern } from "./pretokenize/recognize.js";
import { buildPreTokenizer, type ScannerLookup } from "./pretokenize/stages.js";

type Json = Record<string, unknown>;

/** The parts of tokenizer.json the encoder reads (checked by the loader first). */
export interface EncoderJson {
  readonly added_tokens: readonly AddedTokenDef[];
  readonly normalizer: unknown;
  readonly pre_tokenizer: unknown;
  readonly decoder: unknown;
  readonly model: Json;
  /** What formats other than tokenizer.json need beyond it (absent for a tokenizer.json). */
  readonly extensions?: EncoderExtensions;
}

/**
 * Rules of tokenizers that ship no tokenizer.json (src/load/formats/) which a tokenizer.json
 * cannot spell. Plain data: it crosses to worker threads with the rest of the JSON.
 */
export interface EncoderExtensions {
  /**
   * Cut each section (the text between raw added tokens) before the normalized added tokens and
   * the pre-tokenizer run: `"kimi"` cuts as Kimi's loader cuts long texts (model/kimi-chunks.ts).
   */
  readonly sectionCuts?: "kimi";
  /**
   * The dialect of the Split patterns: `"rust-regex"` for tiktoken's patterns (a scanner of that
   * flavor runs a known family's pattern; other patterns take the Oniguruma translation, and a
   * note says so).
   */
  readonly patternFlavor?: "rust-regex";
  /** Tokens that have ids and text (decode, id ↔ token) but are never matched in text (tekken's special slots). */
  readonly unmatchedTokens?: readonly AddedTokenDef[];
}

/** What a worker thread needs to rebuild an encoder: plain data and SharedArrayBuffers. */
export interface SharedEncoder {
  readonly format: "deltatok-encoder/1";
  /** tokenizer.json's parts without `model.vocab` and `model.merges`. */
  readonly json: EncoderJson;
  readonly tables: BpeTableBuffers;
}

export interface EncoderOptions {
  /** The pre-tokenizer scanners (pretokenize/), or none. */
  readonly scannerFor?: ScannerLookup;
  /** Sizes of the piece memo. */
  readonly memo?: PieceMemoSizes;
}

/** A tokenizer.json the Rust crate refuses to build. */
export class EncoderBuildError extends Error {
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(message);
    this.name = "EncoderBuildError";
  }
}

export type EncoderBuild = { readonly ok: true; readonly encoder: Pipeline; readonly shared: SharedEncoder } | { readonly ok: false; readonly unsupported: string };

const noScanners: ScannerLookup = () => null;

/** Scanners for tiktoken's patterns: a Split's pattern in the "rust-regex" flavor. */
const rustRegexScanners: ScannerLookup = (p) => {
  if (p === null || typeof p !== "object") return null;
  const o = p as Json;
  if (o["type"] !== "Split" || o["behavior"] !== "Isolated" || o["invert"] !== false) return null;
  const pattern = (o["pattern"] as Json | undefined)?.["Regex"];
  return typeof pattern === "string" ? scannerForPattern(pattern, "rust-regex") : null;
};

/** Kimi's cuts of `text[s, e)`, as absolute offsets; null when the section cannot be cut (shorter than a run). */
function kimiSectionCuts(text: string, s: number, e: number): Array<[number, number]> | null {
  if (e - s <= 25_000) return null;
  return kimiChunks(s === 0 && e === text.length ? text : text.slice(s, e)).map(([a, b]) => [a + s, b + s]);
}

/** The model settings the encoder implements, or the first one it does not. */
function bpeOptions(model: Json): Omit<BpeOptions, "unkId"> | string {
  if (model["type"] !== "BPE") return `model.type ${String(model["type"])}`;
  const dropout = model["dropout"];
  if (dropout !== null && dropout !== undefined && dropout !== 0) return "model.dropout (random merges)";
  const str = (k: string): string | null => {
    const v = model[k];
    return typeof v === "string" && v.length > 0 ? v : null;
  };
  return {
    fuseUnk: model["fuse_unk"] === true,
    byteFallback: model["byte_fallback"] === true,
    ignoreMerges: model["ignore_merges"] === true,
    prefix: str("continuing_subword_prefix"),
    suffix: str("end_of_word_suffix"),
  };
}

function assemble(json: EncoderJson, tables: BpeTables, shared: SharedEncoder, options: EncoderOptions): EncoderBuild {
  const bpe = bpeOptions(json.model);
  if (typeof bpe === "string") return { ok: false, unsupported: bpe };
  const norm = buildNormalizer(json.normalizer);
  if (!norm.ok) return { ok: false, unsupported: norm.unsupported };
  const ext = json.extensions ?? {};
  const lookup = ext.patternFlavor === "rust-regex" ? rustRegexScanners : (options.scannerFor ?? noScanners);
  const pre = buildPreTokenizer(json.pre_tokenizer, lookup);
  if (!pre.ok) return { ok: false, unsupported: pre.unsupported };
  if (ext.sectionCuts !== undefined && ext.sectionCuts !== "kimi") return { ok: false, unsupported: `section cuts ${String(ext.sectionCuts)}` };
  if (pre.byteLevel !== tables.byteLevel) throw new Error("BPE tables built for another pre-tokenizer");
  if (norm.movesStart && mentionsFirst(json.pre_tokenizer)) return { ok: false, unsupported: "a normalizer that moves the text's start before Metaspace prepend_scheme first" };
  const dec = buildDecoder(json.decoder);
  if (!dec.ok) return { ok: false, unsupported: dec.unsupported };

  const unk = json.model["unk_token"];
  const model = new BpeModel(tables, { ...bpe, unkId: typeof unk === "string" ? tables.idOfToken(unk) : -1 }, new PieceMemo(options.memo));
  // the crate's trie order: special tokens first, then the others, each in file order
  const ordered = [...json.added_tokens.filter((t) => t.special), ...json.added_tokens.filter((t) => !t.special)];
  const rawTokens = ordered.filter((t) => !t.normalized);
  const normTokens = ordered.filter((t) => t.normalized);
  const normalize = norm.normalize;
  const raw = new AddedMatcher(rawTokens, rawTokens.map((t) => t.content));
  const normalizedSet = new AddedMatcher(normTokens, normTokens.map((t) => (normalize === null ? t.content : normalize(t.content))));
  let notes = norm.inexact === undefined ? pre.notes : [...pre.notes, norm.inexact];
  if (ext.patternFlavor === "rust-regex") notes = notes.map((n) => (n.endsWith("Oniguruma translation") ? `${n} (the pattern is tiktoken's, a Rust regex: no scanner of that flavor knows it)` : n));
  if (ext.sectionCuts === "kimi") notes = [...notes, "sections cut as Kimi's loader cuts long texts"];
  const encoder = new Pipeline({
    added: json.added_tokens,
    unmatched: ext.unmatchedTokens ?? [],
    raw,
    normalizedSet,
    normalize,
    chain: pre.chain,
    scanner: pre.scanner,
    model,
    decoder: dec.chain,
    notes,
    exact: norm.inexact === undefined,
    sectionCuts: ext.sectionCuts === "kimi" ? kimiSectionCuts : null,
  });
  return { ok: true, encoder, shared };
}

function mentionsFirst(p: unknown): boolean {
  return JSON.stringify(p ?? null).includes('"prepend_scheme":"first"');
}

/** Whether the pre-tokenizer chain ends in ByteLevel (the model then reads bytes). */
function endsInByteLevel(p: unknown): boolean {
  if (p === null || typeof p !== "object") return false;
  const o = p as Json;
  if (o["type"] === "ByteLevel") return true;
  if (o["type"] === "Sequence" && Array.isArray(o["pretokenizers"])) {
    const parts = o["pretokenizers"] as unknown[];
    return parts.length > 0 && endsInByteLevel(parts[parts.length - 1]);
  }
  return false;
}

/**
 * Builds the encoder of a tokenizer.json; `source` gives the vocabulary and merges when another
 * format was read (tiktoken ranks, tekken.json) and `json.model` holds only the settings.
 */
export function buildEncoder(json: EncoderJson, options: EncoderOptions = {}, source?: BpeSource): EncoderBuild {
  const bpe = bpeOptions(json.model);
  if (typeof bpe === "string") return { ok: false, unsupported: bpe };
  let buffers: BpeTableBuffers;
  try {
    const src = source ?? bpeSourceFromJson(json.model, endsInByteLevel(json.pre_tokenizer));
    if (src.byteLevel !== endsInByteLevel(json.pre_tokenizer)) throw new BpeTablesError("the BPE source and the pre-tokenizer disagree on byte level", "model");
    buffers = buildBpeTables(src);
  } catch (e) {
    if (e instanceof BpeTablesError) throw new EncoderBuildError(e.message, e.path);
    throw e;
  }
  const { vocab: _v, merges: _m, ...skeletonModel } = json.model;
  const shared: SharedEncoder = Object.freeze({ format: "deltatok-encoder/1", json: { ...json, model: skeletonModel }, tables: buffers });
  return assemble(json, new BpeTables(buffers), shared, options);
}

/** Rebuilds an encoder from its shared form (another thread's build). */
export function encoderFromShared(shared: SharedEncoder, options: EncoderOptions = {}): Pipeline {
  if (shared === null || typeof shared !== "object" || shared.format !== "deltatok-encoder/1") throw new Error("shared encoder of an unknown format");
  const b = assemble(shared.json, new BpeTables(shared.tables), shared, options);
  if (!b.ok) throw new Error(`a shared encoder does not rebuild: ${b.unsupported}`);
  return b.encoder;
}
