/**
 * UTF-8 of a range of a JavaScript string into a byte buffer, as the Rust crate receives text: a
 * lone surrogate (which a Rust `str` cannot hold) becomes U+FFFD. The models encode each piece's
 * bytes with it.
 *
 * Layer: encoder (model).
 */

/**
 * Writes the UTF-8 of text[s, e) into `b` (which must hold 3 × (e − s) bytes: no code unit takes
 * more) and returns the number of bytes written.
 */
export function utf8Into(text: string, s: number, e: number, b: Uint8Array): number {
  let n = 0;
  for (let i = s; i < e; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      b[n++] = c;
      continue;
    }
    if (c < 0x800) {
      b[n++] = 0xc0 | (c >> 6);
      b[n++] = 0x80 | (c & 63);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = i + 1 < e ? text.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
        b[n++] = 0xf0 | (c >> 18);
        b[n++] = 0x80 | ((c >> 12) & 63);
        b[n++] = 0x80 | ((c >> 6) & 63);
        b[n++] = 0x80 | (c & 63);
        continue;
      }
      c = 0xfffd;
    }
    b[n++] = 0xe0 | (c >> 12);
    b[n++] = 0x80 | ((c >> 6) & 63);
    b[n++] = 0x80 | (c & 63);
  }
  return n;
}
