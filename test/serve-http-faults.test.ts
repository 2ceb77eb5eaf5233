/**
 * The HTTP sidecar under client faults: a connection dropped or reset mid-body, a client gone
 * before its answer, bodies and headers slower than the timeouts, malformed HTTP, oversize and
 * non-UTF-8 bodies, and shutdown with 600 requests in flight (each answered or 503, none reset)
 * or with a half-sent request (cut at the bound). After each fault the server answers a good
 * request right.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { connect } from "node:net";
import { Deltatok } from "../src/api/deltatok.js";
import { InProcessBackend } from "../src/serve/in-process.js";
import { serve, type RunningServer, type ServeOptions } from "../src/serve/server.js";
import { TEST_RENDERER } from "./helpers/renderer.js";
import { GatedBackend, code, openSocket, outcome, post, postText, raw, until } from "./helpers/serve.js";

const dt = await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30", renderer: TEST_RENDERER });

async function start(o: Partial<ServeOptions> = {}): Promise<RunningServer & { port: number }> {
  const s = await serve({ backend: new InProcessBackend(dt), port: 0, handleSignals: false, ...o });
  return s as RunningServer & { port: number };
}

/** A good request answers right: the server is up and unharmed. */
async function good(port: number): Promise<void> {
  const r = await post(port, "/rpc", JSON.stringify({ id: "good", method: "count_text", params: { text: "hello world" } }));
  assert.equal(r.status, 200);
  assert.deepEqual(r.json, { id: "good", result: { count: dt.countText("hello world") } });
}

const half = (port: number, host = `127.0.0.1:${port}`) => `POST /rpc HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`;

test("a client that drops its connection mid-body, or resets it, costs only its own request", async () => {
  const server = await start();
  const { port } = server;
  // the reproduction (Host: x is refused before the body; the drop comes after)
  let s = await openSocket(port);
  s.write(half(port, "x"));
  s.end();
  await until(() => (server.stats().http?.rejected.DT_FORBIDDEN ?? 0) === 1);
  await good(port);
  // the same with a Host the server accepts: the drop comes while the body is read
  let seen = server.stats().http?.requests ?? 0;
  s = await openSocket(port);
  s.write(half(port));
  await until(() => server.stats().http?.requests === seen + 1);
  s.end();
  await until(() => server.stats().http?.aborted === 1);
  await good(port);
  // a reset (RST) mid-body
  seen = server.stats().http?.requests ?? 0;
  s = await openSocket(port);
  s.write(half(port));
  await until(() => server.stats().http?.requests === seen + 1);
  s.resetAndDestroy();
  await until(() => server.stats().http?.aborted === 2);
  await good(port);
  await server.close();
});

test("a client that resets its connection before its answer: the answer is dropped, counted, and the server goes on", async () => {
  const backend = new GatedBackend();
  const server = await serve({ backend, port: 0, handleSignals: false });
  const port = server.port as number;
  const s = await openSocket(port);
  const body = JSON.stringify({ id: 1, method: "count_text", params: { text: "x" } });
  s.write(postText(port, "/rpc", body) + body);
  await backend.waitFor(1);
  s.resetAndDestroy();
  await until(() => server.stats().http?.socketErrors === 1);
  backend.releaseAll();
  await until(() => (server.stats().http?.unanswerable ?? 0) >= 1);
  const next = post(port, "/v1/count_text", JSON.stringify({ text: "y" }));
  await backend.waitFor(1);
  backend.releaseAll();
  const r = await next;
  assert.equal(r.status, 200);
  assert.deepEqual(r.json.result, { method: "count_text", params: { text: "y" } });
  await server.close();
});

test("headers or a body slower than the timeouts get 408 DT_REQUEST_TIMEOUT", async () => {
  const server = await start({ headersTimeoutMs: 400, requestTimeoutMs: 800 });
  const { port } = server;
  const [body, headers, nothing] = await Promise.all([openSocket(port), openSocket(port), openSocket(port)]);
  const seen = [outcome(body, true), outcome(headers, true), outcome(nothing, true)];
  body.write(half(port)); // a body that stops arriving
  headers.write("POST /rpc HTTP/1.1\r\nHo"); // headers that stop arriving
  // and a connection that sends nothing at all
  for (const r of await Promise.all(seen)) {
    assert.equal(r.response?.status, 408);
    assert.equal(code(r.response.json), "DT_REQUEST_TIMEOUT");
  }
  assert.equal(server.stats().http?.timeouts, 3);
  await good(port);
  await server.close();
});

