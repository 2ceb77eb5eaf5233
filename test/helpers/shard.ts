/**
 * The shard tests' shared fixture: a corpus of 12 real conversations from the bundled slice with
 * the lines a shard must still place exactly once (not JSON, no messages, a repeated id, blank,
 * not UTF-8), and helpers that run a command as n shards and merge them.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./cli.js";
import { repoPath } from "./paths.js";
import { TEST_RENDERER } from "./renderer.js";

export interface ShardFixture {
  dir: string;
  corpus: string;
  /** Shared CLI flags: pinned date, the test renderer, no progress. */
  COMMON: string[];
  /** Runs `command` as n shards (shard 0 with `extra0`), merges them in reversed order. */
  sharded(command: string, n: number, flags: string[], extra0?: string[]): Promise<{ out: Buffer; summary: Record<string, unknown>; shards: string[] }>;
}

/** Byte equality without printing megabytes: the first differing offset on failure. */
export function same(a: Buffer, b: Buffer, what: string): void {
  if (a.equals(b)) return;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  assert.fail(`${what}: ${a.length} vs ${b.length} bytes, first difference at byte ${i}: ${JSON.stringify(a.subarray(Math.max(0, i - 40), i + 40).toString("utf8"))} vs ${JSON.stringify(b.subarray(Math.max(0, i - 40), i + 40).toString("utf8"))}`);
}

/** Runs the CLI and asserts exit 0; its stdout. */
export async function ok(args: string[]): Promise<string> {
  const r = await runCli(args);
  assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

export function shardFixture(prefix: string): ShardFixture {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const slice = readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n").filter((l) => l.trim() !== "");
  const corpus = join(dir, "corpus.jsonl");
  // 12 real conversations, a line that is not JSON (no id: keyed by its line number), a line with
  // an id and no messages, a repeated id, a blank line, a line that is not UTF-8
  const bad = Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]);
  writeFileSync(
    corpus,
    Buffer.concat([
      Buffer.from([...slice.slice(0, 5), "{broken", '{"id": "no-messages", "messages": []}', slice[5], "", slice[0], ...slice.slice(6, 12)].join("\n") + "\n"),
      bad,
      Buffer.from("\n" + slice[12] + "\n"),
    ]),
  );
  const COMMON = ["--date", "2026-11-30", "--renderer", TEST_RENDERER, "--no-progress"];
  const sharded: ShardFixture["sharded"] = async (command, n, flags, extra0 = []) => {
    const outs = Array.from({ length: n }, (_v, i) => join(dir, `${command}-${n}-${i}${flags.includes("binary") ? ".bin" : ".jsonl"}`));
    // three shard jobs at a time, as independent processes (a batch scheduler's array)
    for (let i = 0; i < n; i += 3) {
      await Promise.all(outs.slice(i, i + 3).map((out, j) => ok([command, corpus, ...COMMON, ...flags, ...(i + j === 0 ? extra0 : []), "--shard", `${i + j}/${n}`, "--out", out])));
    }
    const merged = join(dir, `${command}-${n}-merged`);
    const summary = join(dir, `${command}-${n}-merged.json`);
    await ok(["merge", "--out", merged, "--summary", summary, ...outs.slice().reverse()]);
    return { out: readFileSync(merged), summary: JSON.parse(readFileSync(summary, "utf8")) as Record<string, unknown>, shards: outs };
  };
  return { dir, corpus, COMMON, sharded };
}
