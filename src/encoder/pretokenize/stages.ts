/**
 * tokenizer.json pre-tokenizers as a chain of stages, with the Rust crate's semantics
 * (pre_tokenizers/*.rs): Split, ByteLevel, Metaspace, Digits, Whitespace, WhitespaceSplit,
 * Sequence. A stage receives one piece (text[s, e)) and passes each of its sub-pieces to the
 * next stage; the last stage feeds the model. Pieces are processed depth first, which gives the
 * crate's order (each split of a `PreTokenizedString` is processed on its own, in order) without
 * building a list per stage.
 *
 * `origin` says that a piece starts at offset 0 of the original input: Metaspace's
 * `prepend_scheme: "first"` prepends only there (the crate checks `offsets_original().0 == 0`).
 *
 * A Split (or ByteLevel's own pattern) runs on a hand-written scanner when one recognizes its
 * configuration (recognize.ts, `scannerFor`), else on the Oniguruma translation of its pattern
 * (src/encoder/regex). A component this module does not implement is reported by name.
 *
 * Layer: encoder.
 */

import { GPT2_PATTERN } from "../regex/patterns.js";
import { SPLIT_BEHAVIORS, splitSpans, type SplitBehavior } from "../regex/pattern-split.js";
import { translateOniguruma } from "../regex/oniguruma.js";
import { rangesV } from "../regex/runtime-classes.js";
import { complement, has, propertyLeaf, regexCrateLeaf, union, type CodePointSet } from "../regex/unicode-sets.js";
import { compilePattern, isRustWhitespace } from "../normalize/normalizers.js";
import { Int32List, type PieceScanner } from "./scanner.js";

/** Where a stage sends a piece. */
export type PieceSink = (text: string, s: number, e: number, origin: boolean) => void;

/** Finds a scanner for a pre-tokenizer configuration (as tokenizer.json spells it), or null. */
export type ScannerLookup = (preTokenizer: unknown) => PieceScanner | null;

export type PreTokenizerBuild =
  | {
      readonly ok: true;
      /** Composes the chain in front of `sink`. */
      readonly chain: (sink: PieceSink) => PieceSink;
      /** Whether the chain ends in ByteLevel: the model reads bytes. */
      readonly byteLevel: boolean;
      /** What runs each pattern: one line per Split or ByteLevel pattern. */
      readonly notes: readonly string[];
      /** When the whole chain is one scanner that only cuts: it (the pipeline then runs it inline). */
      readonly scanner: PieceScanner | null;
    }
  | { readonly ok: false; readonly unsupported: string };

type Json = Record<string, unknown>;
type Stage = (next: PieceSink) => PieceSink;

function scannerStage(scanner: PieceScanner): Stage {
  return (next) => {
    const ends = new Int32List(64);
    return (text, s, e, origin) => {
      ends.length = 0;
      scanner.scan(text, s, e, ends);
      // the next stages have lists of their own: this one is not touched until the loop ends
      const n = ends.length;
      const list = ends.data;
      let a = s;
      for (let i = 0; i < n; i++) {
        const b = list[i] as number;
        if (b > a) next(text, a, b, origin && a === s);
        a = b;
      }
    };
  };
}

function regexStage(re: RegExp, behavior: SplitBehavior, invert: boolean): Stage {
  return (next) => (text, s, e, origin) => {
    const sub = s === 0 && e === text.length ? text : text.slice(s, e);
    const spans = splitSpans(re, sub, behavior, invert);
    for (let i = 0; i < spans.length; i += 2) {
      const a = spans[i] as number;
      next(sub, a, spans[i + 1] as number, origin && a === 0);
    }
  };
}

