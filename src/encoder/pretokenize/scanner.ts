/**
 * The contract between the scanners and the encoder pipeline: a PieceScanner appends the end
 * offsets of the pieces it cuts to an Int32Sink; Int32List is a growable sink; TableScanner is
 * what the family scanners share (their name and class table).
 *
 * Layer: encoder.
 */

import type { ClassTable } from "./classes.js";

/** Where a scan appends its end offsets. */
export interface Int32Sink {
  push(v: number): void;
}

/** A pre-tokenizer pattern family, scanned by hand. */
export interface PieceScanner {
  /** Which pattern family (and flavor) this is, e.g. "o200k" or "kimi/rust-regex". */
  readonly family: string;
  /**
   * Appends to `ends` the UTF-16 end offset of every piece of text[start, end), in order (the last
   * appended value is `end`; nothing for an empty range): exactly the pieces the family's Split
   * (or ByteLevel use_regex) produces on text.slice(start, end). `end` is the end of the input for
   * the pattern (`$`, `(?!\S)` see it), and nothing outside the range is read. The caller keeps
   * 0 ≤ start ≤ end ≤ text.length.
   */
  scan(text: string, start: number, end: number, ends: Int32Sink): void;
}

/** The base of the family scanners: a family name and the class table it reads. */
export abstract class TableScanner implements PieceScanner {
  readonly family: string;
  protected readonly t: ClassTable;

  constructor(family: string, table: ClassTable) {
    this.family = family;
    this.t = table;
  }

  abstract scan(text: string, start: number, end: number, ends: Int32Sink): void;
}

/** A growable Int32Array sink. */
export class Int32List implements Int32Sink {
  data: Int32Array;
  length = 0;

  constructor(capacity = 256) {
    this.data = new Int32Array(Math.max(16, capacity));
  }

  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }

  clear(): void {
    this.length = 0;
  }

  toArray(): number[] {
    return Array.from(this.data.subarray(0, this.length));
  }
}
