/**
 * Sampled ids and logprobs as a Python harness sends them: any JSON number is a number — a
 * logprob `0.0`, `-0.0`, `-1.0`, `1e308`, an integer past 2^53, an id `9707.0` — carried as
 * float64 (exact in JSONL and sidecar answers); an empty `sampled_ids` is an empty completion.
 * Through the library on parsed JSON, the sidecar (stdio, in process) and the rollout CLI; a bad
 * value is DT_INVALID_SAMPLED_IDS and the next request is answered.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Deltatok } from "../src/api/deltatok.js";
import { parseJson } from "../src/json/index.js";
import { InProcessBackend } from "../src/serve/in-process.js";
import { handleLine } from "../src/serve/protocol.js";
import { runCli, jsonl } from "./helpers/cli.js";

const dt = await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30" });
const HELLO = dt.encodeText("Hello");
const one = HELLO[0] as number;
const convo = (sampled: string) => `[{"role":"user","content":"hi"},{"role":"assistant","content":"Hello",${sampled}}]`;
const LPS: Array<[string, number]> = [["0.0", 0], ["-0.0", -0], ["-1.0", -1], ["1e308", 1e308], ["-100000000000000000000", -1e20], ["-0.1", -0.1]];

test("library on parsed JSON: integral floats, -0.0, 1e308 and big integers are logprobs; 9707.0 is an id", () => {
  for (const [text, want] of LPS) {
    const r = dt.tokenizeRollout(parseJson(convo(`"sampled_ids":[${one}.0],"sampled_logprobs":[${text}]`)) as unknown[]);
    const s = r.sequences[0];
    assert.ok(s !== undefined && s.logprobs !== null, text);
    const at = s.turns[0]?.completion[0] as number;
    assert.ok(Object.is(s.logprobs[at], want), `${text} → ${s.logprobs[at]}`);
    assert.deepEqual(Array.from(s.ids.subarray(at, at + 1)), [one]);
  }
  for (const bad of [`"sampled_ids":[${one}.5]`, `"sampled_ids":[${one}],"sampled_logprobs":[1e999]`, `"sampled_ids":[${one}],"sampled_logprobs":[NaN]`, `"sampled_ids":[100000000000000000000]`]) {
    assert.throws(() => dt.tokenizeRollout(parseJson(convo(bad)) as unknown[]), { code: "DT_INVALID_SAMPLED_IDS" }, bad);
  }
});

test("empty sampled_ids: an empty completion (no mask-1 token; drift names the canonical ids)", () => {
  const r = dt.tokenizeRollout(parseJson(convo(`"sampled_ids":[],"sampled_logprobs":[]`)) as unknown[]);
  const s = r.sequences[0];
  assert.ok(s !== undefined);
  const t = s.turns[0] as { completion: [number, number]; sampled: boolean; promptTokens: number };
  assert.deepEqual(t.completion, [t.promptTokens, t.promptTokens]);
  assert.equal(t.sampled, true);
  assert.equal(s.mask.length, 0);
  assert.equal(r.drift[0]?.sampledTokens, 0);
});

test("sidecar: the same values answered exactly; a bad one is coded and the next request answered", async () => {
  const backend = new InProcessBackend(dt);
  for (const [text, want] of LPS) {
    const line = `{"id":1,"method":"tokenize_rollout","params":{"messages":${convo(`"sampled_ids":[${one}.0],"sampled_logprobs":[${text}]`)}}}`;
    const r = (await handleLine(backend, line)) as { result?: { sequences: Array<{ logprobs: Array<number | null> }> } };
    assert.ok(r.result !== undefined, JSON.stringify(r));
    const got = r.result.sequences[0]?.logprobs.at(-1);
    assert.ok(Object.is(got, want), `${text} → ${got}`);
  }
  const bad = (await handleLine(backend, `{"id":2,"method":"tokenize_rollout","params":{"messages":${convo(`"sampled_ids":[${one}.5]`)}}}`)) as { error?: { code: string } };
  assert.equal(bad.error?.code, "DT_INVALID_SAMPLED_IDS");
  const empty = (await handleLine(backend, `{"id":3,"method":"tokenize_rollout","params":{"messages":${convo(`"sampled_ids":[]`)}}}`)) as { result?: unknown };
  assert.ok(empty.result !== undefined);
  const good = (await handleLine(backend, `{"id":4,"method":"count_text","params":{"text":"Hello"}}`)) as { result?: { count: number } };
  assert.equal(good.result?.count, HELLO.length);
});

test("rollout CLI: a line with integral-float logprobs gives exact JSONL logprobs", async () => {
  const dir = mkdtempSync(join(tmpdir(), "dt-lp-"));
  const corpus = join(dir, "c.jsonl");
  writeFileSync(corpus, `{"id":"a","messages":${convo(`"sampled_ids":[${one}.0],"sampled_logprobs":[0.0]`)}}\n{"id":"b","messages":${convo(`"sampled_ids":[${one}],"sampled_logprobs":[-0.1]`)}}\n`);
  const r = await runCli(["rollout", corpus, "--date", "2026-11-30"]);
  assert.equal(r.code, 0, r.stderr);
  const recs = jsonl(r.stdout) as Array<{ error?: unknown; sequences: Array<{ logprobs: Array<number | null> }> }>;
  assert.equal(recs.length, 2);
  assert.equal(recs[0]?.error, undefined);
  assert.equal(recs[0]?.sequences[0]?.logprobs.at(-1), 0);
  assert.equal(recs[1]?.sequences[0]?.logprobs.at(-1), -0.1);
});