test("malformed HTTP and oversize headers get coded JSON answers", async () => {
  const server = await start();
  const { port } = server;
  let r = await raw(port, "GARBAGE\r\n\r\n");
  assert.equal(r.response?.status, 400);
  assert.equal(code(r.response.json), "DT_INVALID_REQUEST");
  r = await raw(port, `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
  assert.equal(r.response?.status, 431);
  assert.equal(code(r.response.json), "DT_INPUT_TOO_LARGE");
  r = await raw(port, `POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!`);
  assert.equal(r.response?.status, 400);
  await good(port);
  await server.close();
});

test("oversize and non-UTF-8 bodies: 413 declared or chunked, 400 DT_INVALID_UTF8 with the id", async () => {
  const server = await start({ maxRequestBytes: 1000 });
  const { port } = server;
  const big = JSON.stringify({ id: 1, method: "count_text", params: { text: "a".repeat(3000) } });
  let r = await raw(port, postText(port, "/rpc", big) + big);
  assert.equal(r.response?.status, 413);
  assert.equal(code(r.response.json), "DT_INPUT_TOO_LARGE");
  const chunked = `POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n` + `${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`;
  r = await raw(port, chunked);
  assert.equal(r.response?.status, 413);
  const bad = Buffer.concat([Buffer.from('{"id": 5, "method": "count_text", "params": {"text": "'), Buffer.from([0xc3, 0x28]), Buffer.from('"}}')]);
  r = await raw(port, Buffer.concat([Buffer.from(postText(port, "/rpc", bad)), bad]));
  assert.equal(r.response?.status, 400);
  assert.equal(code(r.response.json), "DT_INVALID_UTF8");
  assert.equal(r.response.json.id, 5);
  // a body just under the limit still answers
  const ok = JSON.stringify({ id: 2, method: "count_text", params: { text: "a b" } });
  r = await raw(port, postText(port, "/rpc", ok) + ok);
  assert.deepEqual(r.response?.json, { id: 2, result: { count: dt.countText("a b") } });
  await good(port);
  await server.close();
});

/** POSTs one count_text on its own connection; the status, or the error the client saw. */
function oneShot(port: number, i: number): Promise<{ i: number; status?: number; json?: Record<string, unknown>; error?: string }> {
  return new Promise((resolve) => {
    const body = JSON.stringify({ id: i, method: "count_text", params: { text: `t${i}` } });
    const req = request({ host: "127.0.0.1", port, method: "POST", path: "/rpc", agent: false, headers: { "content-type": "application/json" } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ i, status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }));
      res.on("error", (e: NodeJS.ErrnoException) => resolve({ i, error: e.code ?? e.message }));
    });
    req.on("error", (e: NodeJS.ErrnoException) => resolve({ i, error: e.code ?? e.message }));
    req.end(body);
  });
}

test("shutdown with 600 requests in flight: every one is answered; late and queued ones get 503; none is reset", async () => {
  const backend = new GatedBackend();
  const server = await serve({ backend, port: 0, handleSignals: false, shutdownTimeoutMs: 30_000 });
  const port = server.port as number;
  // a keep-alive socket, idle after one answer
  const idle = await openSocket(port);
  const idleSeen = outcome(idle);
  const hb = JSON.stringify({ id: "ka", method: "count_text", params: { text: "k" } });
  idle.write(postText(port, "/rpc", hb).replace("connection: close\r\n", "") + hb);
  await backend.waitFor(1);
  backend.releaseAll();
  await until(() => server.answered() === 1);
  // 600 requests in flight, each on its own connection
  const answers = Array.from({ length: 600 }, (_, i) => oneShot(port, i));
  await backend.waitFor(600);
  // one request whose body is still arriving when the shutdown begins
  const late = await openSocket(port);
  const lateSeen = outcome(late, true);
  const lb = JSON.stringify({ id: "late", method: "count_text", params: { text: "l" } });
  late.write(postText(port, "/rpc", lb) + lb.slice(0, 5));
  await until(() => server.stats().http?.requests === 602);
  // 50 connections the kernel has established but the server has not accepted yet (their
  // connect() ran in a nextTick; no poll phase since): closing the listener would reset them
  const queued = Array.from({ length: 50 }, (_, i) => oneShot(port, 1000 + i));
  await new Promise((r) => process.nextTick(r));
  await new Promise((r) => process.nextTick(r));
  const closing = server.close();
  late.write(lb.slice(5));
  backend.releaseAll();
  const all = await Promise.all(answers);
  const reset = all.filter((a) => a.error !== undefined);
  assert.deepEqual(reset, [], "no request in flight is reset");
  for (const a of all) {
    assert.equal(a.status, 200, `request ${a.i}`);
    assert.deepEqual(a.json, { id: a.i, result: { method: "count_text", params: { text: `t${a.i}` } } });
  }
  for (const q of await Promise.all(queued)) {
    assert.equal(q.error, undefined, `queued request ${q.i} is not reset`);
    assert.equal(q.status, 503);
    assert.equal(code(q.json ?? {}), "DT_CLOSED");
  }
  const l = await lateSeen;
  assert.equal(l.response?.status, 503);
  assert.equal(code(l.response.json), "DT_CLOSED");
  assert.equal(l.response.json.id, "late");
  assert.equal(l.response.headers.connection, "close");
  const k = await idleSeen;
  assert.equal(k.response?.status, 200, "the idle keep-alive socket had its answer, then was closed");
  await closing;
  assert.equal(server.stats().http?.destroyedAtShutdown, 0);
  // and the listener is gone
  const refused = await new Promise<string>((resolve) => {
    const c = connect(port, "127.0.0.1", () => resolve("connected"));
    c.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
  });
  assert.equal(refused, "ECONNREFUSED");
});

test("a half-sent request does not stall shutdown: at the bound it is cut, what was in flight is answered", async () => {
  const backend = new GatedBackend();
  // the request timeout is far away: only the shutdown bound can end the half-sent request
  const server = await serve({ backend, port: 0, handleSignals: false, shutdownTimeoutMs: 1000, requestTimeoutMs: 600_000 });
  const port = server.port as number;
  const stuck = await openSocket(port);
  const stuckSeen = outcome(stuck);
  stuck.write(half(port));
  const inFlight = oneShot(port, 7);
  await backend.waitFor(1);
  const closing = server.close();
  backend.releaseAll();
  const a = await inFlight;
  assert.equal(a.status, 200);
  await closing;
  assert.equal(server.stats().http?.destroyedAtShutdown, 1);
  const s = await stuckSeen;
  assert.equal(s.response, undefined, "the half-sent request got no answer: its socket was destroyed");
});
