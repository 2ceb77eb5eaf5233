/** Assertions on coded errors and a per-file temporary directory, shared by the loading tests. */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { DeltatokError } from "../../src/errors.js";

/** Awaits `p`, asserts it rejects with a DeltatokError of `code` whose message mentions each of `inMessage`. */
export async function rejectsWith(p: Promise<unknown>, code: string, ...inMessage: string[]): Promise<DeltatokError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof DeltatokError, `expected a DeltatokError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    for (const s of inMessage) assert.ok(e.message.includes(s), `"${e.message}" should mention ${s}`);
    return e;
  }
  assert.fail(`expected rejection with ${code}`);
}

/** A temporary directory made before this file's tests and removed after them; call the result for its path. */
export function useTempDir(prefix: string): () => string {
  let dir = "";
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  return () => dir;
}
