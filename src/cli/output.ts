/** Buffered JSONL output to a file or stdout, honouring backpressure. */
import { createWriteStream, type WriteStream } from "node:fs";
import { once } from "node:events";
import type { Writable } from "node:stream";

export class JsonlWriter {
  readonly #out: Writable;
  readonly #owned: WriteStream | null;
  #buf = "";

  constructor(path: string | undefined) {
    if (path === undefined || path === "-") {
      this.#out = process.stdout;
      this.#owned = null;
    } else {
      this.#owned = createWriteStream(path, { encoding: "utf8" });
      this.#out = this.#owned;
    }
  }

  /** Queues one record; resolves when it is safe to queue more. */
  async write(record: unknown): Promise<void> {
    this.#buf += JSON.stringify(record) + "\n";
    if (this.#buf.length >= 1 << 16) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.#buf.length === 0) return;
    const chunk = this.#buf;
    this.#buf = "";
    if (!this.#out.write(chunk)) await once(this.#out, "drain");
  }

  async close(): Promise<void> {
    await this.flush();
    if (this.#owned !== null) {
      this.#owned.end();
      await once(this.#owned, "close");
    }
  }
}
