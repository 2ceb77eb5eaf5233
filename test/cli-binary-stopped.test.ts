/**
 * Binary outputs of stopped and killed runs. A `tokenize` / `rollout --format binary` stopped by
 * SIGTERM writes the records done and marks its index `stopped` (the summary's report), as the
 * JSONL shard trailer and --summary do; a file whose run was killed (SIGKILL: magic and arrays,
 * no index) is recognised by the reader (merge) with a coded error, DT_SHARD_INVALID "cut short",
 * and the next good merge works. The corpus is a FIFO fed two conversations and left open, so
 * the stop comes once the first is reported done (no sleeps).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createWriteStream, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli, startCli } from "./helpers/cli.js";
import { repoPath } from "./helpers/paths.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const dir = mkdtempSync(join(tmpdir(), "deltatok-binstop-"));
const lines = readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n").filter((l) => l.trim() !== "");
let n = 0;

function indexOf(path: string): Record<string, unknown> & { records: unknown[] } {
  const b = readFileSync(path);
  const at = Number(b.readBigUInt64LE(b.length - 8));
  return JSON.parse(b.subarray(at, b.length - 8).toString("utf8"));
}

/** Starts `cmd --format binary` on a FIFO fed two lines (left open); resolves once it reported one done. */
async function started(cmd: string, out: string, extra: string[] = []) {
  const fifo = join(dir, `corpus-${n++}.fifo`);
  execFileSync("mkfifo", [fifo]);
  const live = startCli([cmd, fifo, "--format", "binary", "--out", out, "--date", "2026-11-30", "--renderer", TEST_RENDERER, "--progress", ...extra], { timeoutMs: 60_000 });
  const w = createWriteStream(fifo);
  w.on("error", () => undefined);
  w.write(lines.slice(0, 2).join("\n") + "\n");
  await live.waitFor(() => new RegExp(`${cmd}: [12] conversations`).test(live.stderr()));
  return { live, w };
}

for (const cmd of ["tokenize", "rollout"]) {
  test(`${cmd} --format binary stopped by SIGTERM: the records done, and "stopped" in its index`, async () => {
    const out = join(dir, `${cmd}.bin`);
    const { live, w } = await started(cmd, out, ["--summary", join(dir, `${cmd}.summary.json`)]);
    live.child.kill("SIGTERM");
    const { code } = await live.exited;
    w.destroy();
    assert.equal(code, 143, live.stderr());
    const index = indexOf(out);
    const stopped = index.stopped as { signal: string; lines_done: number } | undefined;
    assert.equal(stopped?.signal, "SIGTERM");
    assert.ok(index.records.length >= 1);
    assert.equal(stopped?.lines_done, index.records.length);
    const summary = JSON.parse(readFileSync(join(dir, `${cmd}.summary.json`), "utf8")) as { stopped: unknown };
    assert.deepEqual(index.stopped, summary.stopped);
  });
}

test("a binary shard killed mid-run (no index) is refused by the reader with a code; a complete one merges", async () => {
  const out = join(dir, "killed.bin");
  const { live, w } = await started("tokenize", out, ["--shard", "0/1"]);
  live.child.kill("SIGKILL");
  await live.exited;
  w.destroy();
  assert.ok(statSync(out).size >= 8);
  const r = await runCli(["merge", "--out", join(dir, "m.bin"), out]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /DT_SHARD_INVALID.*cut short/);
  // only the magic: the same
  writeFileSync(join(dir, "magic.bin"), "DTOKBIN1");
  const m = await runCli(["merge", "--out", join(dir, "m2.bin"), join(dir, "magic.bin")]);
  assert.match(m.stderr, /DT_SHARD_INVALID.*cut short/);
  // a complete shard still merges
  const corpus = join(dir, "two.jsonl");
  writeFileSync(corpus, lines.slice(0, 2).join("\n") + "\n");
  const full = await runCli(["tokenize", corpus, "--format", "binary", "--out", join(dir, "full.bin"), "--date", "2026-11-30", "--renderer", TEST_RENDERER, "--shard", "0/1"]);
  assert.equal(full.code, 0, full.stderr);
  const ok = await runCli(["merge", "--out", join(dir, "merged.bin"), join(dir, "full.bin")]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(indexOf(join(dir, "merged.bin")).records.length, 2);
});
