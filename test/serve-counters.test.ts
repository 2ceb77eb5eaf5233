/**
 * Streaming counters over the sidecar: text and message counters over a pipe (in process and with
 * a worker pool) and over HTTP give the library's counts; unknown, finished and evicted handles
 * answer DT_COUNTER_UNKNOWN; the registry is bounded (LRU) and drops idle counters (pinned clock).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { createInterface } from "node:readline";
import { Deltatok } from "../src/api/deltatok.js";
import { InProcessBackend } from "../src/serve/in-process.js";
import { PoolBackend } from "../src/serve/pool-backend.js";
import { serve } from "../src/serve/server.js";
import { CounterRegistry, counterCall } from "../src/serve/counters.js";
import type { Backend } from "../src/serve/protocol.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const dt = await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30", renderer: TEST_RENDERER });
const TEXT = "Sure! Your flight HAT045 leaves at 10:00 — gate B12.\n\n東京 👍🏽 <|im_end|> done";

type Ask = (method: string, params: Record<string, unknown>) => Promise<Record<string, unknown>>;

async function pipe(backend: Backend): Promise<{ ask: Ask; close: () => Promise<void> }> {
  const input = new PassThrough();
  const output = new PassThrough();
  const server = await serve({ backend, stdio: { input, output }, handleSignals: false });
  const waiting = new Map<number, (r: Record<string, unknown>) => void>();
  createInterface({ input: output }).on("line", (l) => {
    const r = JSON.parse(l) as Record<string, unknown>;
    waiting.get(r.id as number)?.(r);
  });
  let next = 0;
  const ask: Ask = (method, params) =>
    new Promise((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      input.write(JSON.stringify({ id, method, params }) + "\n");
    });
  return {
    ask,
    close: async () => {
      input.end();
      await server.closed;
    },
  };
}

async function streamText(ask: Ask): Promise<void> {
  const open = await ask("text_counter_open", {});
  const handle = (open.result as { handle: string }).handle;
  assert.match(handle, /^[0-9a-f]{32}$/);
  let sofar = "";
  for (let i = 0; i < TEXT.length; i += 5) {
    const chunk = TEXT.slice(i, i + 5); // splits the surrogate pairs and the special token
    sofar += chunk;
    const r = await ask("counter_append", { handle, chunk });
    const want = /[\ud800-\udbff]$/.test(sofar) ? sofar.slice(0, -1) : sofar;
    assert.equal((r.result as { count: number }).count, dt.countText(want));
  }
  const fin = await ask("counter_finish", { handle });
  assert.equal((fin.result as { count: number }).count, dt.countText(TEXT));
  const again = await ask("counter_append", { handle, chunk: "x" });
  assert.equal((again.error as { code: string }).code, "DT_COUNTER_UNKNOWN");
}

async function streamMessage(ask: Ask): Promise<void> {
  const open = await ask("message_counter_open", { chat_template_kwargs: { enable_thinking: true } });
  const handle = (open.result as { handle: string }).handle;
  const deltas = [{ reasoning_content: "Check the " }, { reasoning_content: "booking." }, { content: "Done: " }, { content: "HAT045." }];
  const m = { role: "assistant", content: "", reasoning_content: "" };
  for (const d of deltas) {
    m.content += d.content ?? "";
    m.reasoning_content += d.reasoning_content ?? "";
    const r = await ask("counter_append", { handle, delta: d });
    assert.equal((r.result as { count: number }).count, dt.countMessage(m, { chat_template_kwargs: { enable_thinking: true } }));
  }
  const bad = await ask("counter_append", { handle, delta: { content: 7 } });
  assert.equal((bad.error as { code: string }).code, "DT_INVALID_REQUEST");
  const closed = await ask("counter_close", { handle });
  assert.deepEqual(closed.result, { closed: true });
  for (const h of [handle, "nope", 5]) {
    const r = await ask("counter_finish", { handle: h });
    assert.equal((r.error as { code: string }).code, "DT_COUNTER_UNKNOWN");
  }
  const badOpen = await ask("text_counter_open", { surprise: 1 });
  assert.equal((badOpen.error as { code: string }).code, "DT_INVALID_OPTION");
}

test("stdio, in process: text and message counters answer the library's counts", async () => {
  const { ask, close } = await pipe(new InProcessBackend(dt));
  await streamText(ask);
  await streamMessage(ask);
  // in a batch too
  const open = await ask("text_counter_open", {});
  const handle = (open.result as { handle: string }).handle;
  const b = await ask("batch", { requests: [{ method: "counter_append", params: { handle, chunk: "Hello" } }, { method: "counter_append", params: { handle, chunk: " world" } }] });
  const counts = (b.result as { results: Array<{ result: { count: number } }> }).results.map((x) => x.result.count);
  assert.deepEqual(counts, [dt.countText("Hello"), dt.countText("Hello world")]);
  await close();
});

test("stdio, worker pool: counters live on the server's Deltatok and answer the same", async () => {
  const backend = await PoolBackend.create({ date: "2026-11-30", renderer: TEST_RENDERER }, 1);
  const { ask, close } = await pipe(backend);
  await streamText(ask);
  await streamMessage(ask);
  await close();
});

test("HTTP: /v1/counter_append answers the counts", async () => {
  const server = await serve({ backend: new InProcessBackend(dt), port: 0, handleSignals: false });
  const base = `http://127.0.0.1:${server.port}`;
  const ask: Ask = async (method, params) => {
    const res = await fetch(`${base}/v1/${method}`, { method: "POST", body: JSON.stringify(params), headers: { "content-type": "application/json" } });
    return (await res.json()) as Record<string, unknown>;
  };
  await streamText(ask);
  await streamMessage(ask);
  await server.close();
});

test("the registry is bounded: the least recently used counter is evicted, idle ones expire", () => {
  let now = 1_000_000;
  const reg = new CounterRegistry(3, 60_000, () => now);
  const open = () => (counterCall(dt, "text_counter_open", {}, reg) as { handle: string }).handle;
  const append = (handle: string, chunk: string) => {
    try {
      return (counterCall(dt, "counter_append", { handle, chunk }, reg) as { count: number }).count;
    } catch (e) {
      return (e as { code: string }).code;
    }
  };
  const [a, b, c] = [open(), open(), open()];
  assert.equal(append(a, "hi"), dt.countText("hi")); // a is now the most recent
  const d = open(); // evicts b, the least recently used
  assert.equal(append(b, "x"), "DT_COUNTER_UNKNOWN");
  assert.equal(append(c, "x"), 1);
  assert.equal(append(d, "x"), 1);
  assert.equal(reg.size, 3);
  assert.equal(reg.evicted, 1);
  now += 30_000;
  assert.equal(append(a, " there"), dt.countText("hi there"));
  now += 45_000; // c and d idle 75 s, a 45 s
  assert.equal(append(c, "y"), "DT_COUNTER_UNKNOWN");
  assert.equal(append(a, "!"), dt.countText("hi there!"));
  assert.equal(reg.size, 1);
});

test("the characters all open counters hold are bounded together: an append past the bound is refused before it runs, closing frees the share", () => {
  const reg = new CounterRegistry(8, 60_000, () => 0, 20);
  const call = (method: "text_counter_open" | "message_counter_open" | "counter_append" | "counter_finish" | "counter_close", p: Record<string, unknown>) => {
    try {
      return counterCall(dt, method, p, reg) as Record<string, unknown>;
    } catch (e) {
      return { code: (e as { code: string }).code };
    }
  };
  const a = call("text_counter_open", {}).handle as string;
  const m = call("message_counter_open", {}).handle as string;
  assert.equal(call("counter_append", { handle: a, chunk: "hello world" }).count, dt.countText("hello world"));
  assert.equal(call("counter_append", { handle: m, delta: { content: "ok then" } }).count, dt.countMessage({ role: "assistant", content: "ok then" }));
  assert.equal(reg.chars, 18);
  // 18 + 3 > 20: refused, nothing applied (the next good append counts from the old text)
  assert.equal(call("counter_append", { handle: a, chunk: "abc" }).code, "DT_INPUT_TOO_LARGE");
  assert.equal(call("counter_append", { handle: m, delta: { content: "!!!" } }).code, "DT_INPUT_TOO_LARGE");
  assert.equal(call("counter_append", { handle: a, chunk: "!" }).count, dt.countText("hello world!"));
  // finishing the message counter frees its 7 characters
  assert.equal(call("counter_finish", { handle: m }).count, dt.countMessage({ role: "assistant", content: "ok then" }));
  assert.equal(reg.chars, 12);
  assert.equal(call("counter_append", { handle: a, chunk: " again" }).count, dt.countText("hello world! again"));
  call("counter_close", { handle: a });
  assert.equal(reg.chars, 0);
});

test("a bad counter option is named as the wire names it", () => {
  const reg = new CounterRegistry(4, 60_000, () => 0);
  for (const method of ["text_counter_open", "message_counter_open"] as const) {
    try {
      counterCall(dt, method, { max_look_back: 0 }, reg);
      assert.fail("max_look_back 0 accepted");
    } catch (e) {
      const err = e as { code: string; path: string; message: string };
      assert.equal(err.code, "DT_INVALID_OPTION");
      assert.equal(err.path, "max_look_back");
      assert.match(err.message, /max_look_back/);
      assert.doesNotMatch(err.message, /maxLookBack/);
    }
  }
});