/** Splits every piece at each code point of `set`: `isolated` (each alone) or runs kept together. */
function classStage(member: (cp: number) => boolean, mode: "isolated" | "contiguous" | "removed"): Stage {
  return (next) => (text, s, e, origin) => {
    let start = s;
    let runIn: boolean | null = null;
    let i = s;
    while (i < e) {
      const cp = text.codePointAt(i) as number;
      const w = cp > 0xffff ? 2 : 1;
      const inSet = member(cp);
      if (mode === "isolated") {
        if (inSet) {
          if (i > start) next(text, start, i, origin && start === s);
          next(text, i, i + w, origin && i === s);
          start = i + w;
        }
      } else if (mode === "removed") {
        if (inSet) {
          if (i > start) next(text, start, i, origin && start === s);
          start = i + w;
        }
      } else if (runIn !== null && inSet !== runIn) {
        next(text, start, i, origin && start === s);
        start = i;
      }
      runIn = inSet;
      i += w;
    }
    if (e > start) next(text, start, e, origin && start === s);
  };
}

let numeric: CodePointSet | null = null;
/** Rust's `char::is_numeric` (General_Category N). */
function isNumeric(cp: number): boolean {
  if (cp < 0x80) return cp >= 0x30 && cp <= 0x39;
  numeric ??= (propertyLeaf("N", false) as { set: CodePointSet }).set;
  return has(numeric, cp);
}

/** tokenizers' Whitespace pattern `\w+|[^\w\s]+` with the `regex` crate's classes (it is not Oniguruma). */
function whitespaceRegex(): RegExp {
  const w = regexCrateLeaf("w").set;
  const other = complement(union(w, regexCrateLeaf("s").set));
  return new RegExp(`[${rangesV(w)}]+|[${rangesV(other)}]+`, "gv");
}

interface BuildState {
  readonly scannerFor: ScannerLookup;
  readonly notes: string[];
  byteLevel: boolean;
  /** The scanners used, in order, and whether any other stage was built. */
  readonly scanners: PieceScanner[];
  other: boolean;
}

