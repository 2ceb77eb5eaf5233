/**
 * `deltatok merge` refuses, with a code and exit 1, every set of files that would not give the
 * unsharded output — a missing shard, the same shard twice, a line in two shards, a different
 * shard count or settings, a file cut short, a stopped run, a file that is not a shard output —
 * and writes nothing then; a bad `--shard` is a usage error (exit 2).
 */
import { test } from "node:test";
import { createHash } from "node:crypto";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./helpers/cli.js";
import { repoPath } from "./helpers/paths.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const dir = mkdtempSync(join(tmpdir(), "deltatok-merge-"));
const slice = readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n").filter((l) => l.trim() !== "");
const corpus = join(dir, "corpus.jsonl");
writeFileSync(corpus, slice.slice(0, 6).join("\n") + "\n");
const COMMON = ["replay", corpus, "--renderer", TEST_RENDERER, "--no-progress", "--no-osl"];
const p = (name: string) => join(dir, name);

async function shard(spec: string, out: string, extra: string[] = []): Promise<void> {
  const r = await runCli([...COMMON, "--date", "2026-11-30", ...extra, "--shard", spec, "--out", out]);
  assert.equal(r.code, 0, r.stderr);
}

async function refused(files: string[], code: string): Promise<void> {
  const out = p(`merged-${code}-${files.length}.jsonl`);
  const r = await runCli(["merge", "--out", out, ...files]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`\\b${code}\\b`));
  assert.equal(existsSync(out), false, "nothing written");
}

function lines(path: string): string[] {
  return readFileSync(path, "utf8").split("\n").filter((l) => l !== "");
}

test("merge refuses incomplete, overlapping, mismatched and foreign inputs", async () => {
  await Promise.all([shard("0/2", p("a0.jsonl")), shard("1/2", p("a1.jsonl")), shard("0/3", p("b0.jsonl"))]);
  await shard("1/2", p("late1.jsonl"), ["--date", "2026-12-25"]);
  const ok = await runCli(["merge", "--out", p("ok.jsonl"), p("a0.jsonl"), p("a1.jsonl")]);
  assert.equal(ok.code, 0, ok.stderr);

  await refused([p("a0.jsonl")], "DT_SHARD_MISSING");
  await refused([p("a0.jsonl"), p("a0.jsonl")], "DT_SHARD_OVERLAP");
  await refused([p("a0.jsonl"), p("b0.jsonl")], "DT_SHARD_MISMATCH"); // 2 shards vs 3
  await refused([p("a0.jsonl"), p("late1.jsonl")], "DT_SHARD_MISMATCH"); // another --date

  // a line answered by two shards (a shard file edited, or made with another key rule)
  const a0 = lines(p("a0.jsonl"));
  const a1 = lines(p("a1.jsonl"));
  const lineOf = (l: string) => (JSON.parse(l) as { line: number }).line;
  const body = [...a1.slice(1, -1), a0[1] as string].sort((x, y) => lineOf(x) - lineOf(y));
  // (its trailer made to agree with its records: a shard written with another key rule)
  const t1 = JSON.parse(a1[a1.length - 1] as string) as { deltatok_shard_end: Record<string, unknown> };
  t1.deltatok_shard_end.records = body.length;
  t1.deltatok_shard_end.records_sha256 = createHash("sha256").update(body.map((l) => l + "\n").join("")).digest("hex");
  writeFileSync(p("stolen1.jsonl"), [a1[0] as string, ...body, JSON.stringify(t1)].join("\n") + "\n");
  await refused([p("a0.jsonl"), p("stolen1.jsonl")], "DT_SHARD_OVERLAP");

  // cut short (no trailer), stopped (trailer says so), not a shard output at all
  writeFileSync(p("cut1.jsonl"), a1.slice(0, -1).join("\n") + "\n");
  await refused([p("a0.jsonl"), p("cut1.jsonl")], "DT_SHARD_INVALID");
  const trailer = JSON.parse(a1[a1.length - 1] as string) as { deltatok_shard_end: { summary: Record<string, unknown> } };
  trailer.deltatok_shard_end.summary.stopped = { signal: "SIGTERM", lines_done: 1, lines_not_done: 1, bytes_unread: 10 };
  writeFileSync(p("stopped1.jsonl"), [...a1.slice(0, -1), JSON.stringify(trailer)].join("\n") + "\n");
  await refused([p("a0.jsonl"), p("stopped1.jsonl")], "DT_SHARD_INVALID");
  const plain = await runCli([...COMMON, "--out", p("plain.jsonl")]);
  assert.equal(plain.code, 0, plain.stderr);
  await refused([p("a0.jsonl"), p("plain.jsonl")], "DT_SHARD_INVALID");
});

test("a bad --shard is a usage error (exit 2, DT_INVALID_OPTION); --shard on render is refused", async () => {
  for (const bad of ["2/2", "1/0", "x", "-1/3"]) {
    const r = await runCli([...COMMON, `--shard=${bad}`]);
    assert.equal(r.code, 2, `${bad}: ${r.stderr}`);
    assert.match(r.stderr, /DT_INVALID_OPTION/);
  }
  const render = await runCli(["render", corpus, "--shard", "0/2"]);
  assert.equal(render.code, 2);
});
