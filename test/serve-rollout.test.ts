/**
 * The sidecar's tokenize_rollout: over stdio, in process and through a worker pool, it answers
 * what the library's tokenizeRollout answers (rolloutJson), and a bad sampled id is that
 * request's coded error while the server goes on.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Deltatok } from "../src/api/deltatok.js";
import { rolloutJson } from "../src/api/rollout.js";
import { InProcessBackend } from "../src/serve/in-process.js";
import { PoolBackend } from "../src/serve/pool-backend.js";
import { dispatch, parseEnvelope, type Backend } from "../src/serve/protocol.js";
import { repoPath } from "./helpers/paths.js";

const ENGINE = { tokenizer: "qwen3", date: "2026-11-30" };
const convs = readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8")
  .split("\n")
  .filter(Boolean)
  .slice(0, 3)
  .map((l) => JSON.parse(l) as { messages: Array<Record<string, unknown>>; tools: unknown[] });

async function check(backend: Backend): Promise<void> {
  const dt = await Deltatok.create(ENGINE);
  for (const c of convs) {
    const want = JSON.parse(JSON.stringify(rolloutJson(dt.tokenizeRollout(c.messages, { tools: c.tools }))));
    const r = await dispatch(backend, parseEnvelope({ id: 1, method: "tokenize_rollout", params: { messages: c.messages, tools: c.tools } }));
    assert.ok("result" in r, JSON.stringify(r).slice(0, 300));
    assert.deepEqual(JSON.parse(JSON.stringify(r.result)), want);
  }
  const bad = convs[0]?.messages.map((m, i) => (i === 2 ? { ...m, sampled_ids: [-5] } : m));
  const e = await dispatch(backend, parseEnvelope({ id: 2, method: "tokenize_rollout", params: { messages: bad, tools: convs[0]?.tools } }));
  assert.ok("error" in e);
  assert.equal(e.error.code, "DT_INVALID_SAMPLED_IDS");
  const h = await dispatch(backend, parseEnvelope({ id: 3, method: "count_text", params: { text: "still here" } }));
  assert.ok("result" in h);
}

test("tokenize_rollout in process answers the library's rollout", async () => {
  const b = new InProcessBackend(await Deltatok.create(ENGINE));
  await check(b);
  await b.close();
});

test("tokenize_rollout through a worker pool answers the library's rollout", async () => {
  const b = await PoolBackend.create(ENGINE, 1);
  try {
    await check(b);
  } finally {
    await b.close();
  }
});
