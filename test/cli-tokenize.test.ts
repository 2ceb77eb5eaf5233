/**
 * `deltatok tokenize`: JSONL and the binary format hold the same trajectories (checked by
 * reading the binary file here and with the Python client's read_tokens); ids equal a full
 * render + encode; a bad line becomes an error record and the rest are written. With --workers:
 * the same bytes and summary, refusals, SIGTERM, a line whose worker dies twice (a fake pool).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Deltatok } from "../src/api/deltatok.js";
import { parseJson } from "../src/json/index.js";
import { jsonl, runCli, startCli } from "./helpers/cli.js";
import { repoPath } from "./helpers/paths.js";
import { sameOnWorkers, trainingCorpus } from "./helpers/training.js";
import { DeltatokError } from "../src/errors.js";
import { runItem } from "../src/pool/work.js";
import type { WireItem } from "../src/pool/protocol.js";
import { TokenizeSink, tokenizeCorpus } from "../src/cli/tokenize.js";
import { trainCorpusScheduled } from "../src/cli/training-pool.js";

const dir = mkdtempSync(join(tmpdir(), "deltatok-tok-"));
const corpus = join(dir, "c.jsonl");
const lines = readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n").filter(Boolean).slice(0, 3);
writeFileSync(corpus, [lines[0], "{broken", lines[1], lines[2]].join("\n") + "\n");

function readBinary(path: string): Array<Record<string, unknown>> {
  const buf = readFileSync(path);
  assert.equal(buf.subarray(0, 8).toString("latin1"), "DTOKBIN1");
  const at = Number(buf.readBigUInt64LE(buf.length - 8));
  const index = JSON.parse(buf.subarray(at, buf.length - 8).toString("utf8")) as { records: Array<Record<string, unknown>> };
  return index.records.map((r) => {
    if (r.error !== undefined) return r;
    const count = r.count as number;
    const ids = Array.from({ length: count }, (_, i) => buf.readUInt32LE((r.offset as number) + 4 * i));
    const mask = Array.from(buf.subarray(r.mask_offset as number, (r.mask_offset as number) + count));
    return { ...r, ids, mask };
  });
}

test("tokenize writes the same trajectories as JSONL and binary; a bad line is an error record", async () => {
  const j = await runCli(["tokenize", corpus, "--out", join(dir, "t.jsonl"), "--date", "2026-11-30"]);
  assert.equal(j.code, 0, j.stderr);
  const b = await runCli(["tokenize", corpus, "--format", "binary", "--out", join(dir, "t.dtk"), "--date", "2026-11-30"]);
  assert.equal(b.code, 0, b.stderr);
  const recs = jsonl(readFileSync(join(dir, "t.jsonl"), "utf8"));
  const bin = readBinary(join(dir, "t.dtk"));
  assert.equal(recs.length, 4);
  assert.equal(bin.length, 4);
  assert.equal((recs[1]?.error as { code: string }).code, "DT_INVALID_JSON");
  assert.equal((bin[1]?.error as { code: string }).code, "DT_INVALID_JSON");
  const full = await Deltatok.create({ mode: "full", date: "2026-11-30" });
  for (const k of [0, 2, 3]) {
    const r = recs[k] as Record<string, unknown>;
    const conv = parseJson(lines[k === 0 ? 0 : k - 1] as string) as { messages: unknown[]; tools: unknown[] };
    assert.deepEqual(r.ids, Array.from(full.encodePrompt(conv.messages, { tools: conv.tools, add_generation_prompt: false })));
    assert.deepEqual(bin[k]?.ids, r.ids);
    assert.deepEqual(bin[k]?.spans, r.spans);
    const ranges: number[][] = [];
    (bin[k]?.mask as number[]).forEach((v, i, a) => {
      if (v === 1 && (i === 0 || a[i - 1] === 0)) ranges.push([i, i + 1]);
      else if (v === 1) (ranges[ranges.length - 1] as number[])[1] = i + 1;
    });
    assert.deepEqual(ranges, r.assistant_mask);
  }
});

test("the Python client reads the binary format", { skip: spawnSync("python3", ["--version"]).status === 0 ? false : "python3 is not installed" }, async () => {
  const out = join(dir, "py.dtk");
  const b = await runCli(["tokenize", corpus, "--format", "binary", "--out", out, "--date", "2026-11-30"]);
  assert.equal(b.code, 0, b.stderr);
  const py = spawnSync(
    "python3",
    ["-c", "import json,sys; from deltatok_client import read_tokens; print(json.dumps([[r.get('id'), len(r['ids']), sum(r['assistant_mask'])] if 'ids' in r else r['error']['code'] for r in read_tokens(sys.argv[1])]))", out],
    { cwd: repoPath("clients", "python"), encoding: "utf8" },
  );
  assert.equal(py.status, 0, py.stderr);
  const got = JSON.parse(py.stdout) as unknown[];
  const bin = readBinary(out);
  assert.deepEqual(
    got,
    bin.map((r) => (r.error !== undefined ? (r.error as { code: string }).code : [r.id, r.count, (r.mask as number[]).reduce((x, y) => x + y, 0)])),
  );
});

test("tokenize --workers 2 writes exactly the in-process JSONL and binary file, bad lines in place", async () => {
  const c = trainingCorpus(dir);
  for (const format of ["jsonl", "binary"]) {
    const { s2, out } = await sameOnWorkers(dir, `tokenize-${format}`, ["tokenize", c, "--date", "2026-11-30", "--no-progress", "--format", format]);
    // 21 conversations (20 + a repeat) and 3 lines that fail, on the workers; the line that is
    // not UTF-8 is answered by the reader
    assert.equal((s2.workers_jobs as number[]).reduce((x, y) => x + y, 0), 24);
    assert.equal(s2.errors, 4);
    if (format === "jsonl") assert.deepEqual(jsonl(out.toString("utf8")).filter((r) => r.error !== undefined).map((r) => (r.error as { code: string }).code), ["DT_INVALID_JSON", "DT_INVALID_MESSAGES", "DT_INVALID_CONTENT", "DT_INVALID_UTF8"]);
  }
});

test("tokenize --workers: refusals (exit 2) — a pipe, past the CPU cap, --worker-heap-mb without workers", async () => {
  const c = trainingCorpus(dir);
  // the child's stdin is a pipe
  const pipe = await runCli(["tokenize", "/dev/stdin", "--workers", "2"]);
  assert.equal(pipe.code, 2, pipe.stderr);
  assert.match(pipe.stderr, /regular corpus file/);
  assert.equal((await runCli(["tokenize", c, "--workers", "100000"])).code, 2);
  assert.equal((await runCli(["tokenize", c, "--worker-heap-mb", "800"])).code, 2);
});

test("SIGTERM during tokenize --workers 2: a prefix of the in-process output, summary stopped, one notice, exit 143", async () => {
  const slice = readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n").filter((l) => l.trim() !== "");
  const big = join(dir, "big.jsonl");
  const many: string[] = [];
  for (let r = 0; r < 6; r++) for (const l of slice) many.push(l.replace(/"id":\s*"([^"]*)"/, `"id": "$1-r${r}"`));
  writeFileSync(big, many.join("\n") + "\n");
  const serial = await runCli(["tokenize", big, "--date", "2026-11-30", "--no-progress"]);
  assert.equal(serial.code, 0, serial.stderr);
  const summaryFile = join(dir, "stopped.json");
  const live = startCli(["tokenize", big, "--date", "2026-11-30", "--no-progress", "--workers", "2", "--summary", summaryFile]);
  // the signal once the first record is out: the run is then past its first pass, workers busy
  await live.waitFor(() => live.stdout().includes("\n")).catch(() => undefined);
  live.child.kill("SIGTERM");
  const { code } = await live.exited;
  const stdout = live.stdout();
  assert.ok(serial.stdout.startsWith(stdout), "the records written are a prefix of the in-process output");
  assert.ok(stdout === "" || stdout.endsWith("\n"), "whole records only");
  const summary = JSON.parse(readFileSync(summaryFile, "utf8")) as { conversations: number; stopped?: { signal: string } };
  const notices = live.stderr().split("\n").filter((l) => l.includes("stopped by"));
  if (code === 143) {
    assert.equal(notices.length, 1, live.stderr());
    assert.match(notices[0] as string, /^deltatok: tokenize stopped by SIGTERM/);
    assert.equal(summary.stopped?.signal, "SIGTERM");
    assert.equal(summary.conversations, jsonl(stdout).length);
  } else {
    // the run finished before the signal landed: the complete output
    assert.equal(code, 0, live.stderr());
    assert.equal(stdout, serial.stdout);
    assert.equal(summary.stopped, undefined);
  }
});

test("on workers, a line whose worker dies twice is that line's error record, in place; the rest are the in-process records", async () => {
  const c = join(dir, "crash.jsonl");
  const crash = (lines[1] as string).replace(/"id":\s*"([^"]*)"/, '"id": "crash-me"');
  writeFileSync(c, [lines[0], crash, lines[2]].join("\n") + "\n");
  const dt = await Deltatok.create({ date: "2026-11-30" });
  const o = { chatTemplateKwargs: null, parseToolArguments: false, format: "jsonl", progress: false } as const;
  await tokenizeCorpus(dt, c, join(dir, "crash-0.jsonl"), o);
  // a pool whose workers answer by runItem, and die on the crash-me line (every time)
  const pool = {
    size: 2,
    runBatch: async (_worker: number, items: WireItem[]) => {
      if (items.some((it) => it.k === "training" && it.json.includes("crash-me"))) throw new DeltatokError("DT_WORKER_CRASHED", "test: the worker died");
      return items.map((it) => runItem(dt, it));
    },
  };
  const s = await trainCorpusScheduled(pool, c, "tokenize", new TokenizeSink(c, join(dir, "crash-2.jsonl"), "jsonl", dt.options.tokenizer, undefined), o);
  const serial = jsonl(readFileSync(join(dir, "crash-0.jsonl"), "utf8"));
  const pooled = jsonl(readFileSync(join(dir, "crash-2.jsonl"), "utf8"));
  assert.equal(pooled.length, 3);
  assert.deepEqual(pooled[0], serial[0]);
  assert.deepEqual(pooled[2], serial[2]);
  assert.deepEqual(pooled[1], { id: "crash-me", line: 2, error: { code: "DT_WORKER_CRASHED", message: (pooled[1]?.error as { message: string }).message } });
  assert.equal(s.errors, 1);
  assert.equal(s.conversations, 2);
  assert.deepEqual(s.workers_jobs.reduce((x, y) => x + y, 0), 2);
});
