/**
 * Building deltatok's encoder from tokenizer.json, and again in another thread from its shared
 * form (the JSON without vocabulary and merges, plus the model's tables in SharedArrayBuffers:
 * BPE's, or Unigram's pieces and scores).
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
import { buildUnigramTables, UnigramModel, unigramSourceFromJson, type UnigramTableBuffers } from "./model/unigram-json.js";
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
  /**
   * `"exact"`: a Unigram model's scores are the model's own values (transformers converts a
   * SentencePiece model in memory, never through JSON); absent: they are read as serde_json
   * reads their JSON spelling (model/serde-float.ts).
   */
  readonly unigramScores?: "exact";
}

/** What a worker thread needs to rebuild an encoder: plain data and SharedArrayBuffers. */
export interface SharedEncoder {
  readonly format: "deltatok-encoder/1";
  /** tokenizer.json's parts without `model.vocab` and `model.merges`. */
  readonly json: EncoderJson;
  /** The BPE tables, or a Unigram model's tables of pieces (`unigram.tables`). */
  readonly tables: BpeTableBuffers;
  /** A Unigram model's tables (pieces and scores); absent for BPE. */
  readonly unigram?: UnigramTableBuffers;
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

type ModelSettings = ({ readonly kind: "bpe" } & Omit<BpeOptions, "unkId">) | { readonly kind: "unigram"; readonly unkId: number; readonly byteFallback: boolean };

/** The model settings the encoder implements, or the first one it does not. */
function modelSettings(model: Json): ModelSettings | string {
  if (model["type"] === "Unigram") {
    const unk = model["unk_id"];
    if (unk !== null && unk !== undefined && !(typeof unk === "number" && Number.isInteger(unk) && unk >= 0)) return "model.unk_id that is not a piece index";
    return { kind: "unigram", unkId: typeof unk === "number" ? unk : -1, byteFallback: model["byte_fallback"] === true };
  }
  if (model["type"] !== "BPE") return `model.type ${String(model["type"])}`;
  const dropout = model["dropout"];
  if (dropout !== null && dropout !== undefined && dropout !== 0) return "model.dropout (random merges)";
  const str = (k: string): string | null => {
    const v = model[k];
    return typeof v === "string" && v.length > 0 ? v : null;
  };
  return {
    kind: "bpe",
    fuseUnk: model["fuse_unk"] === true,
    byteFallback: model["byte_fallback"] === true,
    ignoreMerges: model["ignore_merges"] === true,
    prefix: str("continuing_subword_prefix"),
    suffix: str("end_of_word_suffix"),
  };
}

function assemble(json: EncoderJson, shared: SharedEncoder, options: EncoderOptions): EncoderBuild {
  const settings = modelSettings(json.model);
  if (typeof settings === "string") return { ok: false, unsupported: settings };
  const norm = buildNormalizer(json.normalizer);
  if (!norm.ok) return { ok: false, unsupported: norm.unsupported };
  const ext = json.extensions ?? {};
  const lookup = ext.patternFlavor === "rust-regex" ? rustRegexScanners : (options.scannerFor ?? noScanners);
  const pre = buildPreTokenizer(json.pre_tokenizer, lookup);
  if (!pre.ok) return { ok: false, unsupported: pre.unsupported };
  if (ext.sectionCuts !== undefined && ext.sectionCuts !== "kimi") return { ok: false, unsupported: `section cuts ${String(ext.sectionCuts)}` };
  if (settings.kind === "unigram" && pre.byteLevel) return { ok: false, unsupported: "a Unigram model after a ByteLevel pre-tokenizer" };
  if (norm.movesStart && mentionsFirst(json.pre_tokenizer)) return { ok: false, unsupported: "a normalizer that moves the text's start before Metaspace prepend_scheme first" };
  const dec = buildDecoder(json.decoder);
  if (!dec.ok) return { ok: false, unsupported: dec.unsupported };

  let model: BpeModel | UnigramModel;
  if (settings.kind === "unigram") {
    if (shared.unigram === undefined) throw new Error("a Unigram model without its tables");
    model = new UnigramModel(shared.unigram, settings, new PieceMemo(options.memo));
  } else {
    const tables = new BpeTables(shared.tables);
    if (pre.byteLevel !== tables.byteLevel) throw new Error("BPE tables built for another pre-tokenizer");
    const { kind: _k, ...bpe } = settings;
    const unk = json.model["unk_token"];
    const unkId = typeof unk === "string" ? tables.idOfToken(unk) : -1;
    // an unknown token the vocabulary lacks: the crate loads the model and fails encodes that need it
    const missingUnk = typeof unk === "string" && unkId < 0 ? unk : null;
    model = new BpeModel(tables, { ...bpe, unkId, missingUnk }, new PieceMemo(options.memo));
  }
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
  const settings = modelSettings(json.model);
  if (typeof settings === "string") return { ok: false, unsupported: settings };
  if (settings.kind === "unigram") return buildUnigram(json, settings.unkId, options);
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
  return assemble(json, shared, options);
}

function buildUnigram(json: EncoderJson, unkId: number, options: EncoderOptions): EncoderBuild {
  let unigram: UnigramTableBuffers;
  try {
    const src = unigramSourceFromJson(json.model);
    if (unkId >= 0 && src.pieces.length === 0) throw new BpeTablesError("a Unigram model with unk_id needs a vocabulary (the crate's EmptyVocabulary)", "model.vocab");
    if (unkId >= src.pieces.length) throw new BpeTablesError(`model.unk_id ${unkId} is past the vocabulary's ${src.pieces.length} pieces`, "model.unk_id");
    if (new Set(src.pieces).size !== src.pieces.length) return { ok: false, unsupported: "a Unigram vocabulary listing a piece twice" };
    unigram = buildUnigramTables({ ...src, serdeScores: json.extensions?.unigramScores !== "exact" });
  } catch (e) {
    if (e instanceof BpeTablesError) throw new EncoderBuildError(e.message, e.path);
    throw e;
  }
  const { vocab: _v, ...skeletonModel } = json.model;
  const shared: SharedEncoder = Object.freeze({ format: "deltatok-encoder/1", json: { ...json, model: skeletonModel }, tables: unigram.tables, unigram });
  return assemble(json, shared, options);
}

/** Rebuilds an encoder from its shared form (another thread's build). */
export function encoderFromShared(shared: SharedEncoder, options: EncoderOptions = {}): Pipeline {
  if (shared === null || typeof shared !== "object" || shared.format !== "deltatok-encoder/1") throw new Error("shared encoder of an unknown format");
  const b = assemble(shared.json, shared, options);
  if (!b.ok) throw new Error(`a shared encoder does not rebuild: ${b.unsupported}`);
  return b.encoder;
}
