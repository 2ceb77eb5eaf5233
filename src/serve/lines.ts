/**
 * JSON lines over a byte stream, bounded while they are read: a splitter that cuts a stream of
 * chunks into lines without ever holding more than the limit, a strict UTF-8 decoder for one
 * line, and a skim of the request id from the first bytes of a line that could not be parsed.
 *
 * A line ends at "\n"; one "\r" before it is dropped (CRLF); the last line may end without a
 * newline. "\n" never occurs inside a multi-byte UTF-8 sequence, so cutting bytes and decoding
 * whole lines handles characters split across chunks. A line longer than the limit is skipped to
 * its newline: only its first `headBytes` bytes are kept, so the caller can answer it with the
 * request id when the line starts with one.
 */
import { isUtf8 } from "node:buffer";
import { wireIdOf } from "./wire-id.js";

export type LineEvent =
  /** A complete line (without its "\n" and a "\r" before it). */
  | { kind: "line"; bytes: Buffer }
  /** A line longer than the limit, skipped: its first bytes and its length. */
  | { kind: "oversize"; head: Buffer; length: number };

const EMPTY = Buffer.alloc(0);

export class LineSplitter {
  readonly #max: number;
  readonly #headBytes: number;
  /** Pieces of the line in progress (subarrays of the chunks; at most one chunk is shared). */
  #parts: Buffer[] = [];
  #held = 0;
  /** Skipping an oversize line: its first bytes, and how many bytes it had so far. */
  #head: Buffer | null = null;
  #skipped = 0;
  #maxHeld = 0;

  /**
   * @param maxLineBytes largest line passed on (bytes before the "\n"); longer ones are skipped.
   * @param headBytes bytes kept of a skipped line, for skimming its id. @defaultValue 1024
   */
  constructor(maxLineBytes: number, headBytes = 1024) {
    this.#max = maxLineBytes;
    this.#headBytes = headBytes;
  }

  /** The most bytes this splitter ever held for one line (for tests: never above the limit). */
  get maxHeldBytes(): number {
    return this.#maxHeld;
  }

  /** Bytes of the line in progress currently held. */
  get heldBytes(): number {
    return this.#held;
  }

  /** Cuts a chunk; `emit` is called for every line it completes, in order. */
  push(chunk: Buffer, emit: (e: LineEvent) => void): void {
    let pos = 0;
    for (;;) {
      const nl = chunk.indexOf(10, pos);
      if (nl < 0) break;
      this.#finish(chunk.subarray(pos, nl), emit);
      pos = nl + 1;
    }
    if (pos < chunk.length) this.#add(pos === 0 ? chunk : chunk.subarray(pos));
  }

  /** The stream ended: a last line without a newline is emitted. */
  end(emit: (e: LineEvent) => void): void {
    if (this.#held > 0 || this.#head !== null) this.#finish(EMPTY, emit);
  }

  #add(piece: Buffer): void {
    if (this.#head !== null) {
      this.#skipped += piece.length;
      return;
    }
    if (this.#held + piece.length > this.#max) {
      this.#head = this.#headOf(piece);
      this.#skipped = this.#held + piece.length;
      this.#parts = [];
      this.#held = 0;
      return;
    }
    this.#parts.push(piece);
    this.#held += piece.length;
    if (this.#held > this.#maxHeld) this.#maxHeld = this.#held;
  }

  #finish(tail: Buffer, emit: (e: LineEvent) => void): void {
    if (this.#head !== null) {
      const head = this.#head;
      const length = this.#skipped + tail.length;
      this.#head = null;
      this.#skipped = 0;
      emit({ kind: "oversize", head, length });
      return;
    }
    const length = this.#held + tail.length;
    if (length > this.#max) {
      const head = this.#headOf(tail);
      this.#parts = [];
      this.#held = 0;
      emit({ kind: "oversize", head, length });
      return;
    }
    let line = this.#parts.length === 0 ? tail : Buffer.concat([...this.#parts, tail], length);
    this.#parts = [];
    this.#held = 0;
    if (line.length > 0 && line[line.length - 1] === 13) line = line.subarray(0, line.length - 1);
    emit({ kind: "line", bytes: line });
  }

  /** A copy of the first bytes of the held parts followed by `more`. */
  #headOf(more: Buffer): Buffer {
    const head = Buffer.allocUnsafe(Math.min(this.#headBytes, this.#held + more.length));
    let at = 0;
    for (const p of [...this.#parts, more]) {
      if (at >= head.length) break;
      at += p.copy(head, at, 0, Math.min(p.length, head.length - at));
    }
    return head;
  }
}

/** True when a line holds only JSON whitespace (space, tab, CR): such lines are skipped. */
export function isBlank(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  }
  return true;
}

/** The line as text, or null when it is not valid UTF-8 (never replaced with U+FFFD). */
export function decodeUtf8(bytes: Buffer): string | null {
  return isUtf8(bytes) ? bytes.toString("utf8") : null;
}

function skipWs(b: Buffer, i: number): number {
  while (i < b.length && (b[i] === 0x20 || b[i] === 0x09 || b[i] === 0x0a || b[i] === 0x0d)) i++;
  return i;
}

const ID_KEY = Buffer.from('"id"');

/**
 * The request id of a line that starts `{"id": <string, number, true, false or null>` followed by
 * "," or "}" within `head` (what the Python client sends); null otherwise. Reads only `head`.
 */
export function skimId(head: Buffer): unknown {
  let i = skipWs(head, 0);
  if (head[i] !== 0x7b) return null; // {
  i = skipWs(head, i + 1);
  if (head.compare(ID_KEY, 0, ID_KEY.length, i, i + ID_KEY.length) !== 0) return null;
  i = skipWs(head, i + ID_KEY.length);
  if (head[i] !== 0x3a) return null; // :
  const start = skipWs(head, i + 1);
  let end = start;
  if (head[start] === 0x22) {
    // a string: to the first unescaped quote
    end = start + 1;
    while (end < head.length && head[end] !== 0x22) end += head[end] === 0x5c ? 2 : 1;
    if (end >= head.length) return null;
    end++;
  } else {
    while (end < head.length && /[-+.0-9a-zA-Z]/.test(String.fromCharCode(head[end] as number))) end++;
  }
  const after = skipWs(head, end);
  if (end === start || (head[after] !== 0x2c && head[after] !== 0x7d)) return null; // , }
  const raw = head.subarray(start, end);
  if (!isUtf8(raw)) return null;
  try {
    const text = raw.toString("utf8");
    const v = JSON.parse(text) as unknown;
    // a number that would print differently (1.50, 1e2, -0, past 2^53) keeps its text
    if (typeof v === "number" && String(v) !== text) return wireIdOf(text);
    return typeof v === "object" ? null : v;
  } catch {
    return null;
  }
}
