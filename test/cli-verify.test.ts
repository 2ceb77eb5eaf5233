/**
 * `deltatok verify`: incremental and full agree on a real corpus slice (exit 0, every request
 * identical or failing alike); its difference reporting works: fed two Deltatoks that cannot
 * agree (different tokenizers), it reports the first differing token of every request; and its
 * triage names the stage that is wrong: a fault injected into the splice (the ids the Deltatok
 * answers) is reported as "splice", one injected into the incremental render as "render", a
 * reference encoder that disagrees as "encoder" — and the switches that take a stage out
 * (--no-incremental-render, --no-incremental-splice) keep the answers exact.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Deltatok } from "../src/api/deltatok.js";
import { STAGE_HOOKS } from "../src/api/stages.js";
import { verifyCorpus, type VerifyOptions } from "../src/cli/verify.js";
import { runCli } from "./helpers/cli.js";
import { repoPath } from "./helpers/paths.js";

const dir = mkdtempSync(join(tmpdir(), "deltatok-verify-"));
const corpus = join(dir, "c.jsonl");
writeFileSync(corpus, readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n").slice(0, 3).join("\n") + "\n");

test("verify: incremental and full agree on every request (exit 0)", async () => {
  const r = await runCli(["verify", corpus, "--final", "--date", "2026-11-30"]);
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(r.stdout) as { requests: number; identical: number; differ: number; same_errors: number };
  assert.ok(s.requests > 20);
  assert.equal(s.differ, 0);
  assert.equal(s.identical + s.same_errors, s.requests);
});

test("verify reports the first differing token when answers differ", async () => {
  const a = await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30" });
  const b = await Deltatok.create({ tokenizer: "llama3_1", chatTemplateFile: repoPath("test/fixtures/template/golden/templates/qwen3.jinja"), mode: "full", date: "2026-11-30" });
  const s = await verifyCorpus(a, b, corpus, { chatTemplateKwargs: null, parseToolArguments: false, final: false, maxReported: 5, progress: false }, (ids) => a.tokenizer.tokenizer.decode(Array.from(ids)));
  assert.equal(s.differ, s.requests);
  assert.equal(s.differences.length, 5, "at most maxReported listed, all counted");
  const d = s.differences[0];
  assert.equal(d?.kind, "ids");
  assert.equal(typeof d?.position, "number");
  assert.notEqual(d?.incremental.token, d?.full.token);
});

const OPTS: VerifyOptions = { chatTemplateKwargs: null, parseToolArguments: false, final: false, maxReported: 1000, progress: false };

async function pair(): Promise<[Deltatok, Deltatok]> {
  return Promise.all([Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30" }), Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30", mode: "full" })]);
}

test("verify names the splice stage when the splice answers wrong ids", async () => {
  const [inc, full] = await pair();
  // a test-only fault: the last id of every answer that reused a cached prefix is off by one
  inc[STAGE_HOOKS] = {
    tokenized: (t) => {
      if (t.outcome !== "partial" || t.ids === null) return;
      const ids = t.ids.slice();
      ids[ids.length - 1] = (ids[ids.length - 1] as number) + 1;
      return { ...t, ids };
    },
  };
  const s = await verifyCorpus(inc, full, corpus, OPTS, (ids) => inc.decode(ids));
  assert.ok(s.differ > 10, `the fault shows: ${s.differ}`);
  assert.deepEqual(s.stages, { render: 0, splice: s.differ, encoder: 0, unattributed: 0 });
  for (const d of s.differences) {
    assert.equal(d.stage, "splice");
    assert.equal(d.splice?.outcome, "partial");
    assert.equal(d.splice?.position, (d.incremental.count as number) - 1, "the first wrong id is the one the fault changed");
    assert.ok((d.splice?.reused as number) <= (d.splice?.position as number), "after the reused prefix: the encode from the cut, not the cut");
    assert.equal(d.splice?.spliced, (d.splice?.encoded as number) + 1);
  }
  assert.equal(inc[STAGE_HOOKS] !== null && typeof inc[STAGE_HOOKS]?.tokenized, "function", "verify puts the caller's hooks back");
});

test("verify names the render stage when the incremental render is wrong", async () => {
  const [inc, full] = await pair();
  // a test-only fault: every incremental render gets a stray space at its end
  inc[STAGE_HOOKS] = {
    rendered: (r, incremental) => {
      if (!incremental) return;
      const segments = r.segments.slice();
      segments[segments.length - 1] += " ";
      return { ...r, segments };
    },
  };
  const s = await verifyCorpus(inc, full, corpus, OPTS, (ids) => inc.decode(ids));
  assert.equal(s.differ, s.requests, "the fault shows in every request");
  assert.equal(s.stages.render, s.differ);
  for (const d of s.differences) {
    assert.equal(d.stage, "render");
    assert.equal(d.render?.incremental, " ", "the incremental render has the stray space where the whole render ends");
    assert.equal(d.render?.whole, "");
    assert.equal(d.splice, undefined);
  }
});

test("verify names the encoder stage when the reference encoder disagrees", async () => {
  const [inc, full] = await pair();
  const tok = inc.tokenizer.tokenizer;
  let calls = 0;
  const reference = {
    name: "test reference",
    encode: (text: string) => {
      calls++;
      const ids = tok.encode(text);
      // agrees, except on renders of odd length
      return text.length % 2 === 1 ? [...ids, 0] : ids;
    },
  };
  const s = await verifyCorpus(inc, full, corpus, { ...OPTS, reference }, (ids) => inc.decode(ids));
  assert.equal(calls, s.requests, "every whole render is encoded by the reference");
  assert.equal(s.reference_encoder, "test reference");
  assert.ok(s.differ > 0 && s.differ < s.requests, `some renders differ: ${s.differ}`);
  assert.deepEqual(s.stages, { render: 0, splice: 0, encoder: s.differ, unattributed: 0 });
  for (const d of s.differences) {
    assert.equal(d.stage, "encoder");
    assert.equal(d.position, d.full.count, "the reference's extra id");
    assert.equal(d.reference?.token, 0);
  }
});

test("verify --no-incremental-render --no-incremental-splice --check-incremental-render --check-encoder: still exact, every stage checked", async () => {
  const r = await runCli(["verify", corpus, "--date", "2026-11-30", "--no-incremental-render", "--no-incremental-splice", "--check-incremental-render", "--check-encoder"]);
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(r.stdout) as { requests: number; differ: number; stages: Record<string, number>; reference_encoder: string | null; reuse_ratio: number };
  assert.ok(s.requests > 20);
  assert.equal(s.differ, 0);
  assert.deepEqual(s.stages, { render: 0, splice: 0, encoder: 0, unattributed: 0 });
  assert.match(s.reference_encoder ?? "", /Rust tokenizers/);
  assert.equal(s.reuse_ratio, 0, "nothing spliced");
  const bad = await runCli(["replay", corpus, "--check-encoder"]);
  assert.equal(bad.code, 2, "--check-encoder is verify's");
});
