/**
 * tokenizer.json normalizers as functions string → string, with the Rust crate's semantics
 * (normalizers/*.rs): NFC, NFD, NFKC, NFKD, Lowercase, Strip, Replace, Prepend, Precompiled
 * (precompiled.ts), Sequence.
 * A component this module does not implement is reported by name (the caller then falls back
 * to the library, loudly).
 *
 * Offsets are not tracked here: the encoder needs ids only (src/tokenize/offsets.ts maps
 * offsets itself).
 *
 * Layer: encoder.
 */

import { literalPattern, PatternNotTranslated, translateOniguruma } from "../regex/oniguruma.js";
import { replaceText } from "../regex/pattern-split.js";
import { precompiledNormalizer } from "./precompiled.js";
import { TABLE_UNICODE, UNKNOWN_TO_RUST } from "./rust-normalization-table.js";

export type Normalize = (s: string) => string;

/** A built normalizer, or what kept it from being built. */
export type NormalizerBuild =
  | { readonly ok: true; readonly normalize: Normalize | null; readonly movesStart: boolean; readonly inexact?: string }
  | { readonly ok: false; readonly unsupported: string };

type Json = Record<string, unknown>;

/** Rust's `char::is_whitespace`: the White_Space property. */
export function isRustWhitespace(cp: number): boolean {
  if (cp <= 0x20) return cp === 0x20 || (cp >= 0x09 && cp <= 0x0d);
  if (cp < 0x85) return false;
  return (
    cp === 0x85 ||
    cp === 0xa0 ||
    cp === 0x1680 ||
    (cp >= 0x2000 && cp <= 0x200a) ||
    cp === 0x2028 ||
    cp === 0x2029 ||
    cp === 0x202f ||
    cp === 0x205f ||
    cp === 0x3000
  );
}

let unknown: { bmp: Uint8Array; astral: readonly number[] } | null = null;

/** Whether the Rust crate's normalizers do not know `cp` (rust-normalization-table.ts). */
function unknownToRust(cp: number): boolean {
  if (unknown === null) {
    const bmp = new Uint8Array(65536);
    const astral: number[] = [];
    for (let i = 0; i < UNKNOWN_TO_RUST.length; i += 2) {
      for (let c = UNKNOWN_TO_RUST[i] as number; c <= (UNKNOWN_TO_RUST[i + 1] as number); c++) {
        if (c < 65536) bmp[c] = 1;
        else astral.push(c);
      }
    }
    unknown = { bmp, astral };
  }
  return cp < 65536 ? unknown.bmp[cp] === 1 : unknown.astral.includes(cp);
}

const FIRST_UNKNOWN = UNKNOWN_TO_RUST[0] ?? 0x110000;

/**
 * A Unicode normal form as the Rust crate computes it: the crate's tables are of an older Unicode,
 * and a character they do not know is kept as it is and never combines, so the text is normalized
 * by this Node in the stretches between such characters.
 */
function unicodeNormalize(s: string, form: "NFC" | "NFD" | "NFKC" | "NFKD"): string {
  // below this every form is the identity: ASCII for all four, and for NFC everything before the
  // first combining mark (U+0300; the precomposed Latin-1 letters are already composed)
  const plain = form === "NFC" ? 0x300 : 0x80;
  let from = 0;
  let out = "";
  let changes = false;
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    if (u < plain) continue;
    changes = true;
    if (u < FIRST_UNKNOWN) continue;
    const cp = s.codePointAt(i) as number;
    const w = cp > 0xffff ? 2 : 1;
    if (unknownToRust(cp)) {
      out += s.slice(from, i).normalize(form) + s.slice(i, i + w);
      from = i + w;
    }
    i += w - 1;
  }
  if (!changes) return s;
  return from === 0 ? s.normalize(form) : out + s.slice(from).normalize(form);
}

/**
 * Rust's `char::to_lowercase` on every character: JavaScript's `toLowerCase` without its one
 * context rule (a final capital sigma becomes ς in JavaScript, σ in Rust).
 */
function lowercase(s: string): string {
  if (!s.includes("\u03a3")) return s.toLowerCase();
  return s.split("\u03a3").map((p) => p.toLowerCase()).join("\u03c3");
}

function strip(left: boolean, right: boolean): Normalize {
  return (s) => {
    let a = 0;
    let b = s.length;
    if (left) while (a < b && isRustWhitespace(s.charCodeAt(a))) a++;
    if (right) while (b > a && isRustWhitespace(s.charCodeAt(b - 1))) b--;
    return a === 0 && b === s.length ? s : s.slice(a, b);
  };
}

