/**
 * Output files of the CLI: buffered JSONL to a file or stdout (honouring backpressure), and
 * whole files (summaries). A file that cannot be created or written is DT_OUTPUT_UNWRITABLE
 * (exit 1), found when it is opened, before any work — never an unhandled stream error.
 *
 * JSONL records are written in chunks of up to 64 KiB, and whatever is buffered is also written
 * as soon as the event loop goes idle (the command waits for input or for workers), so what a
 * consumer has seen is always every record up to some point: a stopped command leaves a prefix
 * of the full output.
 */
import { createWriteStream, openSync, type WriteStream } from "node:fs";
import { stat, writeFile as fsWriteFile } from "node:fs/promises";
import { dirname } from "node:path";
import { createHash, type Hash } from "node:crypto";
import { once } from "node:events";
import type { Writable } from "node:stream";
import { DeltatokError } from "../errors.js";
import { recordJson } from "../corpus/id.js";

function unwritable(path: string, e: unknown): DeltatokError {
  const code = (e as { code?: unknown } | null)?.code;
  const why =
    code === "EISDIR" ? "it is a directory" : code === "ENOENT" ? "its directory does not exist" : code === "EACCES" || code === "EPERM" ? "permission denied" : String((e as Error)?.message ?? e);
  return new DeltatokError("DT_OUTPUT_UNWRITABLE", `cannot write ${path}: ${why}`, { cause: e });
}

/**
 * Fails now, with the code and message opening `path` for writing would give, where that could not
 * succeed: `path` is a directory or its directory does not exist. Nothing is created (a command
 * checks its outputs this way before loading its tokenizer, and opens them when it starts).
 */
export async function checkOutputPath(path: string): Promise<void> {
  const isDir = await stat(path).then((s) => s.isDirectory(), () => false);
  if (isDir) throw unwritable(path, Object.assign(new Error("is a directory"), { code: "EISDIR" }));
  const parent = await stat(dirname(path)).then((s) => s.isDirectory(), () => false);
  if (!parent) throw unwritable(path, Object.assign(new Error("no such directory"), { code: "ENOENT" }));
}

/** Opens `path` for writing now (so a bad path fails before any work) as a stream whose errors are coded. */
export function openOutputStream(path: string): WriteStream {
  let fd: number;
  try {
    fd = openSync(path, "w");
  } catch (e) {
    throw unwritable(path, e);
  }
  const s = createWriteStream(path, { fd });
  // an error while writing (disk full, EIO) rejects the pending write or close, coded
  s.on("error", () => undefined);
  return s;
}

/** Writes a whole file (a summary); DT_OUTPUT_UNWRITABLE when it cannot. */
export async function writeFile(path: string, data: string): Promise<void> {
  try {
    await fsWriteFile(path, data);
  } catch (e) {
    throw unwritable(path, e);
  }
}

/** Waits for `event` on `s`; a stream error while waiting is DT_OUTPUT_UNWRITABLE. */
export async function settle(s: Writable, event: string, path: string): Promise<void> {
  try {
    await once(s, event);
  } catch (e) {
    throw unwritable(path, e);
  }
}

export class JsonlWriter {
  readonly #out: Writable;
  readonly #owned: WriteStream | null;
  readonly #path: string;
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
      this.#path = "stdout";
    } else {
      this.#owned = openOutputStream(path);
      this.#out = this.#owned;
      this.#path = path;
    }
  }

  /** Lines written since startDigest(): their count and SHA-256 (shard trailers, src/cli/shard.ts). */
  #digest: { hash: Hash; records: number } | null = null;

  /** From now on, counts and hashes every line written (a shard's records, after its header). */
  startDigest(): void {
    this.#digest = { hash: createHash("sha256"), records: 0 };
  }

  /** The lines written since startDigest(): how many, and the SHA-256 (hex) of their text. */
  digest(): { records: number; records_sha256: string } {
    const d = this.#digest;
    if (d === null) throw new Error("digest() without startDigest()");
    return { records: d.records, records_sha256: d.hash.copy().digest("hex") };
  }

  /** Queues one record (a number id written as sent: recordJson); resolves when it is safe to queue more. */
  async write(record: object): Promise<void> {
    const line = recordJson(record) + "\n";
    if (this.#digest !== null) {
      this.#digest.hash.update(line, "utf8");
      this.#digest.records++;
    }
    this.#buf += line;
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
    const o = this.#owned;
    if (o !== null && o.errored !== null) throw unwritable(this.#path, o.errored);
    if (!this.#out.write(chunk)) {
      const d = settle(this.#out, "drain", this.#path);
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
    const o = this.#owned;
    if (o !== null) {
      if (o.errored !== null) throw unwritable(this.#path, o.errored);
      o.end();
      await settle(o, "close", this.#path);
      if (o.errored !== null) throw unwritable(this.#path, o.errored);
    }
  }
}
