/**
 * A loaded tokenizer's heavy part in a form another thread can attach to: the encoder's shared
 * form (tokenizer.json without vocabulary and merges, plus the BPE tables in SharedArrayBuffers:
 * src/encoder/build.ts), the config and templates. `shareCore` makes it once per core;
 * `coreFromShared` rebuilds an equal core in a worker without reading or parsing tokenizer.json.
 * A core on the library fallback has no shared form (`TablesUnsupported`): the caller then loads
 * per thread, loudly. `recordOfCore` / `coreFromRecord` are the same idea for the on-disk cache
 * (src/load/disk-cache.ts): a record keeps everything that makes the core equal to a fresh load
 * (its pattern notes, the warnings its load emitted, the model's key order).
 *
 * Layer: load.
 */

import { encoderFromShared, type SharedEncoder } from "../encoder/build.js";
import type { Pipeline } from "../encoder/pipeline.js";
import { bpeTableBytes, BpeTables } from "../encoder/model/bpe-tables.js";
import type { BpeModel } from "../encoder/model/bpe.js";
import { UnigramModel } from "../encoder/model/unigram-json.js";
import { scannerFor } from "../encoder/pretokenize/index.js";
import type { Encoder } from "../encoder/types.js";
import { DeltatokError } from "../errors.js";
import { deepFreeze } from "./frozen.js";
import type { TemplateSet } from "./templates.js";
import { freezeTokenizerJson } from "./tokenizer-json.js";
import type { PatternReport, TokenizerJson } from "./types.js";

/** What a worker needs to rebuild a loaded tokenizer's core. Plain data and SharedArrayBuffers. */
export interface SharedTokenizer {
  readonly format: "deltatok-shared-tokenizer/2";
  /** The real tokenizer directory the core was loaded from. */
  readonly realDir: string;
  /** Identity of the tokenizer files (LoadedTokenizer.id). */
  readonly id: string;
  /** Distinguishes two shares of the same directory (its files' stamps when shared). */
  readonly key: string;
  /** tokenizer.json's path, for messages. */
  readonly file: string;
  /** tokenizer.json with `model.vocab` and `model.merges` null (skeletonOf). */
  readonly skeleton: TokenizerJson;
  readonly runtimeConfig: Readonly<Record<string, unknown>>;
  readonly config: Readonly<Record<string, unknown>>;
  readonly specialTokens: Readonly<Record<string, string | string[]>>;
  readonly configTemplates: TemplateSet;
  readonly encoder: SharedEncoder;
}

/** A warning a load emitted (`process.emitWarning` with a code), kept to be emitted again by a cached load. */
export interface LoadWarning {
  readonly code: string;
  readonly message: string;
}

/** The heavy, template-independent part of a load (load.ts caches it per directory). */
export interface Core {
  readonly id: string;
  readonly file: string;
  readonly tokenizer: Encoder;
  /** The encoder's shareable form; null on the library fallback. */
  readonly shared: SharedEncoder | null;
  readonly tokenizerJson: TokenizerJson;
  readonly patterns: PatternReport;
  readonly runtimeConfig: Readonly<Record<string, unknown>>;
  readonly config: Readonly<Record<string, unknown>>;
  readonly specialTokens: Readonly<Record<string, string | string[]>>;
  readonly configTemplates: TemplateSet;
  /** Set on a core rebuilt from shared tables. */
  readonly fromShared: boolean;
  /** The warnings its load emitted (none for a core rebuilt from shared tables). */
  readonly warnings: readonly LoadWarning[];
}

/** A core with no shared form; the reason says why. */
export class TablesUnsupported extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "TablesUnsupported";
  }
}

/** Bytes of the SharedArrayBuffers of a shared tokenizer. */
export function sharedTokenizerBytes(s: SharedTokenizer): number {
  return bpeTableBytes(s.encoder.tables) + (s.encoder.unigram?.scores.byteLength ?? 0);
}