/** A `{"String": ...}` / `{"Regex": ...}` pattern compiled with Oniguruma's semantics, or why not. */
export function compilePattern(p: unknown): RegExp | string {
  if (p === null || typeof p !== "object" || Array.isArray(p)) return "pattern is not an object";
  const keys = Object.keys(p);
  if (keys.length !== 1) return "pattern must be {String} or {Regex}";
  const value = (p as Json)[keys[0] as string];
  if (typeof value !== "string") return "pattern value is not a string";
  if (keys[0] === "String") return literalPattern(value).regex;
  if (keys[0] !== "Regex") return `pattern kind "${keys[0]}"`;
  try {
    return translateOniguruma(value).regex;
  } catch (e) {
    if (e instanceof PatternNotTranslated) return `pattern not translated: ${e.message}`;
    return `the pattern translator failed: ${(e as Error)?.message ?? e}`;
  }
}

function one(n: Json, where: string): NormalizerBuild {
  switch (n["type"]) {
    case "NFC":
    case "NFD":
    case "NFKC":
    case "NFKD": {
      const form = n["type"] as "NFC" | "NFD" | "NFKC" | "NFKD";
      const normalize: Normalize = (s) => unicodeNormalize(s, form);
      if (process.versions.unicode !== TABLE_UNICODE) {
        // characters new since the table was made may normalize differently from the crate
        return { ok: true, normalize, movesStart: false, inexact: `${where} ${form}: the table of the Rust crate's differences is for Unicode ${TABLE_UNICODE}, this Node has ${process.versions.unicode ?? "?"}` };
      }
      return { ok: true, normalize, movesStart: false };
    }
    case "Lowercase":
      return { ok: true, normalize: lowercase, movesStart: false };
    case "Strip": {
      const left = n["strip_left"] !== false;
      const right = n["strip_right"] !== false;
      return { ok: true, normalize: strip(left, right), movesStart: left };
    }
    case "Prepend": {
      const p = n["prepend"];
      if (typeof p !== "string") return { ok: false, unsupported: `${where} Prepend without a string "prepend"` };
      return { ok: true, normalize: (s) => (s.length === 0 ? s : p + s), movesStart: false };
    }
    case "Replace": {
      const re = compilePattern(n["pattern"]);
      const content = n["content"];
      if (typeof re === "string") return { ok: false, unsupported: `${where} Replace: ${re}` };
      if (typeof content !== "string") return { ok: false, unsupported: `${where} Replace without a string "content"` };
      const literal = (n["pattern"] as Json)["String"];
      if (typeof literal === "string" && literal.length > 0) {
        return { ok: true, normalize: (s) => (s.includes(literal) ? s.split(literal).join(content) : s), movesStart: content === "" };
      }
      return { ok: true, normalize: (s) => replaceText(re, s, content), movesStart: true };
    }
    case "Sequence": {
      const parts = n["normalizers"];
      if (!Array.isArray(parts)) return { ok: false, unsupported: `${where} Sequence without "normalizers"` };
      const fns: Normalize[] = [];
      let movesStart = false;
      let inexact: string | undefined;
      for (let i = 0; i < parts.length; i++) {
        const p = parts[i] as unknown;
        if (p === null || typeof p !== "object") return { ok: false, unsupported: `${where}.normalizers[${i}] is not an object` };
        const b = one(p as Json, `${where}.normalizers[${i}]`);
        if (!b.ok) return b;
        if (b.normalize !== null) fns.push(b.normalize);
        movesStart ||= b.movesStart;
        inexact ??= b.inexact;
      }
      const flags = { movesStart, ...(inexact === undefined ? {} : { inexact }) };
      if (fns.length === 0) return { ok: true, normalize: null, ...flags };
      if (fns.length === 1) return { ok: true, normalize: fns[0] as Normalize, ...flags };
      return {
        ok: true,
        normalize: (s) => {
          for (const f of fns) s = f(s);
          return s;
        },
        ...flags,
      };
    }
    case "Precompiled": {
      const b64 = n["precompiled_charsmap"];
      if (typeof b64 !== "string") return { ok: false, unsupported: `${where} Precompiled without a string "precompiled_charsmap"` };
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 !== 0) return { ok: false, unsupported: `${where} Precompiled: precompiled_charsmap is not standard base64` };
      return { ok: true, normalize: precompiledNormalizer(Buffer.from(b64, "base64")), movesStart: true };
    }
    default:
      return { ok: false, unsupported: `${where} ${String(n["type"])}` };
  }
}

/** The normalizer of tokenizer.json (`null`: none). */
export function buildNormalizer(n: unknown): NormalizerBuild {
  if (n === null || n === undefined) return { ok: true, normalize: null, movesStart: false };
  if (typeof n !== "object" || Array.isArray(n)) return { ok: false, unsupported: "normalizer is not an object" };
  return one(n as Json, "normalizer");
}
