/**
 * A loaded tokenizer's heavy part in a form another thread can attach to: its tokenizer.json
 * without vocabulary and merges (small, structured-cloned), its config and templates, and the
 * BPE tables in SharedArrayBuffers (bpe-tables.ts). `shareCore` makes it once per core;
 * `coreFromShared` rebuilds an equal core in a worker without reading or parsing tokenizer.json.
 *
 * Layer: load.
 */

import { Tokenizer } from "@huggingface/tokenizers";

import { DeltatokError } from "../errors.js";
import { attachBpeTables, BpeTableView, BpeTablesUnsupported, buildBpeTables, checkBpeProbes, type BpeTables } from "./bpe-tables.js";
import { installExactPatterns } from "./exact-patterns.js";
import { deepFreeze } from "./frozen.js";
import type { TemplateSet } from "./templates.js";
import { buildTokenizer, freezeTokenizerJson } from "./tokenizer-json.js";
import type { PatternReport, TokenizerJson } from "./types.js";

/** What a worker needs to rebuild a loaded tokenizer's core. Plain data and SharedArrayBuffers. */
export interface SharedTokenizer {
  readonly format: "deltatok-shared-tokenizer/1";
  /** The real tokenizer directory the core was loaded from. */
  readonly realDir: string;
  /** Identity of the tokenizer files (LoadedTokenizer.id). */
  readonly id: string;
  /** Distinguishes two shares of the same directory (its files' stamps when shared). */
  readonly key: string;
  /** tokenizer.json's path, for messages. */
  readonly file: string;
  /** tokenizer.json without `model.vocab` and `model.merges`. */
  readonly skeleton: TokenizerJson;
  readonly runtimeConfig: Readonly<Record<string, unknown>>;
  readonly config: Readonly<Record<string, unknown>>;
  readonly specialTokens: Readonly<Record<string, string | string[]>>;
  readonly configTemplates: TemplateSet;
  readonly tables: BpeTables;
}

/** The heavy, template-independent part of a load (load.ts caches it per directory). */
export interface Core {
  readonly id: string;
  readonly file: string;
  readonly tokenizer: Tokenizer;
  readonly tokenizerJson: TokenizerJson;
  readonly patterns: PatternReport;
  readonly runtimeConfig: Readonly<Record<string, unknown>>;
  readonly config: Readonly<Record<string, unknown>>;
  readonly specialTokens: Readonly<Record<string, string | string[]>>;
  readonly configTemplates: TemplateSet;
  /** Set on a core rebuilt from shared tables. */
  readonly tables?: BpeTableView;
}

const shares = new WeakMap<Core, SharedTokenizer>();

/**
 * The shareable form of `core` (made once per core). Throws BpeTablesUnsupported when its model
 * cannot be described by the tables exactly; the caller then loads per thread.
 */
export function shareCore(core: Core, realDir: string, key: string): SharedTokenizer {
  const known = shares.get(core);
  if (known !== undefined) return known;
  if (core.tables !== undefined) throw new BpeTablesUnsupported("a core rebuilt from shared tables is shared already");
  const json = core.tokenizerJson;
  if (json.model.type !== "BPE") throw new BpeTablesUnsupported(`model.type ${json.model.type} has no shared form (BPE only)`);
  const tables = buildBpeTables(core.tokenizer, json.model["vocab"]);
  const model: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(json.model)) if (k !== "vocab" && k !== "merges") model[k] = v;
  const skeleton = { ...json, model } as unknown as TokenizerJson;
  const s: SharedTokenizer = Object.freeze({
    format: "deltatok-shared-tokenizer/1",
    realDir,
    id: core.id,
    key,
    file: core.file,
    skeleton,
    runtimeConfig: core.runtimeConfig,
    config: core.config,
    specialTokens: core.specialTokens,
    configTemplates: core.configTemplates,
    tables,
  });
  shares.set(core, s);
  return s;
}

/**
 * `model.vocab` and `model.merges` of a rebuilt core's tokenizerJson: made from the tables on first
 * read (nothing in deltatok's encode path reads them), equal to what tokenizer.json listed (ids
 * by token; merges in rank order, in the file's format).
 */
function lazyModel(skeletonModel: Record<string, unknown>, view: BpeTableView): Record<string, unknown> {
  const model: Record<string, unknown> = { ...skeletonModel };
  let vocab: Record<string, number> | undefined;
  let merges: readonly unknown[] | undefined;
  Object.defineProperty(model, "vocab", {
    enumerable: true,
    get() {
      if (vocab === undefined) {
        const v: Record<string, number> = {};
        for (let id = 0; id < view.vocabLength; id++) if (view.inModelVocab(id)) v[view.tokenOf(id) as string] = id;
        vocab = Object.freeze(v);
      }
      return vocab;
    },
  });
  Object.defineProperty(model, "merges", {
    enumerable: true,
    get() {
      if (merges === undefined) {
        const pairs = view.tables.mergeFormat === "pairs";
        merges = Object.freeze(
          view.mergeList().map(([a, b]) => {
            const l = view.tokenOf(a) as string;
            const r = view.tokenOf(b) as string;
            return pairs ? Object.freeze([l, r]) : `${l} ${r}`;
          }),
        );
      }
      return merges;
    },
  });
  return model;
}

/** Rebuilds the core `s` describes: the runtime tokenizer over the shared tables, checked by the probes. */
export function coreFromShared(s: SharedTokenizer): Core {
  if (s === null || typeof s !== "object" || s.format !== "deltatok-shared-tokenizer/1") {
    throw new DeltatokError("DT_INTERNAL", "shared tokenizer tables of an unknown format");
  }
  try {
    const sk = s.skeleton;
    // the runtime builds its Maps from these: empty, then the tables stand in for them
    const buildJson = { ...sk, model: { ...sk.model, vocab: {}, merges: [] } } as unknown as TokenizerJson;
    const tokenizer = buildTokenizer(buildJson, { ...s.runtimeConfig }, s.file);
    const view = attachBpeTables(tokenizer, s.tables, sk.model["unk_token"]);
    const patterns = installExactPatterns(tokenizer, sk);
    if (!patterns.exact) {
      const left = patterns.notes.filter((n) => n.includes("left to @huggingface/tokenizers")).join("; ");
      process.emitWarning(`a tokenizer pattern runs with JavaScript semantics, ids may differ from the Rust tokenizers on some texts: ${left}`, {
        code: "DELTATOK_PATTERN_INEXACT",
      });
    }
    checkBpeProbes(tokenizer, s.tables);
    const tokenizerJson = { ...sk, model: lazyModel(sk.model as Record<string, unknown>, view) } as unknown as TokenizerJson;
    freezeTokenizerJson(tokenizerJson);
    return Object.freeze({
      id: s.id,
      file: s.file,
      tokenizer,
      tokenizerJson,
      patterns,
      runtimeConfig: s.runtimeConfig,
      config: deepFreeze(s.config),
      specialTokens: deepFreeze(s.specialTokens),
      configTemplates: s.configTemplates,
      tables: view,
    });
  } catch (e) {
    if (e instanceof DeltatokError) throw e;
    throw new DeltatokError("DT_INTERNAL", `attaching the shared tokenizer tables failed: ${(e as Error)?.message ?? e}`, { cause: e });
  }
}
