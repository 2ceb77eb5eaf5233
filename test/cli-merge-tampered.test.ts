/**
 * `deltatok merge` verifies what it joins before writing anything: every tampered shard is
 * refused with a code (exit 1), no output and no temporary file left behind — records deleted,
 * one duplicated, two of one conversation swapped (the trailer's record count and digest), a
 * shard of another corpus of the same byte size (the header's corpus digest), and a forged
 * binary index (offsets swapped, a record duplicated or dropped, a count of 1e9: bounds, order,
 * overlap, count); `--out` equal to an input, a directory or FIFO as a shard. A good merge of
 * the same shards then succeeds.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./helpers/cli.js";
import { repoPath } from "./helpers/paths.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const dir = mkdtempSync(join(tmpdir(), "deltatok-tamper-"));
const p = (name: string) => join(dir, name);
const CORPUS = repoPath("data", "tau-bench-airline-20.jsonl");
const text = readFileSync(CORPUS, "utf8");
// another corpus of the same size: one letter of one message changed
const at = text.indexOf('"content": "') + 20;
writeFileSync(p("foreign.jsonl"), text.slice(0, at) + (text[at] === "x" ? "y" : "x") + text.slice(at + 1));
const COMMON = ["--renderer", TEST_RENDERER, "--no-progress", "--date", "2026-11-30"];

async function run(args: string[]): Promise<void> {
  const r = await runCli(args);
  assert.equal(r.code, 0, r.stderr);
}

/** Merges `files` into a fresh --out and expects `code`, with nothing written. */
async function refused(files: string[], code: string, out = p("merged.out")): Promise<void> {
  const before = readdirSync(dir).sort();
  const r = await runCli(["merge", "--out", out, ...files]);
  assert.equal(r.code, code === "DT_INVALID_OPTION" ? 2 : 1, r.stderr);
  assert.match(r.stderr, new RegExp(`\\b${code}\\b`), `${files.join(" ")}: ${r.stderr}`);
  assert.deepEqual(readdirSync(dir).sort(), before, "nothing written, no temporary file left");
}

const lines = (path: string) => readFileSync(path, "utf8").split("\n").filter((l) => l !== "");
const put = (name: string, ls: string[]) => writeFileSync(p(name), ls.join("\n") + "\n");

test("JSONL shards: deleted, duplicated and swapped records, a foreign corpus, --out on an input, a directory, a FIFO", async () => {
  await Promise.all([
    run(["replay", CORPUS, ...COMMON, "--shard", "0/2", "--out", p("r0.jsonl")]),
    run(["replay", CORPUS, ...COMMON, "--shard", "1/2", "--out", p("r1.jsonl")]),
  ]);
  await run(["replay", p("foreign.jsonl"), ...COMMON, "--shard", "1/2", "--out", p("f1.jsonl")]);
  const r1 = lines(p("r1.jsonl"));
  const body = r1.slice(1, -1);
  assert.ok(body.length > 20);
  const [head, tail] = [r1[0] as string, r1[r1.length - 1] as string];
  put("deleted.jsonl", [head, ...body.slice(0, -16), tail]);
  put("duplicated.jsonl", [head, body[0] as string, ...body, tail]);
  // two records of one conversation (same corpus line) swapped
  const lineOf = (l: string) => (JSON.parse(l) as { line: number }).line;
  const k = body.findIndex((l, i) => i + 1 < body.length && lineOf(l) === lineOf(body[i + 1] as string));
  assert.ok(k >= 0);
  const swapped = body.slice();
  [swapped[k], swapped[k + 1]] = [swapped[k + 1] as string, swapped[k] as string];
  put("swapped.jsonl", [head, ...swapped, tail]);
  for (const f of ["deleted.jsonl", "duplicated.jsonl", "swapped.jsonl"]) await refused([p("r0.jsonl"), p(f)], "DT_SHARD_INVALID");
  await refused([p("r0.jsonl"), p("f1.jsonl")], "DT_SHARD_MISMATCH");
  await refused([p("r0.jsonl"), p("r1.jsonl")], "DT_INVALID_OPTION", p("r1.jsonl"));
  mkdirSync(p("adir"));
  await refused([p("r0.jsonl"), p("adir")], "DT_SHARD_INVALID");
  execFileSync("mkfifo", [p("afifo")]);
  await refused([p("r0.jsonl"), p("afifo")], "DT_SHARD_INVALID");
  // the real shards still merge
  await run(["merge", "--out", p("all.jsonl"), p("r0.jsonl"), p("r1.jsonl")]);
  assert.equal(lines(p("all.jsonl")).length, 285);
});

/** The index of a binary output, and a writer of the same file with another index. */
function binary(path: string): { index: Record<string, unknown> & { records: Array<Record<string, unknown>> }; write(name: string, index: unknown): void } {
  const buf = readFileSync(path);
  const indexAt = Number(buf.readBigUInt64LE(buf.length - 8));
  const index = JSON.parse(buf.subarray(indexAt, buf.length - 8).toString("utf8"));
  return {
    index,
    write(name, idx) {
      const json = Buffer.from(JSON.stringify(idx));
      const tailBuf = Buffer.alloc(8);
      tailBuf.writeBigUInt64LE(BigInt(indexAt));
      writeFileSync(p(name), Buffer.concat([buf.subarray(0, indexAt), json, tailBuf]));
    },
  };
}

test("binary shards: a forged index (offsets swapped, a record duplicated or dropped, a count of 1e9) is refused before writing", async () => {
  await Promise.all([
    run(["tokenize", CORPUS, ...COMMON, "--format", "binary", "--shard", "0/2", "--out", p("t0.bin")]),
    run(["tokenize", CORPUS, ...COMMON, "--format", "binary", "--shard", "1/2", "--out", p("t1.bin")]),
  ]);
  const b = binary(p("t1.bin"));
  const recs = b.index.records;
  assert.ok(recs.length >= 3 && recs.every((r) => r.error === undefined));
  const forged = (name: string, edit: (rs: Array<Record<string, unknown>>) => Array<Record<string, unknown>>) => {
    b.write(name, { ...b.index, records: edit(structuredClone(recs)) });
  };
  forged("swap.bin", (rs) => {
    const [x, y] = [rs[0] as Record<string, unknown>, rs[1] as Record<string, unknown>];
    [x.offset, y.offset] = [y.offset, x.offset];
    return rs;
  });
  forged("dup.bin", (rs) => [rs[0] as Record<string, unknown>, ...rs]);
  forged("drop.bin", (rs) => rs.slice(1));
  forged("huge.bin", (rs) => {
    (rs[0] as Record<string, unknown>).count = 1e9;
    return rs;
  });
  for (const f of ["swap.bin", "dup.bin", "drop.bin", "huge.bin"]) await refused([p("t0.bin"), p(f)], "DT_SHARD_INVALID", p("merged.bin"));
  await run(["merge", "--out", p("all.bin"), p("t0.bin"), p("t1.bin")]);
  assert.ok(existsSync(p("all.bin")));
});