function build(p: Json, where: string, st: BuildState): Stage | string {
  if (st.byteLevel) return `${where} ${String(p["type"])} after ByteLevel`;
  switch (p["type"]) {
    case "Sequence": {
      const parts = p["pretokenizers"];
      if (!Array.isArray(parts)) return `${where} Sequence without "pretokenizers"`;
      const scanned = st.scannerFor(p);
      if (scanned !== null) {
        // a scanner for the whole sequence (its last part may be a ByteLevel without a pattern)
        const last = parts[parts.length - 1] as Json | undefined;
        if (last?.["type"] === "ByteLevel") {
          if (last["add_prefix_space"] === true || last["use_regex"] !== false) return `${where} Sequence: its scanner does not cover ByteLevel's own settings`;
          st.byteLevel = true;
        }
        st.notes.push(`${where}: scanner ${scanned.family}`);
        st.scanners.push(scanned);
        return scannerStage(scanned);
      }
      const stages: Stage[] = [];
      for (let i = 0; i < parts.length; i++) {
        const q = parts[i] as unknown;
        if (q === null || typeof q !== "object") return `${where}.pretokenizers[${i}] is not an object`;
        const s = build(q as Json, `${where}.pretokenizers[${i}]`, st);
        if (typeof s === "string") return s;
        stages.push(s);
      }
      return (next) => {
        let sink = next;
        for (let i = stages.length - 1; i >= 0; i--) sink = (stages[i] as Stage)(sink);
        return sink;
      };
    }
    case "Split": {
      const behavior = p["behavior"];
      if (typeof behavior !== "string" || !SPLIT_BEHAVIORS.has(behavior)) return `${where} Split behavior ${String(behavior)}`;
      const invert = p["invert"] === true;
      const scanner = st.scannerFor(p);
      if (scanner !== null) {
        st.notes.push(`${where} Split: scanner ${scanner.family}`);
        st.scanners.push(scanner);
        return scannerStage(scanner);
      }
      st.other = true;
      const re = compilePattern(p["pattern"]);
      if (typeof re === "string") return `${where} Split: ${re}`;
      st.notes.push(`${where} Split: Oniguruma translation`);
      return regexStage(re, behavior as SplitBehavior, invert);
    }
    case "ByteLevel": {
      st.byteLevel = true;
      const addPrefix = p["add_prefix_space"] === true;
      const useRegex = p["use_regex"] !== false;
      let split: Stage | null = null;
      if (useRegex) {
        // the prefix space is this stage's own business: the scanner only cuts
        const scanner = st.scannerFor({ ...p, add_prefix_space: false });
        if (scanner !== null) {
          st.notes.push(`${where} ByteLevel: scanner ${scanner.family}`);
          st.scanners.push(scanner);
          split = scannerStage(scanner);
        } else {
          st.other = true;
          st.notes.push(`${where} ByteLevel: Oniguruma translation of the GPT-2 pattern`);
          split = regexStage(translateOniguruma(GPT2_PATTERN).regex, "Isolated", false);
        }
      }
      if (!addPrefix) return split ?? ((next) => next);
      st.other = true;
      return (next) => {
        const inner = split === null ? next : split(next);
        return (text, s, e, origin) => {
          if (text.charCodeAt(s) === 0x20) inner(text, s, e, origin);
          else {
            const t = " " + text.slice(s, e);
            inner(t, 0, t.length, origin);
          }
        };
      };
    }
    case "Metaspace": {
      const rep = p["replacement"];
      if (typeof rep !== "string" || [...rep].length !== 1) return `${where} Metaspace replacement ${String(rep)}`;
      let scheme = p["prepend_scheme"];
      if (scheme === undefined) scheme = p["add_prefix_space"] === false ? "never" : "always";
      if (scheme !== "always" && scheme !== "first" && scheme !== "never") return `${where} Metaspace prepend_scheme ${String(scheme)}`;
      const split = p["split"] !== false;
      st.other = true;
      return (next) => (text, s, e, origin) => {
        let t = text.slice(s, e);
        if (t.includes(" ")) t = t.split(" ").join(rep);
        if ((scheme === "always" || (scheme === "first" && origin)) && !t.startsWith(rep)) t = rep + t;
        if (!split) {
          next(t, 0, t.length, origin);
          return;
        }
        // MergedWithNext on the replacement: a piece starts at every replacement
        let a = 0;
        for (let i = t.indexOf(rep, 1); i > 0; i = t.indexOf(rep, i + rep.length)) {
          next(t, a, i, origin && a === 0);
          a = i;
        }
        if (t.length > a) next(t, a, t.length, origin && a === 0);
      };
    }
    case "Digits":
      st.other = true;
      return classStage(isNumeric, p["individual_digits"] === true ? "isolated" : "contiguous");
    case "WhitespaceSplit":
      st.other = true;
      return classStage(isRustWhitespace, "removed");
    case "Whitespace":
      st.other = true;
      return regexStage(whitespaceRegex(), "Removed", true);
    default:
      return `${where} ${String(p["type"])}`;
  }
}

/** The pre-tokenizer of tokenizer.json (`null`: none; the whole section is one word). */
export function buildPreTokenizer(p: unknown, scannerFor: ScannerLookup): PreTokenizerBuild {
  if (p === null || p === undefined) return { ok: true, chain: (sink) => sink, byteLevel: false, notes: [], scanner: null };
  if (typeof p !== "object" || Array.isArray(p)) return { ok: false, unsupported: "pre_tokenizer is not an object" };
  const st: BuildState = { scannerFor, notes: [], byteLevel: false, scanners: [], other: false };
  let stage: Stage | string;
  try {
    stage = build(p as Json, "pre_tokenizer", st);
  } catch (e) {
    return { ok: false, unsupported: `pre_tokenizer: ${(e as Error)?.message ?? e}` };
  }
  if (typeof stage === "string") return { ok: false, unsupported: stage };
  const only = !st.other && st.scanners.length === 1 ? (st.scanners[0] as PieceScanner) : null;
  return { ok: true, chain: stage, byteLevel: st.byteLevel, notes: st.notes, scanner: only };
}
