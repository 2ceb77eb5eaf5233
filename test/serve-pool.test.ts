/**
 * The sidecar through the worker pool (`deltatok serve` by default from 4 CPUs on): every method
 * answers as the in-process Deltatok does, including tokenize_trajectory and conversation prefixes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { createInterface } from "node:readline";
import { Deltatok } from "../src/api/deltatok.js";
import { PoolBackend } from "../src/serve/pool-backend.js";
import { serve } from "../src/serve/server.js";
import { trajectoryJson } from "../src/api/trajectory.js";
import { readFileSync } from "node:fs";
import { repoPath } from "./helpers/paths.js";
import { serveDefaultWorkers } from "../src/cli/main.js";

const convo = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "Hi" },
  { role: "assistant", content: "Hello." },
  { role: "user", content: "Bye" },
  { role: "assistant", content: "Goodbye." },
];

test("pooled sidecar: counts, ids, trajectories and prefixes equal the in-process answers", async () => {
  const dt = await Deltatok.create({ date: "2026-11-30" });
  const input = new PassThrough();
  const output = new PassThrough();
  const server = await serve({ backend: await PoolBackend.create({ date: "2026-11-30" }, 1), stdio: { input, output }, handleSignals: false });
  const answers = new Map<unknown, Record<string, unknown>>();
  createInterface({ input: output }).on("line", (l) => {
    const r = JSON.parse(l) as Record<string, unknown>;
    answers.set(r.id, r);
  });
  const send = (o: unknown) => input.write(JSON.stringify(o) + "\n");
  send({ id: 1, method: "count_prompt", params: { messages: convo.slice(0, 2), conversation_id: "c", state: 1 } });
  send({ id: 2, method: "count_prompt", params: { messages: convo.slice(2, 4), conversation_id: "c", state: 2, prefix: { state: 1, length: 2 } } });
  send({ id: 3, method: "encode_prompt", params: { messages: convo } });
  send({ id: 4, method: "count_message", params: { message: convo[2] } });
  send({ id: 5, method: "count_text", params: { text: "hello world" } });
  send({ id: 6, method: "tokenize_trajectory", params: { messages: convo } });
  send({ id: 7, method: "tokenize_trajectory", params: { messages: [] } });
  input.end();
  await server.closed;
  const result = (id: number) => answers.get(id)?.result as Record<string, unknown>;
  assert.equal(result(1).count, dt.countPrompt(convo.slice(0, 2)));
  assert.equal(result(2).count, dt.countPrompt(convo.slice(0, 4)));
  assert.deepEqual(result(3).ids, Array.from(dt.encodePrompt(convo)));
  assert.equal(result(4).count, dt.countMessage(convo[2]));
  assert.equal(result(5).count, 2);
  assert.deepEqual(result(6), trajectoryJson(dt.tokenizeTrajectory(convo)));
  assert.equal((answers.get(7)?.error as { code: string }).code, "DT_INVALID_MESSAGES");
});

test("pooled sidecar, 2 workers, 64 in flight: a growing conversation's prefixes never miss (no DT_PREFIX_UNKNOWN) and counts equal in-process", async () => {
  const lines = readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").trim().split("\n");
  const dt = await Deltatok.create({ date: "2026-11-30" });
  // the requests a harness sends for each assistant turn, as the Python client words them
  const bodies: string[] = [];
  const want: number[] = [];
  for (const line of lines) {
    const c = JSON.parse(line) as { id: string; messages: Array<{ role: string }>; tools?: unknown[] };
    let prev: { state: number; length: number } | null = null;
    c.messages.forEach((m, k) => {
      if (m.role !== "assistant") return;
      const state = bodies.length;
      const msgs = c.messages.slice(0, k);
      const params =
        prev === null
          ? { messages: msgs, tools: c.tools, conversation_id: c.id, state }
          : { messages: msgs.slice(prev.length), prefix: prev, conversation_id: c.id, state };
      bodies.push(JSON.stringify(params));
      want.push(dt.countPrompt(msgs, { tools: c.tools as never }));
      prev = { state, length: msgs.length };
    });
  }
  // up to 64 requests in flight, several of them turns of one conversation
  const backend = await PoolBackend.create({ date: "2026-11-30" }, 2);
  const got: Array<number | string> = new Array(bodies.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < bodies.length) {
        const i = next++;
        try {
          got[i] = ((await backend.callRaw("count_prompt", bodies[i] as string)) as { count: number }).count;
        } catch (e) {
          got[i] = (e as { code: string }).code;
        }
      }
    }),
  );
  await backend.close();
  assert.deepEqual(got, want);
});

test("serve's default worker count: in-thread below 4 CPUs, else all CPUs but one (left to the harness)", () => {
  assert.deepEqual([1, 2, 3, 4, 8, 64].map(serveDefaultWorkers), [0, 0, 0, 3, 7, 63]);
});
