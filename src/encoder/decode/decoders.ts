/**
 * tokenizer.json decoders, with the Rust crate's semantics (decoders/*.rs): each takes the list
 * of token strings and returns a list (`decode_chain`); `Tokenizer::decode` joins the final list.
 * ByteLevel, ByteFallback, Fuse, Strip, Replace, Metaspace, WordPiece, BPEDecoder, Sequence.
 *
 * Layer: encoder.
 */

import { BYTE_OF_CHAR } from "../model/byte-alphabet.js";
import { replaceText } from "../regex/pattern-split.js";
import { compilePattern } from "../normalize/normalizers.js";

export type DecodeChain = (tokens: string[]) => string[];

export type DecoderBuild = { readonly ok: true; readonly chain: DecodeChain | null } | { readonly ok: false; readonly unsupported: string };

type Json = Record<string, unknown>;

const lossy = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const utf8 = new TextEncoder();

/** ByteLevel: every token's characters as bytes (a token outside the alphabet as its UTF-8), one lossy UTF-8 string. */
function byteLevel(tokens: string[]): string[] {
  let n = 0;
  for (const t of tokens) n += t.length * 3;
  const buf = new Uint8Array(n);
  let at = 0;
  for (const t of tokens) {
    let ok = true;
    for (let i = 0; i < t.length; i++) {
      const c = t.charCodeAt(i);
      const b = c < 324 ? (BYTE_OF_CHAR[c] as number) : -1;
      if (b < 0) {
        ok = false;
        break;
      }
      buf[at + i] = b;
    }
    if (ok) at += t.length;
    else at += utf8.encodeInto(t, buf.subarray(at)).written;
  }
  return [lossy.decode(buf.subarray(0, at))];
}

/** The byte of a `<0xXX>` token (Rust's `u8::from_str_radix` on its two characters), or -1. */
function fallbackByte(t: string): number {
  if (t.length !== 6 || !t.startsWith("<0x") || t.charCodeAt(5) !== 0x3e) return -1;
  const h = t.slice(3, 5);
  if (!/^\+?[0-9A-Fa-f]+$/.test(h)) return -1;
  return parseInt(h, 16);
}

function byteFallback(tokens: string[]): string[] {
  const out: string[] = [];
  let pending: number[] = [];
  const flush = (): void => {
    if (pending.length === 0) return;
    try {
      out.push(strict.decode(new Uint8Array(pending)));
    } catch {
      for (let i = 0; i < pending.length; i++) out.push("\ufffd");
    }
    pending = [];
  };
  for (const t of tokens) {
    const b = fallbackByte(t);
    if (b >= 0) pending.push(b);
    else {
      flush();
      out.push(t);
    }
  }
  flush();
  return out;
}

function stripChars(content: string, start: number, stop: number): DecodeChain {
  return (tokens) =>
    tokens.map((t) => {
      const chars = Array.from(t);
      let a = 0;
      while (a < start && a < chars.length && chars[a] === content) a++;
      let b = chars.length;
      let k = 0;
      while (k < stop && b > a && chars[b - 1] === content) {
        b--;
        k++;
      }
      return chars.slice(a, b).join("");
    });
}

function one(d: Json, where: string): DecodeChain | string {
  switch (d["type"]) {
    case "ByteLevel":
      return byteLevel;
    case "ByteFallback":
      return byteFallback;
    case "Fuse":
      return (tokens) => [tokens.join("")];
    case "Strip": {
      const content = d["content"];
      const start = d["start"];
      const stop = d["stop"];
      if (typeof content !== "string" || Array.from(content).length !== 1 || typeof start !== "number" || typeof stop !== "number") return `${where} Strip settings`;
      return stripChars(content, start, stop);
    }
    case "Replace": {
      const re = compilePattern(d["pattern"]);
      const content = d["content"];
      if (typeof re === "string") return `${where} Replace: ${re}`;
      if (typeof content !== "string") return `${where} Replace without a string "content"`;
      return (tokens) => tokens.map((t) => replaceText(re, t, content));
    }
    case "Metaspace": {
      const rep = d["replacement"];
      if (typeof rep !== "string") return `${where} Metaspace replacement`;
      let scheme = d["prepend_scheme"];
      if (scheme === undefined) scheme = d["add_prefix_space"] === false ? "never" : "always";
      return (tokens) =>
        tokens.map((t, i) => {
          let out = "";
          for (const c of t) {
            if (c === rep) {
              if (!(i === 0 && scheme !== "never")) out += " ";
            } else out += c;
          }
          return out;
        });
    }
    case "WordPiece": {
      const prefix = typeof d["prefix"] === "string" ? d["prefix"] : "##";
      const cleanup = d["cleanup"] !== false;
      return (tokens) =>
        tokens.map((t, i) => {
          let s = t;
          if (i !== 0) s = s.startsWith(prefix) ? s.slice(prefix.length) : " " + s;
          if (cleanup) s = wordPieceCleanup(s);
          return s;
        });
    }
    case "BPEDecoder": {
      const suffix = typeof d["suffix"] === "string" ? d["suffix"] : "</w>";
      return (tokens) => tokens.map((t, i) => t.split(suffix).join(i === tokens.length - 1 ? "" : " "));
    }
    case "Sequence": {
      const parts = d["decoders"];
      if (!Array.isArray(parts)) return `${where} Sequence without "decoders"`;
      const chains: DecodeChain[] = [];
      for (let i = 0; i < parts.length; i++) {
        const p = parts[i] as unknown;
        if (p === null || typeof p !== "object") return `${where}.decoders[${i}] is not an object`;
        const c = one(p as Json, `${where}.decoders[${i}]`);
        if (typeof c === "string") return c;
        chains.push(c);
      }
      return (tokens) => {
        for (const c of chains) tokens = c(tokens);
        return tokens;
      };
    }
    default:
      return `${where} ${String(d["type"])}`;
  }
}

/** decoders/wordpiece.rs `cleanup`: spaces before punctuation and contractions. */
function wordPieceCleanup(s: string): string {
  return s
    .split(" .").join(".")
    .split(" ?").join("?")
    .split(" !").join("!")
    .split(" ,").join(",")
    .split(" ' ").join("'")
    .split(" n't").join("n't")
    .split(" 'm").join("'m")
    .split(" do not").join(" don't")
    .split(" 's").join("'s")
    .split(" 've").join("'ve")
    .split(" 're").join("'re");
}

/** The decoder of tokenizer.json (`null`: none, tokens are joined with spaces). */
export function buildDecoder(d: unknown): DecoderBuild {
  if (d === null || d === undefined) return { ok: true, chain: null };
  if (typeof d !== "object" || Array.isArray(d)) return { ok: false, unsupported: "decoder is not an object" };
  const c = one(d as Json, "decoder");
  return typeof c === "string" ? { ok: false, unsupported: c } : { ok: true, chain: c };
}
