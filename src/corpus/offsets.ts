/**
 * A first pass over a corpus file that keeps, per non-blank line, only where its text is (byte
 * offset, byte length) and its line number — 16 bytes a line (plus the error of a line the
 * reader cannot use, ~200 bytes each) — so an offline job can start lines in any order (the
 * costliest first) and read each one again when it starts, without holding the corpus. Lines
 * are cut and decoded by `corpusLines`, exactly as every other reader does.
 */
import { open, type FileHandle } from "node:fs/promises";
import { DeltatokError } from "../errors.js";
import { corpusLines, type CorpusFile } from "./corpus.js";

export interface LineIndex {
  /** Lines indexed (non-blank, kept). */
  readonly count: number;
  /** Byte offset of each line's text (after a byte order mark). */
  readonly offset: Float64Array;
  /** Byte length of each line's text (without its end of line). 0 for a line in `errors`. */
  readonly length: Uint32Array;
  /** 1-based line number of each. */
  readonly line: Uint32Array;
  /** Each line's estimated cost (`cost` of indexCorpus; 0 for a line in `errors`), when asked for. */
  readonly cost: Float64Array | undefined;
  /** Lines the reader could not use (not UTF-8, too long), by index. */
  readonly errors: ReadonlyMap<number, DeltatokError>;
  /** Bytes read. */
  readonly bytes: number;
}

class Grow {
  offset = new Float64Array(1024);
  length = new Uint32Array(1024);
  line = new Uint32Array(1024);
  cost = new Float64Array(0);
  n = 0;

  push(offset: number, length: number, line: number, cost: number | undefined): number {
    if (cost !== undefined && this.n === this.cost.length) {
      const c = new Float64Array(Math.max(1024, this.n * 2));
      c.set(this.cost);
      this.cost = c;
    }
    if (cost !== undefined) this.cost[this.n] = cost;
    if (this.n === this.offset.length) {
      const cap = this.n * 2;
      const o = new Float64Array(cap);
      o.set(this.offset);
      const l = new Uint32Array(cap);
      l.set(this.length);
      const m = new Uint32Array(cap);
      m.set(this.line);
      this.offset = o;
      this.length = l;
      this.line = m;
    }
    this.offset[this.n] = offset;
    this.length[this.n] = length;
    this.line[this.n] = line;
    return this.n++;
  }
}

/**
 * Indexes an open corpus (and closes it, as reading to the end does). `keep` skips lines (see
 * readOpenCorpus); `stop` is polled between lines and ends the pass early (the index is then of
 * the lines read). `cost` estimates each kept line from its text while it is in hand (8 bytes a
 * line more; src/pool/cost.ts is the scheduler's).
 */
export async function indexCorpus(
  file: CorpusFile,
  keep?: (text: string | undefined, line: number) => boolean,
  stop?: () => boolean,
  cost?: (text: string) => number,
): Promise<LineIndex> {
  const g = new Grow();
  const errors = new Map<number, DeltatokError>();
  let at = 0;
  for await (const l of corpusLines(file)) {
    const start = at;
    at += l.bytes;
    if (l.text?.trim() === "" || (keep !== undefined && !keep(l.text, l.line))) continue;
    if (l.error !== undefined) {
      errors.set(g.push(start, 0, l.line, cost === undefined ? undefined : 0), l.error);
    } else {
      const textBytes = Buffer.byteLength(l.text, "utf8");
      // line 1 may start with a byte order mark (3 bytes) the reader dropped; an end of line is 0–2 bytes
      const bom = l.line === 1 && l.bytes - textBytes >= 3 ? 3 : 0;
      g.push(start + bom, textBytes, l.line, cost?.(l.text));
    }
    if (stop?.() === true) break;
  }
  return { count: g.n, offset: g.offset.subarray(0, g.n), length: g.length.subarray(0, g.n), line: g.line.subarray(0, g.n), cost: cost === undefined ? undefined : g.cost.subarray(0, g.n), errors, bytes: at };
}

/** Reads indexed lines again, by position. */
export class LineReader {
  readonly #handle: FileHandle;
  readonly #path: string;
  readonly #decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

  private constructor(handle: FileHandle, path: string) {
    this.#handle = handle;
    this.#path = path;
  }

  static async open(path: string): Promise<LineReader> {
    try {
      return new LineReader(await open(path, "r"), path);
    } catch (e) {
      throw new DeltatokError("DT_CORPUS_UNREADABLE", `cannot read ${path} again: ${(e as Error).message}`, { cause: e });
    }
  }

  /** The text of the line at `offset` (`length` bytes). DT_CORPUS_UNREADABLE when the file changed under the job. */
  async read(offset: number, length: number, line: number): Promise<string> {
    const buf = Buffer.allocUnsafe(length);
    let got = 0;
    while (got < length) {
      const r = await this.#handle.read(buf, got, length - got, offset + got);
      if (r.bytesRead === 0) break;
      got += r.bytesRead;
    }
    try {
      if (got !== length) throw new Error("short read");
      return this.#decoder.decode(buf);
    } catch (e) {
      throw new DeltatokError("DT_CORPUS_UNREADABLE", `line ${line} of ${this.#path} changed while the job ran (it was read at the start)`, { cause: e });
    }
  }

  async close(): Promise<void> {
    await this.#handle.close().catch(() => undefined);
  }
}
