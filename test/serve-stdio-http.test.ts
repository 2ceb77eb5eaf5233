/**
 * The sidecar: JSON lines over a pipe and HTTP on loopback. Many requests in flight on one pipe
 * all answer with their ids; malformed lines get coded errors and later lines still work;
 * batches answer in order with per-item errors; closing the input answers what is in flight.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { createInterface } from "node:readline";
import { Deltatok } from "../src/api/deltatok.js";
import { InProcessBackend } from "../src/serve/in-process.js";
import { serve } from "../src/serve/server.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const dt = await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30", renderer: TEST_RENDERER });
const convo = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "Hi" },
  { role: "assistant", content: "Hello." },
  { role: "user", content: "Bye" },
];

async function pipeServer() {
  const input = new PassThrough();
  const output = new PassThrough();
  const server = await serve({ backend: new InProcessBackend(dt), stdio: { input, output }, handleSignals: false });
  const all: Array<Record<string, unknown>> = [];
  createInterface({ input: output }).on("line", (l) => {
    const r = JSON.parse(l) as Record<string, unknown>;
    all.push(r);
  });
  // one request at a time: resolves with the next answer, whatever its id
  const ask = (line: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const n = all.length;
      const poll = () => (all.length > n ? resolve(all[n] as Record<string, unknown>) : setImmediate(poll));
      input.write(line + "\n");
      poll();
    });
  return { input, server, ask, all };
}

test("1,000 requests in flight on one pipe all answer, each with its id", async () => {
  const { input, server, all } = await pipeServer();
  const want = new Map<number, number>();
  for (let i = 0; i < 1000; i++) {
    const msgs = convo.slice(0, 2 + (i % 3));
    input.write(JSON.stringify({ id: i, method: "count_prompt", params: { messages: msgs } }) + "\n");
    want.set(i, dt.countPrompt(msgs));
  }
  input.end();
  await server.closed;
  assert.equal(all.length, 1000);
  for (const r of all) assert.equal((r.result as { count: number }).count, want.get(r.id as number));
  assert.equal(new Set(all.map((r) => r.id)).size, 1000);
});

test("malformed lines get coded errors and the pipe stays usable", async () => {
  const { input, server, ask } = await pipeServer();
  const bad: Array<[string, string]> = [
    ["{not json", "DT_INVALID_JSON"],
    ["[1,2]", "DT_INVALID_REQUEST"],
    [JSON.stringify({ id: "m", method: "fly" }), "DT_UNKNOWN_METHOD"],
    [JSON.stringify({ id: "p", method: "count_text", params: [] }), "DT_INVALID_REQUEST"],
    [JSON.stringify({ id: "t", method: "count_text", params: { text: 5 } }), "DT_INVALID_REQUEST"],
    [JSON.stringify({ id: "c", method: "count_prompt", params: { messages: [{ role: "user", content: 3 }] } }), "DT_INVALID_CONTENT"],
  ];
  for (const [line, code] of bad) {
    const r = await ask(line);
    assert.equal((r.error as { code: string }).code, code, line);
  }
  const ok = await ask(JSON.stringify({ id: "after", method: "count_text", params: { text: "hello world" } }));
  assert.equal(ok.id, "after");
  assert.deepEqual(ok.result, { count: 2 });
  input.end();
  await server.closed;
});

test("batch answers in order, with per-item errors in place", async () => {
  const { input, server, ask } = await pipeServer();
  const r = await ask(
    JSON.stringify({
      id: "b",
      method: "batch",
      params: {
        requests: [
          { method: "count_text", params: { text: "a b c" } },
          { method: "count_message", params: { message: { role: "assistant", content: "Sure." } } },
          { method: "count_text", params: {} },
          { method: "nope", params: {} },
          { method: "encode_prompt", params: { messages: convo } },
        ],
      },
    }),
  );
  const results = (r.result as { results: Array<Record<string, unknown>> }).results;
  assert.equal(results.length, 5);
  assert.deepEqual(results[0], { result: { count: dt.countText("a b c") } });
  assert.deepEqual(results[1], { result: { count: dt.countMessage({ role: "assistant", content: "Sure." }) } });
  assert.equal((results[2]?.error as { code: string }).code, "DT_INVALID_REQUEST");
  assert.equal((results[3]?.error as { code: string }).code, "DT_UNKNOWN_METHOD");
  assert.deepEqual((results[4]?.result as { ids: number[] }).ids, Array.from(dt.encodePrompt(convo)));
  input.end();
  await server.closed;
});

test("HTTP: /rpc, /v1/<method>, /health, and coded errors with status codes", async () => {
  const server = await serve({ backend: new InProcessBackend(dt), port: 0, handleSignals: false });
  const base = `http://127.0.0.1:${server.port}`;
  const post = async (path: string, body: string) => {
    const res = await fetch(base + path, { method: "POST", body, headers: { "content-type": "application/json" } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  let r = await post("/rpc", JSON.stringify({ id: 7, method: "count_prompt", params: { messages: convo } }));
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.id, 7);
  assert.equal((r.body.result as { count: number }).count, dt.countPrompt(convo));
  r = await post("/v1/count_text", JSON.stringify({ text: "hello world" }));
  assert.deepEqual(r.body.result, { count: 2 });
  r = await post("/v1/count_text", "{oops");
  assert.equal(r.status, 400);
  assert.equal((r.body.error as { code: string }).code, "DT_INVALID_JSON");
  r = await post("/v1/fly", "{}");
  assert.equal(r.status, 404);
  r = await post("/v1/count_prompt", JSON.stringify({ messages: [] }));
  assert.equal(r.status, 200);
  assert.equal((r.body.error as { code: string }).code, "DT_INVALID_MESSAGES");
  const h = await fetch(base + "/health");
  assert.equal(((await h.json()) as { result: { status: string } }).result.status, "ok");
  assert.equal((await fetch(base + "/rpc")).status, 405);
  await server.close();
  await server.close(); // idempotent
});

test("conversation prefixes: a request carrying only new messages answers as the whole request would", async () => {
  const { input, server, ask } = await pipeServer();
  const tools = [{ type: "function", function: { name: "f", description: "d", parameters: { type: "object", properties: {} } } }];
  const full = (k: number) => dt.countPrompt(convo.slice(0, k), { tools });
  let r = await ask(JSON.stringify({ id: 1, method: "count_prompt", params: { messages: convo.slice(0, 2), tools, conversation_id: "c", state: "s1" } }));
  assert.equal((r.result as { count: number }).count, full(2));
  r = await ask(JSON.stringify({ id: 2, method: "count_prompt", params: { messages: convo.slice(2, 4), prefix: { state: "s1", length: 2 }, conversation_id: "c", state: "s2" } }));
  assert.equal((r.result as { count: number }).count, full(4), "tools carried over from s1");
  r = await ask(JSON.stringify({ id: 3, method: "count_prompt", params: { messages: [], prefix: { state: "s1", length: 2 }, conversation_id: "c", state: "s3" } }));
  assert.equal((r.error as { code: string }).code, "DT_PREFIX_UNKNOWN", "s1 is no longer the held state");
  input.end();
  await server.closed;
});

test("tokenize_trajectory answers ids, spans and the assistant mask", async () => {
  const { input, server, ask } = await pipeServer();
  const messages = [...convo, { role: "assistant", content: "Goodbye." }];
  const r = await ask(JSON.stringify({ id: "t", method: "tokenize_trajectory", params: { messages } }));
  const res = r.result as { ids: number[]; count: number; spans: Array<{ role: string; start: number; end: number }>; assistant_mask: number[][] };
  const t = dt.tokenizeTrajectory(messages);
  assert.deepEqual(res.ids, Array.from(t.ids));
  assert.deepEqual(res.spans, t.spans);
  assert.ok(res.assistant_mask.length === 2, "two assistant turns masked");
  input.end();
  await server.closed;
});