/**
 * tokenizer.json with `model.vocab` and `model.merges` null where it had them (their places kept,
 * so the rebuilt view lists its keys in the file's order): the part of a core's view that is not
 * its tables. Keys only: a core read from another format makes vocab and merges on first read.
 */
function skeletonOf(json: TokenizerJson): TokenizerJson {
  const model: Record<string, unknown> = {};
  for (const k of Object.keys(json.model)) model[k] = k === "vocab" || k === "merges" ? null : json.model[k];
  return { ...json, model } as unknown as TokenizerJson;
}

/** The encoder over shared tables, and the tokenizer.json view over the skeleton (vocab and merges made from the tables on first read), frozen. */
function attach(shared: SharedEncoder, skeleton: TokenizerJson): { encoder: Pipeline; tokenizerJson: TokenizerJson } {
  const encoder = encoderFromShared(shared, { scannerFor });
  const tokenizerJson = { ...skeleton, model: lazyModel(skeleton.model as Record<string, unknown>, encoder.model.tables, listedScores(encoder.model)) } as unknown as TokenizerJson;
  freezeTokenizerJson(tokenizerJson);
  return { encoder, tokenizerJson };
}

const shares = new WeakMap<Core, SharedTokenizer>();

/** The shareable form of `core` (made once per core). Throws TablesUnsupported on the library fallback. */
export function shareCore(core: Core, realDir: string, key: string): SharedTokenizer {
  const known = shares.get(core);
  if (known !== undefined) return known;
  if (core.fromShared) throw new TablesUnsupported("a core rebuilt from shared tables is shared already");
  if (core.shared === null) throw new TablesUnsupported(`the tokenizer runs on the library fallback (${core.tokenizer.unsupported ?? "?"})`);
  const skeleton = skeletonOf(core.tokenizerJson);
  const s: SharedTokenizer = Object.freeze({
    format: "deltatok-shared-tokenizer/2",
    realDir,
    id: core.id,
    key,
    file: core.file,
    skeleton,
    runtimeConfig: core.runtimeConfig,
    config: core.config,
    specialTokens: core.specialTokens,
    configTemplates: core.configTemplates,
    encoder: core.shared,
  });
  shares.set(core, s);
  return s;
}

/**
 * `model.vocab` and `model.merges` of a rebuilt core's tokenizerJson (and of a core read from a
 * tiktoken rank file or tekken.json, whose merges are every split of a token into two, each at
 * its token's rank): made from the tables on first
 * read (the encode path never reads them), equal to what tokenizer.json listed (ids by token;
 * merges in rank order, in the file's format; a pair listed twice appears once, at its last rank).
 */
export function lazyModel(skeletonModel: Record<string, unknown>, tables: BpeTables, scores: Float64Array | null = null): Record<string, unknown> {
  const model: Record<string, unknown> = { ...skeletonModel };
  if (scores !== null) {
    // Unigram: [piece, score] by id, scores as listed
    let pieces: ReadonlyArray<readonly [string, number]> | undefined;
    Object.defineProperty(model, "vocab", {
      enumerable: true,
      get() {
        if (pieces === undefined) {
          const v: Array<readonly [string, number]> = [];
          for (const [t, id] of tables.entries()) v[id] = Object.freeze([t, scores[id] as number] as const);
          pieces = Object.freeze(v);
        }
        return pieces;
      },
    });
    return model;
  }
  let vocab: Record<string, number> | undefined;
  let merges: ReadonlyArray<unknown> | undefined;
  Object.defineProperty(model, "vocab", {
    enumerable: true,
    get() {
      if (vocab === undefined) {
        const v: Record<string, number> = {};
        for (const [t, id] of tables.entries()) v[t] = id;
        vocab = Object.freeze(v);
      }
      return vocab;
    },
  });
  Object.defineProperty(model, "merges", {
    enumerable: true,
    get() {
      if (merges === undefined) {
        const list: Array<[number, string, string]> = [];
        const p = tables.pairs;
        for (let k = 0; k < p.length; k += 4) {
          if ((p[k] as number) < 0) continue;
          list.push([p[k + 2] as number, tables.tokenOf(p[k] as number) as string, tables.tokenOf(p[k + 1] as number) as string]);
        }
        list.sort((a, b) => a[0] - b[0]);
        const strings = tables.buffers.mergeFormat === "strings";
        merges = Object.freeze(list.map(([, a, b]) => (strings ? `${a} ${b}` : Object.freeze([a, b] as const))));
      }
      return merges;
    },
  });
  return model;
}

