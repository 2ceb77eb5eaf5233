/**
 * The sidecar refuses params a method does not read (DT_INVALID_OPTION with the key as `path`),
 * as the library refuses unknown options: a misspelt `add_generaton_prompt` must not be answered
 * as if it were absent. In process and on a worker pool (whose prompt params stay JSON text on
 * the server thread), alone and inside a batch; the same line without the stray key is answered.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { createInterface } from "node:readline";
import { Deltatok } from "../src/api/deltatok.js";
import { InProcessBackend } from "../src/serve/in-process.js";
import { PoolBackend } from "../src/serve/pool-backend.js";
import { serve } from "../src/serve/server.js";
import type { Backend } from "../src/serve/protocol.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const MESSAGES = [{ role: "user", content: "Hi there" }];

async function pipe(backend: Backend): Promise<{ ask: (line: string) => Promise<Record<string, unknown>>; close: () => Promise<void> }> {
  const input = new PassThrough();
  const output = new PassThrough();
  const server = await serve({ backend, stdio: { input, output }, handleSignals: false });
  const answers: Array<(r: Record<string, unknown>) => void> = [];
  createInterface({ input: output }).on("line", (l) => answers.shift()?.(JSON.parse(l) as Record<string, unknown>));
  return {
    // one request at a time: answers come back in order
    ask: (line) =>
      new Promise((resolve) => {
        answers.push(resolve);
        input.write(line + "\n");
      }),
    close: async () => {
      input.end();
      await server.closed;
    },
  };
}

const CASES: Array<[string, Record<string, unknown>, string]> = [
  ["count_prompt", { messages: MESSAGES, add_generaton_prompt: true }, "add_generaton_prompt"],
  ["encode_prompt", { messages: MESSAGES, ids_encodng: "base64" }, "ids_encodng"],
  ["tokenize_trajectory", { messages: MESSAGES, ids_delta: true }, "ids_delta"],
  ["count_message", { message: { role: "assistant", content: "ok" }, tools: [] }, "tools"],
  ["count_text", { text: "hi", add_special_tokens: true }, "add_special_tokens"],
  ["decode", { ids: [1, 2], skip_special: true }, "skip_special"],
  ["render_prompt", { messages: MESSAGES, conversation_id: "c1" }, "conversation_id"],
  ["fits", { messages: MESSAGES, limit: 10, policy: "turns" }, "policy"],
  ["stats", { verbose: true }, "verbose"],
];

async function check(backend: Backend): Promise<void> {
  const { ask, close } = await pipe(backend);
  try {
    for (const [method, params, bad] of CASES) {
      const r = await ask(JSON.stringify({ id: method, method, params }));
      assert.equal(r.id, method);
      const err = r.error as { code?: string; path?: string } | undefined;
      assert.equal(err?.code, "DT_INVALID_OPTION", `${method}: ${JSON.stringify(r)}`);
      assert.equal(err?.path, bad);
      const ok = Object.fromEntries(Object.entries(params).filter(([k]) => k !== bad));
      const good = await ask(JSON.stringify({ id: 1, method, params: ok }));
      assert.ok(good.result !== undefined, `${method} without ${bad}: ${JSON.stringify(good)}`);
    }
    // inside a batch: only the bad call fails
    const b = await ask(
      JSON.stringify({
        id: 2,
        method: "batch",
        params: { requests: [{ method: "count_text", params: { text: "hi" } }, { method: "count_text", params: { txt: "hi" } }] },
      }),
    );
    const results = (b.result as { results: Array<{ result?: { count: number }; error?: { code: string; path: string } }> }).results;
    assert.equal(typeof results[0]?.result?.count, "number");
    assert.equal(results[1]?.error?.code, "DT_INVALID_OPTION");
    assert.equal(results[1]?.error?.path, "txt");
  } finally {
    await close();
  }
}

test("in process: a param the method does not read is refused with its key", async () => {
  await check(new InProcessBackend(await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30", renderer: TEST_RENDERER })));
});

test("on a worker pool (prompt params parsed in the worker): the same refusals", async () => {
  await check(await PoolBackend.create({ date: "2026-11-30", renderer: TEST_RENDERER }, 1));
});
