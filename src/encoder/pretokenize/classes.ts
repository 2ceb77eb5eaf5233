/**
 * Character classes for the scanners: per code point, the bits of the Unicode classes the
 * pre-tokenizer pattern families test (letters by case, marks, numbers, punctuation, symbols,
 * `\s`, the Han script), in a two-level lookup built once per process and flavor.
 *
 * A flavor is a regex engine's own idea of those classes (its Unicode version, its `\s`): the
 * Oniguruma that the Rust `tokenizers` crate runs (class-sources.ts, from the translator's tables)
 * or the Rust `regex` crate that tiktoken runs (from tables read off tiktoken). Never the running
 * Node's `\p{...}`, whose Unicode version is neither.
 *
 * Layout: `bmp` is one Uint16 per code point below U+10000 (128 KiB), lone surrogates included
 * (they are in no class: a lone surrogate is "anything else", as the `v`-flag regex path reads it);
 * the astral planes are 256-code-point blocks, deduplicated: `index` (4,096 Uint16) names each
 * block's row in `blocks`. `bytes` says what one table holds: 188,928 bytes (97 distinct astral
 * blocks) for either flavor.
 *
 * Layer: encoder.
 */

import type { CodePointSet } from "../regex/unicode-sets.js";

// ---- class bits -----------------------------------------------------------------------------------

export const LU = 1 << 0;
export const LL = 1 << 1;
export const LT = 1 << 2;
export const LM = 1 << 3;
export const LO = 1 << 4;
/** Mark (Mn, Mc, Me). */
export const MARK = 1 << 5;
/** Number (Nd, Nl, No). */
export const NUM = 1 << 6;
/** Punctuation (Pc, Pd, Ps, Pe, Pi, Pf, Po). */
export const PUNCT = 1 << 7;
/** Symbol (Sm, Sc, Sk, So). */
export const SYM = 1 << 8;
/** The regex engine's `\s` (White_Space: U+0085 in, U+FEFF out). Every member is below U+10000. */
export const SPACE = 1 << 9;
/** Script=Han. */
export const HAN = 1 << 10;

/** Letter (`\p{L}`). */
export const LETTER = LU | LL | LT | LM | LO;
/** `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`: what may start a word in the o200k patterns. */
export const UPPERISH = LU | LT | LM | LO | MARK;
/** `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`: what may end one. */
export const LOWERISH = LL | LM | LO | MARK;

/** The classes a source gives, by name. */
export const CLASS_BITS = {
  Lu: LU, Ll: LL, Lt: LT, Lm: LM, Lo: LO, M: MARK, N: NUM, P: PUNCT, S: SYM, White_Space: SPACE, Han: HAN,
} as const;
export type ClassName = keyof typeof CLASS_BITS;

/** Where a flavor's class members come from. */
export interface ClassSource {
  /** The regex engine these classes are: "oniguruma" (Rust `tokenizers`) or "rust-regex" (tiktoken). */
  readonly flavor: string;
  /** Members of every class, as sorted flat inclusive ranges (unicode-sets.ts). Called once. */
  sets(): Readonly<Record<ClassName, CodePointSet>>;
}

// ---- the table ------------------------------------------------------------------------------------

const BLOCK_SHIFT = 8;
const BLOCK = 1 << BLOCK_SHIFT;
const ASTRAL_BLOCKS = 0x100000 >> BLOCK_SHIFT;

/** A flavor's classes, as a lookup. */
export interface ClassTable {
  readonly flavor: string;
  /** Class bits of U+0000..U+FFFF. */
  readonly bmp: Uint16Array;
  /** Row (in blocks of 256) of each astral block in `blocks`. */
  readonly index: Uint16Array;
  readonly blocks: Uint16Array;
  /** Memory held by the three arrays. */
  readonly bytes: number;
}

/** Class bits of a code point (a lone surrogate has none). */
export function classOf(t: ClassTable, cp: number): number {
  if (cp < 0x10000) return t.bmp[cp] as number;
  return t.blocks[((t.index[(cp - 0x10000) >> BLOCK_SHIFT] as number) << BLOCK_SHIFT) | (cp & (BLOCK - 1))] as number;
}

/** Builds the table of a source (about 10 ms; 2.2 MB of scratch, dropped). */
export function buildClassTable(source: ClassSource): ClassTable {
  const sets = source.sets();
  const flat = new Uint16Array(0x110000);
  for (const name of Object.keys(CLASS_BITS) as ClassName[]) {
    const bit = CLASS_BITS[name];
    const set = sets[name];
    if (set === undefined) throw new Error(`class source ${source.flavor}: no ${name}`);
    for (let i = 0; i < set.length; i += 2) {
      const s = set[i] as number;
      const e = set[i + 1] as number;
      if (bit === SPACE && e > 0xffff) throw new Error(`class source ${source.flavor}: a \\s member above U+FFFF`);
      for (let c = s; c <= e; c++) flat[c] = (flat[c] as number) | bit;
    }
  }
  for (let c = 0xd800; c <= 0xdfff; c++) flat[c] = 0;
  const bmp = flat.slice(0, 0x10000);
  const index = new Uint16Array(ASTRAL_BLOCKS);
  const rows = new Map<string, number>();
  const unique: Uint16Array[] = [];
  for (let b = 0; b < ASTRAL_BLOCKS; b++) {
    const from = 0x10000 + (b << BLOCK_SHIFT);
    const block = flat.subarray(from, from + BLOCK);
    const key = String.fromCharCode(...block);
    let row = rows.get(key);
    if (row === undefined) {
      row = unique.length;
      rows.set(key, row);
      unique.push(block);
    }
    index[b] = row;
  }
  const blocks = new Uint16Array(unique.length * BLOCK);
  unique.forEach((block, row) => blocks.set(block, row * BLOCK));
  return Object.freeze({ flavor: source.flavor, bmp, index, blocks, bytes: bmp.byteLength + index.byteLength + blocks.byteLength });
}
