/**
 * A small reader for the protobuf wire format (proto2 as `sentencepiece` writes it): varints,
 * fixed32/fixed64, length-delimited fields, and groups (skipped). No schema and no dependency:
 * the caller walks a message's fields and interprets each by its number.
 *
 * Every read is bounds-checked against the message's end; a truncated or malformed encoding
 * throws DT_TOKENIZER_INVALID naming the file, the byte offset and what was being read.
 *
 * Layer: load. Imports only `errors`.
 */

import { DeltatokError } from "../../errors.js";

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LENGTH_DELIMITED = 2;
export const WIRE_START_GROUP = 3;
export const WIRE_END_GROUP = 4;
export const WIRE_FIXED32 = 5;

/** Groups nested deeper than this are refused (they are not used by sentencepiece at all). */
const MAX_GROUP_DEPTH = 32;

/**
 * Walks the fields of one message: `bytes[start, end)`. Call `next()` until it returns false;
 * after each `next()`, `field` and `wire` describe the field and exactly one of the value
 * readers (`varint`, `int32`, `bool`, `float32`, `lengthDelimited`, `skip`) must be called.
 */
export class ProtoCursor {
  readonly bytes: Uint8Array;
  readonly file: string;
  /** Where in the model this message is, for error messages (e.g. `pieces[17]`). */
  readonly where: string;
  readonly #view: DataView;
  readonly #end: number;
  #pos: number;
  /** Field number of the current field. */
  field = 0;
  /** Wire type of the current field. */
  wire = 0;
  /** Offset of the current field's tag. */
  tagOffset = 0;

  constructor(bytes: Uint8Array, start: number, end: number, file: string, where: string) {
    this.bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#pos = start;
    this.#end = end;
    this.file = file;
    this.where = where;
  }

  /** Reads the next field's tag; false at the end of the message. */
  next(): boolean {
    if (this.#pos >= this.#end) return false;
    this.tagOffset = this.#pos;
    const [lo, hi] = this.#rawVarint("a field tag");
    if (hi !== 0 || lo >>> 3 === 0) throw this.fail(`invalid field tag ${hi * 2 ** 32 + lo}`, this.tagOffset);
    this.field = lo >>> 3;
    this.wire = lo & 7;
    if (this.wire === 6 || this.wire === 7 || this.wire === WIRE_END_GROUP) {
      throw this.fail(`field ${this.field} has invalid wire type ${this.wire}`, this.tagOffset);
    }
    return true;
  }

  /** The current varint field's value as a non-negative number (exact below 2^53). */
  varint(what: string): number {
    this.#expect(WIRE_VARINT, what);
    const [lo, hi] = this.#rawVarint(what);
    return hi * 2 ** 32 + lo;
  }

  /** The current varint field as a proto `int32` / enum (the low 32 bits, signed). */
  int32(what: string): number {
    this.#expect(WIRE_VARINT, what);
    return this.#rawVarint(what)[0] | 0;
  }

  /** The current varint field as a proto `bool`. */
  bool(what: string): boolean {
    this.#expect(WIRE_VARINT, what);
    const [lo, hi] = this.#rawVarint(what);
    return lo !== 0 || hi !== 0;
  }

  /** The current fixed32 field as a proto `float`. */
  float32(what: string): number {
    this.#expect(WIRE_FIXED32, what);
    if (this.#end - this.#pos < 4) throw this.fail(`truncated ${what}`, this.#pos);
    const v = this.#view.getFloat32(this.#pos, true);
    this.#pos += 4;
    return v;
  }

  /** The current length-delimited field's `[start, end)` within `bytes`. */
  lengthDelimited(what: string): [number, number] {
    this.#expect(WIRE_LENGTH_DELIMITED, what);
    const at = this.#pos;
    const [lo, hi] = this.#rawVarint(`the length of ${what}`);
    const length = hi * 2 ** 32 + lo;
    if (length > this.#end - this.#pos) {
      throw this.fail(`truncated ${what}: length ${length} runs past the end of its message`, at);
    }
    const start = this.#pos;
    this.#pos += length;
    return [start, this.#pos];
  }

  /** Skips the current field whatever its wire type (unknown fields, fields not needed). */
  skip(): void {
    this.#skipValue(this.field, this.wire, 0);
  }

  /** A DT_TOKENIZER_INVALID naming the file, this message and the byte offset. */
  fail(reason: string, offset: number = this.#pos): DeltatokError {
    return new DeltatokError(
      "DT_TOKENIZER_INVALID",
      `${this.file}: not a valid SentencePiece model (protobuf ModelProto): ${reason} at byte ${offset}${this.where === "" ? "" : ` (in ${this.where})`}`,
      { path: this.where === "" ? `byte ${offset}` : this.where },
    );
  }

  #expect(wire: number, what: string): void {
    if (this.wire !== wire) {
      throw this.fail(`${what} (field ${this.field}) has wire type ${this.wire}, expected ${wire}`, this.tagOffset);
    }
  }

  #skipValue(field: number, wire: number, depth: number): void {
    switch (wire) {
      case WIRE_VARINT:
        this.#rawVarint(`field ${field}`);
        return;
      case WIRE_FIXED64:
      case WIRE_FIXED32: {
        const size = wire === WIRE_FIXED64 ? 8 : 4;
        if (this.#end - this.#pos < size) throw this.fail(`truncated field ${field}`, this.#pos);
        this.#pos += size;
        return;
      }
      case WIRE_LENGTH_DELIMITED: {
        const at = this.#pos;
        const [lo, hi] = this.#rawVarint(`the length of field ${field}`);
        const length = hi * 2 ** 32 + lo;
        if (length > this.#end - this.#pos) throw this.fail(`truncated field ${field}`, at);
        this.#pos += length;
        return;
      }
      case WIRE_START_GROUP: {
        if (depth >= MAX_GROUP_DEPTH) throw this.fail(`groups nested deeper than ${MAX_GROUP_DEPTH}`, this.#pos);
        for (;;) {
          if (this.#pos >= this.#end) throw this.fail(`group ${field} is not closed`, this.#pos);
          const at = this.#pos;
          const [lo, hi] = this.#rawVarint("a field tag");
          if (hi !== 0 || lo >>> 3 === 0) throw this.fail("invalid field tag", at);
          const innerField = lo >>> 3;
          const innerWire = lo & 7;
          if (innerWire === WIRE_END_GROUP) {
            if (innerField !== field) throw this.fail(`group ${field} closed as ${innerField}`, at);
            return;
          }
          if (innerWire === 6 || innerWire === 7) throw this.fail(`invalid wire type ${innerWire}`, at);
          this.#skipValue(innerField, innerWire, depth + 1);
        }
      }
      default:
        throw this.fail(`invalid wire type ${wire}`, this.tagOffset);
    }
  }

  /** Reads a varint at the cursor: [low 32 bits, high 32 bits], both unsigned. */
  #rawVarint(what: string): [number, number] {
    const bytes = this.bytes;
    const start = this.#pos;
    let lo = 0;
    let hi = 0;
    for (let k = 0; k < 10; k++) {
      if (this.#pos >= this.#end) throw this.fail(`truncated ${what}`, start);
      const b = bytes[this.#pos++] as number;
      const low7 = b & 0x7f;
      if (k < 4) lo |= low7 << (7 * k);
      else if (k === 4) {
        lo |= (low7 & 0x0f) << 28;
        hi |= low7 >>> 4;
      } else hi |= low7 << (7 * k - 32);
      if ((b & 0x80) === 0) return [lo >>> 0, hi >>> 0];
    }
    throw this.fail(`${what} is a varint longer than 10 bytes`, start);
  }
}
