/**
 * `deltatok rollout`: JSONL records are the library's rollouts (rolloutJson) in corpus order; the
 * binary file holds the same sequences (ids, mask bytes, float64 logprobs with NaN where none,
 * read back here); a bad line is an error record and the rest are written; the summary counts
 * sequences, splits by reason and drift.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Deltatok } from "../src/api/deltatok.js";
import { rolloutJson } from "../src/api/rollout.js";
import { parseJson } from "../src/json/index.js";
import { jsonl, runCli } from "./helpers/cli.js";
import { repoPath } from "./helpers/paths.js";
import { sameOnWorkers, trainingCorpus } from "./helpers/training.js";

const dir = mkdtempSync(join(tmpdir(), "deltatok-rollout-"));
const lines = readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n").filter(Boolean).slice(0, 3);
const convs = lines.map((l) => parseJson(l) as { id: string; messages: Array<Record<string, unknown>>; tools: unknown[] });
const dt = await Deltatok.create({ date: "2026-11-30" });
// the second conversation carries sampled ids for its first assistant message, one of them altered
{
  const c = convs[1] as (typeof convs)[number];
  const r = dt.tokenizeRollout(c.messages, { tools: c.tools });
  const t = r.sequences[0]?.turns[0] as { index: number; completion: [number, number] };
  const ids = Array.from(r.sequences[0]?.ids.subarray(t.completion[0], t.completion[1]) ?? []);
  ids[0] = 11; // another token: drift
  Object.assign(c.messages[t.index] as Record<string, unknown>, { sampled_ids: ids, sampled_logprobs: ids.map((_x, i) => -i / 8) });
}
const corpus = join(dir, "c.jsonl");
writeFileSync(corpus, [JSON.stringify(convs[0]), "{broken", JSON.stringify(convs[1]), JSON.stringify(convs[2])].join("\n") + "\n");

function readBinary(path: string): Array<Record<string, unknown>> {
  const buf = readFileSync(path);
  assert.equal(buf.subarray(0, 8).toString("latin1"), "DTROLL02");
  const at = Number(buf.readBigUInt64LE(buf.length - 8));
  const index = JSON.parse(buf.subarray(at, buf.length - 8).toString("utf8")) as { format: string; records: Array<Record<string, unknown>> };
  assert.equal(index.format, "deltatok-rollouts");
  return index.records.map((r) => {
    if (r.error !== undefined) return r;
    const sequences = (r.sequences as Array<Record<string, number | null>>).map((s) => {
      const n = s.count as number;
      const ids = Array.from({ length: n }, (_, i) => buf.readUInt32LE((s.offset as number) + 4 * i));
      const mask = Array.from(buf.subarray(s.mask_offset as number, (s.mask_offset as number) + n));
      const logprobs = s.logprobs_offset === null ? null : Array.from({ length: n }, (_, i) => buf.readDoubleLE((s.logprobs_offset as number) + 8 * i));
      return { ids, mask, logprobs, turns: s.turns };
    });
    return { id: r.id, sequences, splits: r.splits, drift: r.drift };
  });
}

test("rollout writes the library's rollouts as JSONL and binary; a bad line is an error record", async () => {
  const summary = join(dir, "s.json");
  const j = await runCli(["rollout", corpus, "--out", join(dir, "r.jsonl"), "--date", "2026-11-30", "--summary", summary]);
  assert.equal(j.code, 0, j.stderr);
  const b = await runCli(["rollout", corpus, "--format", "binary", "--out", join(dir, "r.bin"), "--date", "2026-11-30"]);
  assert.equal(b.code, 0, b.stderr);
  const recs = jsonl(readFileSync(join(dir, "r.jsonl"), "utf8"));
  const bin = readBinary(join(dir, "r.bin"));
  assert.equal(recs.length, 4);
  assert.equal((recs[1]?.error as { code: string }).code, "DT_INVALID_JSON");
  assert.equal((bin[1]?.error as { code: string }).code, "DT_INVALID_JSON");
  const fresh = await Deltatok.create({ date: "2026-11-30" });
  let drift = 0;
  for (const [k, ci] of [[0, 0], [2, 1], [3, 2]] as const) {
    const c = convs[ci] as (typeof convs)[number];
    const want = JSON.parse(JSON.stringify({ id: c.id, ...rolloutJson(fresh.tokenizeRollout(c.messages, { tools: c.tools })) })) as Record<string, unknown>;
    assert.deepEqual(recs[k], want);
    const seqs = want.sequences as Array<{ ids: number[]; mask: Array<[number, number]>; logprobs: Array<number | null> | null; turns: unknown }>;
    const got = bin[k]?.sequences as Array<{ ids: number[]; mask: number[]; logprobs: number[] | null; turns: unknown }>;
    assert.equal(got.length, seqs.length);
    seqs.forEach((s, i) => {
      const g = got[i] as (typeof got)[number];
      assert.deepEqual(g.ids, s.ids);
      assert.deepEqual(g.turns, s.turns);
      const mask = new Array<number>(s.ids.length).fill(0);
      for (const [a, e] of s.mask) mask.fill(1, a, e);
      assert.deepEqual(g.mask, mask);
      if (s.logprobs === null) assert.equal(g.logprobs, null);
      else s.logprobs.forEach((x, t) => (x === null ? assert.ok(Number.isNaN(g.logprobs?.[t])) : assert.equal(g.logprobs?.[t], x)));
    });
    assert.deepEqual(bin[k]?.splits, want.splits);
    drift += (want.drift as unknown[]).length;
  }
  assert.equal(drift, 1);
  const s = JSON.parse(readFileSync(summary, "utf8")) as Record<string, unknown>;
  assert.equal(s.conversations, 3);
  assert.equal(s.errors, 1);
  assert.equal(s.drifted_messages, 1);
  assert.equal(s.sampled_turns, 1);
  const splits = Object.values(s.splits_by_reason as Record<string, number>).reduce((a, x) => a + x, 0);
  assert.equal(s.sequences, splits + 3);
});

test("rollout --format binary without --out is a usage error", async () => {
  const r = await runCli(["rollout", corpus, "--format", "binary"]);
  assert.equal(r.code, 2);
});

test("rollout --workers 2 writes exactly the in-process JSONL and binary file (sampled ids and logprobs included), bad lines in place", async () => {
  // the conversation with sampled ids and logprobs (drift, a float64 logprobs array moved from a worker) rides along
  const c = trainingCorpus(dir, [JSON.stringify(convs[1])]);
  for (const format of ["jsonl", "binary"]) {
    const { s2 } = await sameOnWorkers(dir, `rollout-${format}`, ["rollout", c, "--date", "2026-11-30", "--no-progress", "--format", format]);
    assert.equal((s2.workers_jobs as number[]).reduce((x, y) => x + y, 0), 25);
    assert.equal(s2.errors, 4);
    assert.ok((s2.sampled_turns as number) > 0 && (s2.drifted_messages as number) > 0);
  }
  const recs = readBinary(join(dir, "rollout-binary-w2.out"));
  assert.ok(recs.some((r) => (r.sequences as Array<{ logprobs: unknown }> | undefined)?.some((q) => q.logprobs !== null)));
});
