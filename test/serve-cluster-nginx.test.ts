/**
 * Live traffic over several instances: 3 `deltatok serve` behind nginx (deploy/nginx/deltatok.conf,
 * run by scripts/cluster.ts), the bundled corpus through the Python client's apply_chat_template.
 * Every ISL equals the in-process library's, with all instances up (conversation after
 * conversation) and, with 8 conversations in progress at once, with the instance holding the one
 * just answered killed (SIGKILL) a third of the way through, at a request count: its
 * conversations move, the client resends their whole history, 0 errors.
 *
 * Skipped, with a message, where nginx or python3 is absent — unless DELTATOK_REQUIRE_NGINX=1
 * (set by .ci/run, which installs both when missing), where a missing one fails the test.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { connect, createServer, type AddressInfo, type Server } from "node:net";
import { Deltatok } from "../src/api/deltatok.js";
import { assistantIndices } from "../src/corpus/corpus.js";
import { idLabel } from "../src/corpus/id.js";
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
      out.push({ id: idLabel(c.id), index: k, isl: dt.countPrompt(c.messages.slice(0, k), { tools: c.tools, chat_template_kwargs: c.chat_template_kwargs, add_generation_prompt: true }) });
    }
  }
  return out;
}

/** Every request answered once, exactly; `records` may come in another order (interleaved). */
function assertExact(records: readonly ReplayRecord[], want: readonly { id: string; index: number; isl: number }[]): void {
  assert.deepEqual(records.filter((r) => r.error !== undefined), [], "no request may fail");
  const key = (r: { id: string; index: number }) => `${r.id}#${r.index}`;
  const got = new Map(records.map((r) => [key(r), r.isl]));
  assert.equal(got.size, records.length, "no request answered twice");
  assert.equal(records.length, want.length);
  for (const w of want) assert.equal(got.get(key(w)), w.isl, key(w));
}

function run(killThird: boolean, requests: number, interleave: number, front?: (port: number) => Promise<number>) {
  return clusterRun({
    ...(front === undefined ? {} : { front }),
    instances: 3,
    serveArgs: ["--date", DATE, "--workers", "0"],
    nginx: nginx as string,
    corpus,
    replay: { method: "apply_chat_template", python: python as string, interleave },
    killThird,
    requests,
  });
}

test("cluster: 3 instances behind nginx answer every ISL exactly; one killed a third of the way through, still exact, 0 errors", { skip, timeout: 600_000 }, async (t) => {
  assert.equal(missing, null, `DELTATOK_REQUIRE_NGINX=1: ${missing}`);
  const want = await expected();
  assert.ok(want.length > 200);

  await t.test("all instances up (conversation after conversation)", async () => {
    const r = await run(false, want.length, 1);
    assertExact(r.records, want);
    // each request reached one instance's Deltatok once: none lost, none answered twice
    assert.equal(r.instances.reduce((a, s) => a + s.requests, 0), want.length);
    assert.equal(r.client.resent_whole, 0, "a conversation never left its instance");
    assert.equal(r.client.new_conversations, 20);
    assert.ok(r.reuse > 0.9, `reuse ${r.reuse}`);
  });

  await t.test("8 conversations at a time; the instance holding the one in progress killed (SIGKILL) after a third of the requests", async () => {
    const r = await run(true, want.length, 8);
    assert.notEqual(r.killed, null);
    assert.ok(r.pausedAt !== null && r.pausedAt >= Math.floor(want.length / 3), String(r.pausedAt));
    assertExact(r.records, want);
    // the conversation in progress moved: its next request named a state the new instance does not hold, and was resent whole
    assert.ok(r.client.resent_whole! >= 1, JSON.stringify(r.client));
    // only moved conversations were resent: at most one resend per conversation (each moves once)
    assert.ok(r.client.resent_whole! <= 20, JSON.stringify(r.client));
  });

  await t.test("a request in flight when its instance drops the connection is sent to the next instance", async () => {
    // in front of each instance, a TCP relay; the first request any of them receives is taken
    // (nginx has sent it) and its connection reset unanswered, as by an instance dying mid-request
    const relays: Server[] = [];
    let armed = true;
    let resets = 0;
    const front = (port: number) =>
      new Promise<number>((resolve) => {
        const relay = createServer((down) => {
          const up = connect(port, "127.0.0.1");
          down.once("data", (first) => {
            if (armed) {
              armed = false;
              resets++;
              up.destroy();
              down.resetAndDestroy();
              return;
            }
            up.write(first);
            down.pipe(up).pipe(down);
          });
          for (const s of [up, down]) s.on("error", () => (up.destroy(), down.destroy()));
          down.on("close", () => up.destroy());
          up.on("close", () => down.destroy());
        });
        relays.push(relay);
        relay.listen(0, "127.0.0.1", () => resolve((relay.address() as AddressInfo).port));
      });
    try {
      const r = await run(false, want.length, 1, front);
      assert.equal(resets, 1);
      assertExact(r.records, want);
    } finally {
      for (const relay of relays) relay.close();
    }
  });
});
