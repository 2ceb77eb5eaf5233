/**
 * GPT-2's byte alphabet (tokenizers' `bytes_to_unicode`): each of the 256 byte values as one
 * printable character, the printable Latin-1 bytes as themselves and the others as U+0100 on, in
 * byte order. Byte-level vocabularies spell their tokens in it; deltatok's BPE works on the bytes
 * themselves and uses the alphabet only to read and write those spellings.
 *
 * Layer: encoder.
 */

/** `CHAR_OF_BYTE[b]`: the UTF-16 unit byte b is spelled with. */
export const CHAR_OF_BYTE: Uint16Array = (() => {
  const out = new Uint16Array(256);
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    out[b] = printable ? b : next++;
  }
  return out;
})();

/** `BYTE_OF_CHAR[u]`: the byte a unit below 324 spells, or -1. */
export const BYTE_OF_CHAR: Int16Array = (() => {
  const out = new Int16Array(324).fill(-1);
  for (let b = 0; b < 256; b++) out[CHAR_OF_BYTE[b] as number] = b;
  return out;
})();

/** The byte-alphabet spelling of `bytes`. */
export function spellBytes(bytes: ArrayLike<number>, from = 0, to = bytes.length): string {
  let s = "";
  for (let i = from; i < to; i++) s += String.fromCharCode(CHAR_OF_BYTE[bytes[i] as number] as number);
  return s;
}

/** The bytes a byte-alphabet spelling stands for, or null when a unit is not in the alphabet. */
export function bytesOfSpelling(s: string): Uint8Array | null {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    const b = u < 324 ? (BYTE_OF_CHAR[u] as number) : -1;
    if (b < 0) return null;
    out[i] = b;
  }
  return out;
}
