/**
 * Strict standard base64 (RFC 4648 alphabet `A–Z a–z 0–9 + /`, `=` padding to a multiple of
 * four) for the token fields of tiktoken rank files and tekken.json. Python's `b64decode`
 * (what tiktoken and mistral-common call) silently drops characters outside the alphabet; this
 * refuses them instead, so a damaged file is reported rather than read differently.
 * Non-zero unused bits in the last character are accepted, as Python accepts them.
 *
 * Layer: load. Imports nothing.
 */

const VALUES = new Int8Array(256).fill(-1);
for (let i = 0; i < 64; i++) {
  VALUES["ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".charCodeAt(i)] = i;
}
const PAD = 0x3d;

/**
 * Decodes `src[start, end)` (ASCII bytes) into `out` at `outPos`; returns the number of bytes
 * written, or -1 when the text is not strict base64. `out` must have room for
 * `3 * (end - start) / 4` bytes.
 */
export function decodeBase64Into(src: Uint8Array, start: number, end: number, out: Uint8Array, outPos: number): number {
  const length = end - start;
  if (length === 0 || length % 4 !== 0) return -1;
  let pad = 0;
  if (src[end - 1] === PAD) pad = src[end - 2] === PAD ? 2 : 1;
  const dataEnd = end - pad;
  let o = outPos;
  let acc = 0;
  let bits = 0;
  for (let i = start; i < dataEnd; i++) {
    const v = VALUES[src[i] as number] as number;
    if (v < 0) return -1;
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >>> bits) & 0xff;
    }
  }
  return o - outPos;
}

/** Decodes a base64 string; null when it is not strict base64. */
export function decodeBase64(text: string): Uint8Array | null {
  const src = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) return null;
    src[i] = c;
  }
  const out = new Uint8Array(Math.floor((3 * src.length) / 4));
  const n = decodeBase64Into(src, 0, src.length, out, 0);
  return n < 0 ? null : out.subarray(0, n);
}
