/**
 * stdio lines are bounded while they are read: the splitter never holds more than the limit for
 * one line (a 600 MB line goes through with the real 256 MiB default without being buffered),
 * an oversize line is answered DT_INPUT_TOO_LARGE with its id and the next line still works;
 * UTF-8 split across chunks, invalid UTF-8 (DT_INVALID_UTF8, never U+FFFD), CRLF, a last line
 * without newline, and an output that fails (EPIPE) are handled.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough, Writable } from "node:stream";
import { createInterface } from "node:readline";
import { Deltatok } from "../src/api/deltatok.js";
import { InProcessBackend } from "../src/serve/in-process.js";
import { serve } from "../src/serve/server.js";
import { MAX_REQUEST_BYTES } from "../src/serve/protocol.js";
import { LineSplitter, skimId, type LineEvent } from "../src/serve/lines.js";
import { WireId } from "../src/serve/wire-id.js";
import { TEST_RENDERER } from "./helpers/renderer.js";
import { GatedBackend, until } from "./helpers/serve.js";

const dt = await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30", renderer: TEST_RENDERER });

function lines(chunks: Buffer[], max: number): { events: Array<{ kind: string; text: string; length?: number }>; splitter: LineSplitter } {
  const splitter = new LineSplitter(max, 16);
  const events: Array<{ kind: string; text: string; length?: number }> = [];
  const emit = (e: LineEvent) => events.push(e.kind === "line" ? { kind: "line", text: e.bytes.toString("utf8") } : { kind: "oversize", text: e.head.toString("utf8"), length: e.length });
  for (const c of chunks) splitter.push(c, emit);
  splitter.end(emit);
  return { events, splitter };
}

test("splitter: lines across chunks, CRLF, a last line without newline, oversize lines skipped to their newline", () => {
  const long = "efghijklmnopqrstuvwxyz0123456789";
  const text = Buffer.from(`ab\r\ncd\n${long}\n\nlast`);
  // every way of cutting the stream in two gives the same lines
  for (let cut = 0; cut <= text.length; cut++) {
    const { events, splitter } = lines([text.subarray(0, cut), text.subarray(cut)], 20);
    assert.deepEqual(
      events,
      [
        { kind: "line", text: "ab" },
        { kind: "line", text: "cd" },
        { kind: "oversize", text: long.slice(0, 16), length: long.length },
        { kind: "line", text: "" },
        { kind: "line", text: "last" },
      ],
      `cut at ${cut}`,
    );
    assert.ok(splitter.maxHeldBytes <= 20);
  }
  // one byte at a time
  assert.equal(lines([...text].map((b) => Buffer.from([b])), 20).events.length, 5);
});

test("splitter: a 600 MB line with the default limit is never held (one reused 1 MiB chunk, no newline until the end)", () => {
  const chunk = Buffer.alloc(1 << 20, 0x61);
  const splitter = new LineSplitter(MAX_REQUEST_BYTES);
  const events: LineEvent[] = [];
  const emit = (e: LineEvent) => events.push(e);
  splitter.push(Buffer.from('{"id": 42, "method": "count_text", "params": {"text": "'), emit);
  for (let i = 0; i < 600; i++) splitter.push(chunk, emit);
  splitter.push(Buffer.from('"}}\n{"id": 43}\n'), emit);
  assert.equal(events.length, 2);
  const [big, next] = events;
  assert.equal(big?.kind, "oversize");
  assert.ok(big?.kind === "oversize" && big.length > 600 * (1 << 20) && big.head.length === 1024);
  assert.equal(big?.kind === "oversize" ? skimId(big.head) : null, 42);
  assert.equal(next?.kind === "line" ? next.bytes.toString() : null, '{"id": 43}');
  assert.ok(splitter.maxHeldBytes <= MAX_REQUEST_BYTES, `held ${splitter.maxHeldBytes}`);
  assert.equal(splitter.heldBytes, 0);
});

test("skimId reads the id only from a line that starts with it", () => {
  const cases: Array<[string, unknown]> = [
    ['{"id": 7, "method"', 7],
    [' { "id" : "a\\"b" ,', 'a"b'],
    ['{"id":null}', null],
    ['{"id": -1.5e3}', new WireId("-1.5e3")],
    ['{"method": "x", "id": 7}', null],
    ['{"id": [1]}', null],
    ['{"id": 12', null], // cut off: the id might go on
    ['{"id": "unterminated', null],
    ["[1]", null],
  ];
  for (const [s, want] of cases) assert.deepEqual(skimId(Buffer.from(s)), want, s);
});

async function pipeServer(maxRequestBytes?: number) {
  const input = new PassThrough();
  const output = new PassThrough();
  const server = await serve({ backend: new InProcessBackend(dt), stdio: { input, output }, handleSignals: false, maxRequestBytes });
  const answers: Array<Record<string, unknown>> = [];
  createInterface({ input: output }).on("line", (l) => answers.push(JSON.parse(l) as Record<string, unknown>));
  return { input, server, answers };
}

const req = (id: unknown, text: string) => JSON.stringify({ id, method: "count_text", params: { text } });
const errCode = (r: Record<string, unknown> | undefined) => (r?.error as { code?: string } | undefined)?.code;

test("server: an oversize line is answered DT_INPUT_TOO_LARGE with its id; the lines around it answer", async () => {
  const { input, server, answers } = await pipeServer(200);
  input.write(req(1, "before") + "\n");
  input.write(req(2, "x".repeat(300)).slice(0, 100));
  input.write("x".repeat(400)); // still the same line: over the limit, skipped
  input.write('"}}\n' + req(3, "after") + "\n");
  input.end();
  await server.closed;
  const byId = new Map(answers.map((a) => [a.id, a]));
  assert.equal(answers.length, 3);
  assert.deepEqual(byId.get(1)?.result, { count: dt.countText("before") });
  assert.equal(errCode(byId.get(2)), "DT_INPUT_TOO_LARGE");
  assert.deepEqual(byId.get(3)?.result, { count: dt.countText("after") });
});

test("server: a line far over the real default limit streams through (no 512 MB buffer), and the next line answers", async () => {
  const { input, server, answers } = await pipeServer();
  const chunk = Buffer.alloc(1 << 20, 0x61);
  input.write('{"id": "huge", "method": "count_text", "params": {"text": "');
  let i = 0;
  // 300 MiB, written as the stream drains (one reused chunk: the test holds no copies)
  await new Promise<void>((resolve) => {
    const more = () => {
      while (i < 300) {
        i++;
        if (!input.write(chunk)) return void input.once("drain", more);
      }
      resolve();
    };
    more();
  });
  input.write('"}}\n' + req("next", "hello world") + "\n");
  input.end();
  await server.closed;
  const byId = new Map(answers.map((a) => [a.id, a]));
  assert.equal(errCode(byId.get("huge")), "DT_INPUT_TOO_LARGE");
  assert.deepEqual(byId.get("next")?.result, { count: 2 });
});

test("server: UTF-8 split across chunks, CRLF lines, blank lines, and a last line without newline", async () => {
  const { input, server, answers } = await pipeServer();
  const text = "héllo wörld — 日本語 🎉";
  const line = Buffer.from(req("split", text) + "\r\n");
  // cut inside every multi-byte character in turn
  for (let cut = 1; cut < line.length; cut += 3) {
    input.write(line.subarray(0, cut));
    input.write(line.subarray(cut));
  }
  input.write("\n   \r\n\t\n");
  input.write(req("last", text)); // no newline: answered when the input ends
  input.end();
  await server.closed;
  const want = dt.countText(text);
  assert.equal(answers.length, Math.ceil((line.length - 1) / 3) + 1);
  for (const a of answers) assert.deepEqual(a.result, { count: want }, String(a.id));
  assert.equal(answers.at(-1)?.id, "last");
});

test("server: invalid UTF-8 is DT_INVALID_UTF8 for that line (with its id), never U+FFFD", async () => {
  const { input, server, answers } = await pipeServer();
  const bad = [Buffer.from([0xff]), Buffer.from([0xc3, 0x28]), Buffer.from([0xed, 0xa0, 0x80]) /* a surrogate */, Buffer.from([0xe2, 0x82])];
  bad.forEach((b, i) => input.write(Buffer.concat([Buffer.from(`{"id": ${i}, "method": "count_text", "params": {"text": "`), b, Buffer.from('"}}\n')])));
  input.write(Buffer.from([0xfe, 0x0a]));
  input.write(req("ok", "fine") + "\n");
  input.end();
  await server.closed;
  assert.equal(answers.length, bad.length + 2);
  for (let i = 0; i < bad.length; i++) assert.equal(errCode(answers.find((a) => a.id === i)), "DT_INVALID_UTF8", `case ${i}`);
  assert.equal(errCode(answers.find((a) => a.id === null)), "DT_INVALID_UTF8");
  assert.deepEqual(answers.find((a) => a.id === "ok")?.result, { count: dt.countText("fine") });
});

