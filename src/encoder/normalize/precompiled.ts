/**
 * tokenizer.json's `Precompiled` normalizer (SentencePiece's charsmap inside a tokenizer.json) as
 * the Rust crate applies it (normalizers/precompiled.rs over spm_precompiled), which is not how
 * sentencepiece applies the same charsmap (sentencepiece-normalizer.ts):
 *
 * - the text is cut into extended grapheme clusters;
 * - a cluster of fewer than 6 UTF-8 bytes that some rule prefixes is replaced whole by the
 *   replacement of the shortest such rule (so "Ａ" + U+0301 becomes "A": the accent goes);
 * - otherwise each character of the cluster is replaced by its own shortest rule, or kept.
 *
 * Rule search stops at a NUL byte, as darts' does. Clusters come from `Intl.Segmenter`; an ASCII
 * text is cut without it (every ASCII character is its own cluster except CR LF).
 *
 * Layer: encoder.
 */

import { DeltatokError } from "../../errors.js";
import { PrecompiledCharsmap } from "./precompiled-charsmap.js";

const encoder = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;
const MAX_WHOLE = 6;

/** Builds the normalizer from the charsmap blob (tokenizer.json's base64, decoded). */
export function precompiledNormalizer(blob: Uint8Array): (s: string) => string {
  if (blob.length < 4) throw new DeltatokError("DT_TOKENIZER_INVALID", "the Precompiled normalizer's charsmap is shorter than its 4-byte header");
  const trieSize = new DataView(blob.buffer, blob.byteOffset, blob.byteLength).getUint32(0, true);
  if (trieSize > blob.length - 4) throw new DeltatokError("DT_TOKENIZER_INVALID", "the Precompiled normalizer's charsmap is truncated");
  try {
    strictUtf8.decode(blob.subarray(4 + trieSize - (trieSize % 4)));
  } catch (e) {
    throw new DeltatokError("DT_TOKENIZER_INVALID", "the Precompiled normalizer's replacement strings are not UTF-8", { cause: e });
  }
  const map = new PrecompiledCharsmap(blob);
  const replacements = new Map<Uint8Array, string>();
  const replacement = (): string => {
    const r = map.replacement;
    let s = replacements.get(r);
    if (s === undefined) {
      s = new TextDecoder().decode(r);
      replacements.set(r, s);
    }
    return s;
  };
  let buf = new Uint8Array(64);
  const one = (g: string, out: string[]): boolean => {
    // true when something was replaced
    if (buf.length < g.length * 3) buf = new Uint8Array(g.length * 6);
    const n = encoder.encodeInto(g, buf).written;
    if (n < MAX_WHOLE && map.shortestRule(buf, 0, n) > 0) {
      out.push(replacement());
      return true;
    }
    let changed = false;
    for (let i = 0; i < g.length; ) {
      const cp = g.codePointAt(i) as number;
      const w = cp > 0xffff ? 2 : 1;
      const c = g.slice(i, i + w);
      const m = encoder.encodeInto(c, buf).written;
      if (map.shortestRule(buf, 0, m) > 0) {
        out.push(replacement());
        changed = true;
      } else out.push(c);
      i += w;
    }
    return changed;
  };
  // each ASCII character alone: its replacement, or null
  const ascii: Array<string | null> = [];
  for (let c = 0; c < 128; c++) {
    const o: string[] = [];
    ascii.push(one(String.fromCharCode(c), o) ? o.join("") : null);
  }
  const segmenter = new Intl.Segmenter("en", { granularity: "grapheme" });
  return (s) => {
    if (s.length === 0) return s;
    const out: string[] = [];
    let changed = false;
    if (ASCII.test(s)) {
      for (let i = 0; i < s.length; ) {
        const u = s.charCodeAt(i);
        if (u === 0x0d && s.charCodeAt(i + 1) === 0x0a) {
          if (one("\r\n", out)) changed = true;
          i += 2;
          continue;
        }
        const r = ascii[u] as string | null;
        if (r === null) out.push(s[i] as string);
        else {
          out.push(r);
          changed = true;
        }
        i++;
      }
    } else {
      for (const { segment } of segmenter.segment(s)) if (one(segment, out)) changed = true;
    }
    return changed ? out.join("") : s;
  };
}
