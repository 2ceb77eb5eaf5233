/**
 * Buffered JSONL output to a file or stdout, honouring backpressure. Records are written in
 * chunks of up to 64 KiB, and whatever is buffered is also written as soon as the event loop
 * goes idle (the command waits for input or for workers), so what a consumer has seen is always
 * every record up to some point: a stopped command leaves a prefix of the full output.
 */
import { createWriteStream, type WriteStream } from "node:fs";
import { once } from "node:events";
import type { Writable } from "node:stream";

export class JsonlWriter {
  readonly #out: Writable;
  readonly #owned: WriteStream | null;
  #buf = "";
  #scheduled = false;
  /** Waiting for the stream's 'drain' after a write it could not take at once. */
  #draining: Promise<void> | null = null;
  /** A failure of a background write, reported by the next write/flush/close. */
  #failed: unknown = null;

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
    else this.#schedule();
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.flush().catch((e: unknown) => (this.#failed ??= e));
    });
  }

  async flush(): Promise<void> {
    if (this.#failed !== null) throw this.#failed;
    while (this.#draining !== null) await this.#draining;
    if (this.#buf.length === 0) return;
    const chunk = this.#buf;
    this.#buf = "";
    if (!this.#out.write(chunk)) {
      const d = once(this.#out, "drain").then(() => undefined);
      this.#draining = d;
      try {
        await d;
      } finally {
        if (this.#draining === d) this.#draining = null;
      }
    }
  }

  async close(): Promise<void> {
    await this.flush();
    if (this.#owned !== null) {
      this.#owned.end();
      await once(this.#owned, "close");
    }
  }
}