test("server: an output that fails (the reader went away) shuts the server down instead of crashing it", async () => {
  const input = new PassThrough();
  const output = new Writable({
    write(_chunk, _enc, cb) {
      const e = new Error("write EPIPE") as NodeJS.ErrnoException;
      e.code = "EPIPE";
      cb(e);
    },
  });
  const server = await serve({ backend: new InProcessBackend(dt), stdio: { input, output }, handleSignals: false });
  input.write(req(1, "a") + "\n");
  await server.closed;
  await until(() => server.answered() === 1);
});

test("server: a full output pauses reading until it drains; every answer still arrives", async () => {
  const input = new PassThrough();
  const output = new PassThrough({ highWaterMark: 64 });
  const server = await serve({ backend: new InProcessBackend(dt), stdio: { input, output }, handleSignals: false });
  for (let i = 0; i < 100; i++) input.write(req(i, `line ${i}`) + "\n");
  await until(() => input.isPaused()); // nobody reads the output yet
  const answers: Array<Record<string, unknown>> = [];
  createInterface({ input: output }).on("line", (l) => answers.push(JSON.parse(l) as Record<string, unknown>));
  input.end();
  await server.closed;
  await until(() => answers.length === 100);
  assert.deepEqual(new Set(answers.map((a) => a.id)), new Set(Array.from({ length: 100 }, (_, i) => i)));
});

test("server: when stdin ends, every line read is answered, past the shutdown bound; close() is bounded", async () => {
  const backend = new GatedBackend();
  const input = new PassThrough();
  const output = new PassThrough();
  const server = await serve({ backend, stdio: { input, output }, handleSignals: false, shutdownTimeoutMs: 20 });
  let text = "";
  output.setEncoding("utf8").on("data", (d: string) => (text += d));
  for (let i = 0; i < 3; i++) input.write(req(i, "x") + "\n");
  input.end();
  await backend.waitFor(3);
  // a slow backend (a fault, well past the 20 ms bound): the end of input is not a reason to drop answers
  setTimeout(() => backend.releaseAll(), 100);
  await server.closed;
  assert.equal(text.trim().split("\n").length, 3, "all three answered before closed");

  // close() (and SIGTERM) are bounded even when the backend never answers
  const stuck = new GatedBackend();
  const input2 = new PassThrough();
  const s2 = await serve({ backend: stuck, stdio: { input: input2, output: new PassThrough() }, handleSignals: false, shutdownTimeoutMs: 20 });
  input2.write(req(1, "y") + "\n");
  await stuck.waitFor(1);
  await s2.close();
  assert.equal(stuck.closed, true);
  stuck.releaseAll();
});
