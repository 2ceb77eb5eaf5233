/**
 * Reading a tokenizer file with its size bound checked before the read (stat first, then the
 * read itself is bounded too, in case the file grew in between).
 *
 * Layer: load. Imports only `errors`.
 */

import { constants } from "node:fs";
import { open } from "node:fs/promises";

import { DeltatokError } from "../../errors.js";

function notFound(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/** Bytes of `file`, refusing (DT_TOKENIZER_TOO_LARGE) a file over `maxBytes` before reading it. */
export async function readBoundedFile(file: string, maxBytes: number, what: string): Promise<Uint8Array> {
  let handle;
  try {
    // without blocking: open() of a FIFO with no writer would block, uninterruptibly
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    if (notFound(e)) throw new DeltatokError("DT_TOKENIZER_NOT_FOUND", `${what} not found: ${file}`, { cause: e });
    throw new DeltatokError("DT_TOKENIZER_INVALID", `${what} ${file} is unreadable: ${(e as Error).message}`, { cause: e });
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new DeltatokError("DT_TOKENIZER_INVALID", `${what} ${file} is not a regular file`);
    if (info.size > maxBytes) {
      throw new DeltatokError("DT_TOKENIZER_TOO_LARGE", `${what} ${file} is ${info.size} bytes; the limit is ${maxBytes}`);
    }
    const buffer = new Uint8Array(Math.min(info.size, maxBytes) + 1);
    let total = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, total, buffer.length - total, total);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) {
        throw new DeltatokError("DT_TOKENIZER_TOO_LARGE", `${what} ${file} grew past the limit of ${maxBytes} bytes while being read`);
      }
      if (total === buffer.length) break;
    }
    return buffer.subarray(0, total);
  } catch (e) {
    if (e instanceof DeltatokError) throw e;
    throw new DeltatokError("DT_TOKENIZER_INVALID", `${what} ${file} is unreadable: ${(e as Error).message}`, { cause: e });
  } finally {
    await handle.close();
  }
}
