/**
 * Live traffic over several instances: 3 `deltatok serve` behind nginx (deploy/nginx/deltatok.conf,
 * run by scripts/cluster.ts), the bundled corpus through the Python client's apply_chat_template.
 * Every ISL equals the in-process library's, with all instances up and with the instance holding
 * the conversation in progress killed (SIGKILL) a third of the way through, at a request count:
 * its conversations move, the client resends their whole history, 0 errors.
 *
 * Skipped, with a message, where nginx or python3 is absent — unless DELTATOK_REQUIRE_NGINX=1
 * (set by .ci/run, which installs both when missing), where a missing one fails the test.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { Deltatok } from "../src/api/deltatok.js";
import { assistantIndices } from "../src/corpus/corpus.js";
import { loadConversations } from "../bench/replay.js";
import { clusterRun, findNginx, type ReplayRecord } from "../scripts/cluster.js";
import { repoPath } from "./helpers/paths.js";

const required = process.env.DELTATOK_REQUIRE_NGINX === "1";
const nginx = findNginx();
const python = spawnSync("python3", ["--version"]).status === 0 ? "python3" : null;
const built = existsSync(repoPath("dist", "src", "cli", "main.js"));
const missing = nginx === null ? "nginx is not installed (apt-get install -y nginx)" : python === null ? "python3 is not installed" : !built ? "not built (npm run build)" : null;
const skip = missing !== null && !required ? missing : false;
const corpus = repoPath("data", "tau-bench-airline-20.jsonl");
const DATE = "2026-11-30";

async function expected(): Promise<{ id: string; index: number; isl: number }[]> {
  const dt = await Deltatok.create({ tokenizer: "qwen3", date: DATE });
  const out: { id: string; index: number; isl: number }[] = [];
  for (const c of loadConversations(corpus)) {
    for (const k of assistantIndices(c.messages)) {
      out.push({ id: c.id, index: k, isl: dt.countPrompt(c.messages.slice(0, k), { tools: c.tools, chat_template_kwargs: c.chat_template_kwargs, add_generation_prompt: true }) });
    }
  }
  return out;
}

function assertExact(records: readonly ReplayRecord[], want: readonly { id: string; index: number; isl: number }[]): void {
  assert.equal(records.length, want.length);
  assert.deepEqual(records.filter((r) => r.error !== undefined), [], "no request may fail");
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    assert.deepEqual(records[i], { id: w.id, index: w.index, isl: w.isl }, `request ${i} (${w.id}#${w.index})`);
  }
}

function run(killThird: boolean, requests: number) {
  return clusterRun({
    instances: 3,
    serveArgs: ["--date", DATE, "--workers", "0"],
    nginx: nginx as string,
    corpus,
    replay: { method: "apply_chat_template", python: python as string },
    killThird,
    requests,
  });
}

test("cluster: 3 instances behind nginx answer every ISL exactly; one killed a third of the way through, still exact, 0 errors", { skip, timeout: 600_000 }, async (t) => {
  assert.equal(missing, null, `DELTATOK_REQUIRE_NGINX=1: ${missing}`);
  const want = await expected();
  assert.ok(want.length > 200);

  await t.test("all instances up", async () => {
    const r = await run(false, want.length);
    assertExact(r.records, want);
    // each request reached one instance's engine once: none lost, none answered twice
    assert.equal(r.instances.reduce((a, s) => a + s.requests, 0), want.length);
    assert.equal(r.client.resent_whole, 0, "a conversation never left its instance");
    assert.equal(r.client.new_conversations, 20);
    assert.ok(r.reuse > 0.9, `reuse ${r.reuse}`);
  });

  await t.test("the instance holding the conversation in progress killed (SIGKILL) after a third of the requests", async () => {
    const r = await run(true, want.length);
    assert.notEqual(r.killed, null);
    assert.ok(r.pausedAt !== null && r.pausedAt >= Math.floor(want.length / 3), String(r.pausedAt));
    assertExact(r.records, want);
    // the conversation in progress moved: its next request named a state the new instance does not hold, and was resent whole
    assert.ok(r.client.resent_whole! >= 1, JSON.stringify(r.client));
  });
});