/** A Unigram model's scores as listed (for `model.vocab`), or null for BPE. */
export function listedScores(model: BpeModel | UnigramModel): Float64Array | null {
  return model instanceof UnigramModel ? model.listedScores : null;
}

/** Rebuilds the core `s` describes: the encoder over the shared tables. */
export function coreFromShared(s: SharedTokenizer): Core {
  if (s === null || typeof s !== "object" || s.format !== "deltatok-shared-tokenizer/2") {
    throw new DeltatokError("DT_INTERNAL", "shared tokenizer tables of an unknown format");
  }
  try {
    const { encoder, tokenizerJson } = attach(s.encoder, s.skeleton);
    return Object.freeze({
      id: s.id,
      file: s.file,
      tokenizer: encoder,
      shared: s.encoder,
      tokenizerJson,
      patterns: { exact: encoder.exact, notes: encoder.notes },
      runtimeConfig: s.runtimeConfig,
      config: deepFreeze(s.config),
      specialTokens: deepFreeze(s.specialTokens),
      configTemplates: s.configTemplates,
      fromShared: true,
      warnings: [],
    });
  } catch (e) {
    if (e instanceof DeltatokError) throw e;
    throw new DeltatokError("DT_INTERNAL", `attaching the shared tokenizer tables failed: ${(e as Error)?.message ?? e}`, { cause: e });
  }
}

/** A core as the disk cache stores it: plain data and SharedArrayBuffers (the encoder's tables). */
export interface CoreRecord {
  readonly format: "deltatok-core-record/1";
  readonly id: string;
  readonly file: string;
  /** tokenizer.json with `model.vocab` and `model.merges` null where the core had them (their places kept). */
  readonly skeleton: TokenizerJson;
  readonly patterns: PatternReport;
  readonly runtimeConfig: Readonly<Record<string, unknown>>;
  readonly config: Readonly<Record<string, unknown>>;
  readonly specialTokens: Readonly<Record<string, string | string[]>>;
  readonly configTemplates: TemplateSet;
  readonly encoder: SharedEncoder;
  readonly warnings: readonly LoadWarning[];
}

/** The record of `core`, or null for a core with no shared form (the library fallback, or one rebuilt from shared tables). */
export function recordOfCore(core: Core): CoreRecord | null {
  if (core.shared === null || core.fromShared) return null;
  return {
    format: "deltatok-core-record/1",
    id: core.id,
    file: core.file,
    skeleton: skeletonOf(core.tokenizerJson),
    patterns: core.patterns,
    runtimeConfig: core.runtimeConfig,
    config: core.config,
    specialTokens: core.specialTokens,
    configTemplates: core.configTemplates,
    encoder: core.shared,
    warnings: core.warnings,
  };
}

/**
 * The core a record describes: the encoder over the record's tables, `model.vocab` and
 * `model.merges` made from them on first read, in the places the loaded file had them. The core
 * owns its tables (it can be shared with worker threads like a fresh load's).
 */
export function coreFromRecord(r: CoreRecord): Core {
  if (r === null || typeof r !== "object" || r.format !== "deltatok-core-record/1") throw new Error("a core record of an unknown format");
  const { encoder, tokenizerJson } = attach(r.encoder, r.skeleton);
  return Object.freeze({
    id: r.id,
    file: r.file,
    tokenizer: encoder,
    shared: r.encoder,
    tokenizerJson,
    patterns: r.patterns,
    runtimeConfig: r.runtimeConfig,
    config: deepFreeze(r.config),
    specialTokens: deepFreeze(r.specialTokens),
    configTemplates: r.configTemplates,
    fromShared: false,
    warnings: r.warnings,
  });
}
