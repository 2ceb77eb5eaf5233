/**
 * The binary output files of `tokenize` and `rollout`: an 8-byte magic, then arrays written as
 * they come (little-endian, each padded to a multiple of 4 bytes), then a UTF-8 JSON index, and
 * in the last 8 bytes the index's byte offset as a little-endian uint64. Readers
 * (`read_tokens`, `read_rollouts` in the Python client) seek to the index, then to the arrays it
 * names. A record's number id is written as the corpus spelt it (recordJson, src/corpus/id.ts).
 * Write errors are DT_OUTPUT_UNWRITABLE (src/cli/output.ts).
 */
import { createHash } from "node:crypto";
import type { WriteStream } from "node:fs";
import { openOutputStream, settle } from "./output.js";
import { recordJson } from "../corpus/id.js";

export class BinaryFile {
  readonly #out: WriteStream;
  readonly #path: string;
  readonly #magic: string;
  #offset = 0;
  /** Index records, written as `records` at the end. */
  readonly index: Array<Record<string, unknown>> = [];
  /** SHA-256 of every byte after the magic (the arrays), for digest(). */
  readonly #data = createHash("sha256");

  constructor(path: string, magic: string) {
    if (magic.length !== 8) throw new Error("magic must be 8 bytes");
    this.#out = openOutputStream(path);
    this.#path = path;
    this.#magic = magic;
  }

  async start(): Promise<void> {
    await this.#write(new TextEncoder().encode(this.#magic));
  }

  /** Writes uint32 values; returns their byte offset. */
  async u32(values: Uint32Array): Promise<number> {
    const at = this.#offset;
    const buf = new Uint8Array(values.length * 4);
    const view = new DataView(buf.buffer);
    for (let i = 0; i < values.length; i++) view.setUint32(i * 4, values[i] as number, true);
    await this.#write(buf);
    return at;
  }

  /** Writes float64 values; returns their byte offset. */
  async f64(values: Float64Array): Promise<number> {
    const at = this.#offset;
    const buf = new Uint8Array(values.length * 8);
    const view = new DataView(buf.buffer);
    for (let i = 0; i < values.length; i++) view.setFloat64(i * 8, values[i] as number, true);
    await this.#write(buf);
    return at;
  }

  /** Writes bytes, zero-padded to a multiple of 4; returns their byte offset. */
  async bytes(values: Uint8Array): Promise<number> {
    const at = this.#offset;
    const padded = new Uint8Array((values.length + 3) & ~3);
    padded.set(values);
    await this.#write(padded);
    return at;
  }

  /**
   * The records so far, for a shard trailer: their number, and the SHA-256 (hex) of the array
   * bytes after the magic followed by each index record's JSON text (recordJson) and "\n".
   */
  digest(): { records: number; records_sha256: string } {
    const h = this.#data.copy();
    for (const r of this.index) h.update(recordJson(r) + "\n", "utf8");
    return { records: this.index.length, records_sha256: h.digest("hex") };
  }

  /** Writes the index (`header` plus `records`) and closes the file. */
  async finish(header: Record<string, unknown>): Promise<void> {
    const at = this.#offset;
    const { records: _ignored, ...rest } = header;
    const head = JSON.stringify({ ...rest, records: [] }).slice(0, -3); // `{...,"records":`
    await this.#write(new TextEncoder().encode(`${head}[${this.index.map(recordJson).join(",")}]}`));
    const tail = new Uint8Array(8);
    new DataView(tail.buffer).setBigUint64(0, BigInt(at), true);
    await this.#write(tail);
    this.#out.end();
    await settle(this.#out, "close", this.#path);
  }

  async #write(buf: Uint8Array): Promise<void> {
    if (this.#offset >= 8) this.#data.update(buf);
    this.#offset += buf.byteLength;
    if (!this.#out.write(buf)) await settle(this.#out, "drain", this.#path);
  }
}
