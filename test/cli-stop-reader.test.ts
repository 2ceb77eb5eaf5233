/**
 * How a stopped command leaves its corpus reader: `untilAborted` ends the iteration when the
 * signal aborts — between items, while a read is still waiting for input, or before the first
 * read — and in every case the source's `finally` (which closes the file) runs. `stopReport`
 * says "stopped" only when something was cut short.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { stopReport, untilAborted } from "../src/cli/signals.js";

/** A source that yields `n` items, then waits for `gate` before each further one; records closing. */
function source(n: number, gate: Promise<void>, log: string[]): AsyncGenerator<number> {
  return (async function* () {
    try {
      for (let i = 0; ; i++) {
        if (i >= n) await gate;
        yield i;
      }
    } finally {
      log.push("closed");
    }
  })();
}

const never = new Promise<void>(() => undefined);
const settle = () => new Promise((r) => setImmediate(r));

test("aborted between items: iteration ends and the source is closed", async () => {
  const log: string[] = [];
  const ac = new AbortController();
  const got: number[] = [];
  for await (const x of untilAborted(source(10, never, log), ac.signal)) {
    got.push(x);
    if (x === 2) ac.abort("SIGTERM");
  }
  assert.deepEqual(got, [0, 1, 2]);
  assert.deepEqual(log, ["closed"]);
});

test("aborted while a read waits for input: iteration ends at once; the source closes when the read settles", async () => {
  const log: string[] = [];
  const ac = new AbortController();
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const got: number[] = [];
  const run = (async () => {
    for await (const x of untilAborted(source(2, gate, log), ac.signal)) got.push(x);
  })();
  await settle();
  assert.deepEqual(got, [0, 1], "waiting for the third item");
  ac.abort("SIGTERM");
  await run; // ended without the third item
  assert.deepEqual(got, [0, 1]);
  open(); // the pending read settles: now the source is closed
  await settle();
  await settle();
  assert.deepEqual(log, ["closed"]);
});

test("aborted before the first read: nothing is yielded and the source is still closed", async () => {
  const log: string[] = [];
  const ac = new AbortController();
  ac.abort("SIGINT");
  const got: number[] = [];
  for await (const x of untilAborted(source(5, never, log), ac.signal)) got.push(x);
  await settle();
  assert.deepEqual(got, []);
  assert.deepEqual(log, ["closed"]);
});

test("stopReport: a report only when work was cut short", () => {
  const ac = new AbortController();
  assert.equal(stopReport(ac.signal, 3, 0, 100, 100), undefined, "not aborted");
  ac.abort("SIGINT");
  assert.equal(stopReport(ac.signal, 3, 0, 100, 100), undefined, "everything read and written: nothing was stopped");
  assert.deepEqual(stopReport(ac.signal, 3, 0, 60, 100), { signal: "SIGINT", lines_done: 3, lines_not_done: 0, bytes_unread: 40 });
  assert.deepEqual(stopReport(ac.signal, 3, 2, 100, 100), { signal: "SIGINT", lines_done: 3, lines_not_done: 2, bytes_unread: 0 });
  assert.deepEqual(stopReport(ac.signal, 1, 0, 50, 0), { signal: "SIGINT", lines_done: 1, lines_not_done: 0, bytes_unread: null }, "a FIFO: size unknown");
});
