/**
 * Who may talk to the HTTP sidecar (DESIGN.md, "Threat model"): a Host that does not name the
 * server (DNS rebinding) and a cross-origin or cross-site browser request are 403
 * DT_FORBIDDEN; a POST body not declared application/json (a web page's "simple request") is
 * 415 DT_UNSUPPORTED_MEDIA_TYPE; with a token, a request without the right bearer token is 401
 * DT_UNAUTHORIZED; a non-loopback bind without a token does not start. After each refusal the
 * server answers a good request right.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Deltatok } from "../src/api/deltatok.js";
import { InProcessBackend } from "../src/serve/in-process.js";
import { serve, type RunningServer, type ServeOptions } from "../src/serve/server.js";
import { isJson, isLoopbackHost } from "../src/serve/guard.js";
import { TEST_RENDERER } from "./helpers/renderer.js";
import { code, get, post } from "./helpers/serve.js";
import { runCli } from "./helpers/cli.js";

const dt = await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30", renderer: TEST_RENDERER });
const body = JSON.stringify({ id: 1, method: "count_text", params: { text: "hello world" } });

async function start(o: Partial<ServeOptions> = {}): Promise<RunningServer & { port: number }> {
  return (await serve({ backend: new InProcessBackend(dt), port: 0, handleSignals: false, ...o })) as RunningServer & { port: number };
}

async function good(port: number, headers: Record<string, string> = {}): Promise<void> {
  const r = await post(port, "/rpc", body, headers);
  assert.equal(r.status, 200, JSON.stringify(r.json));
  assert.deepEqual(r.json, { id: 1, result: { count: dt.countText("hello world") } });
}

test("Host must name this server: loopback names with its port; anything else is 403 DT_FORBIDDEN", async () => {
  const server = await start();
  const { port } = server;
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`]) await good(port, { host });
  for (const host of ["evil.example", `evil.example:${port}`, `127.0.0.1:${port + 1}`, "127.0.0.1", `localhost.evil.example:${port}`, ""]) {
    const r = await post(port, "/rpc", body, { host });
    assert.equal(r.status, 403, `Host ${host}`);
    assert.equal(code(r.json), "DT_FORBIDDEN");
    const h = await get(port, "/health", { host });
    assert.equal(h.status, 403, `GET with Host ${host}`);
    await good(port);
  }
  await server.close();
});

test("allowHosts: a name accepts any port, name:port only that one", async () => {
  const server = await start({ allowHosts: ["tok.example", "pinned.example:8443"] });
  const { port } = server;
  for (const host of ["tok.example", "tok.example:443", `TOK.example:${port}`, "pinned.example:8443"]) await good(port, { host });
  for (const host of ["pinned.example", "pinned.example:443", "other.example"]) {
    const r = await post(port, "/rpc", body, { host });
    assert.equal(r.status, 403, host);
  }
  await assert.rejects(start({ allowHosts: ["bad host"] }), { code: "DT_INVALID_OPTION" });
  await server.close();
});

test("a browser's cross-origin or cross-site request is 403; same-origin or none is served", async () => {
  const server = await start();
  const { port } = server;
  for (const origin of ["http://evil.example", `http://evil.example:${port}`, "null", `https://127.0.0.1:${port + 1}`, "file://", "garbage"]) {
    const r = await post(port, "/rpc", body, { origin });
    assert.equal(r.status, 403, origin);
    assert.equal(code(r.json), "DT_FORBIDDEN");
  }
  await good(port, { origin: `http://127.0.0.1:${port}` });
  for (const site of ["cross-site", "same-site"]) {
    const r = await get(port, "/health", { "sec-fetch-site": site });
    assert.equal(r.status, 403, site);
  }
  assert.equal((await get(port, "/health", { "sec-fetch-site": "none" })).status, 200);
  await good(port);
  await server.close();
});

test("a POST body must be declared application/json: anything else (a web page's simple request) is 415", async () => {
  const server = await start();
  const { port } = server;
  for (const ct of ["text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=latin1", "application/jsonp", ""]) {
    const r = await post(port, "/rpc", body, { "content-type": ct });
    assert.equal(r.status, 415, `Content-Type ${ct}`);
    assert.equal(code(r.json), "DT_UNSUPPORTED_MEDIA_TYPE");
  }
  for (const ct of ["application/json", "Application/JSON", "application/json; charset=utf-8", 'application/json;charset="UTF-8"', "application/json; foo=bar"]) await good(port, { "content-type": ct });
  assert.equal(isJson(undefined), false);
  await server.close();
});

test("with a token, every request needs Authorization: Bearer <token> (401 DT_UNAUTHORIZED otherwise)", async () => {
  const token = "s3cret-token-0123456789";
  const server = await start({ token });
  const { port } = server;
  for (const authorization of ["", `Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, "Bearer", `Basic ${token}`, token, `Bearer ${token} extra`]) {
    const r = await post(port, "/rpc", body, { authorization });
    assert.equal(r.status, 401, `Authorization: ${authorization}`);
    assert.equal(code(r.json), "DT_UNAUTHORIZED");
    assert.match(String(r.headers["www-authenticate"]), /^Bearer/);
    assert.equal((await get(port, "/health", { authorization })).status, 401);
  }
  await good(port, { authorization: `Bearer ${token}` });
  await good(port, { authorization: `bearer  ${token}` });
  assert.equal((await get(port, "/health", { authorization: `Bearer ${token}` })).status, 200);
  // the Host check still runs before the token
  assert.equal((await post(port, "/rpc", body, { authorization: `Bearer ${token}`, host: "evil.example" })).status, 403);
  await server.close();
  for (const bad of ["", "has space", "tab\there", "ünicode"]) await assert.rejects(start({ token: bad }), { code: "DT_INVALID_OPTION" }, JSON.stringify(bad));
});

test("a non-loopback bind needs a token; with one it serves (and still checks Host)", async () => {
  assert.equal(isLoopbackHost("127.0.0.1"), true);
  assert.equal(isLoopbackHost("127.1.2.3"), true);
  assert.equal(isLoopbackHost("::1"), true);
  assert.equal(isLoopbackHost("[::1]"), true);
  assert.equal(isLoopbackHost("LocalHost"), true);
  assert.equal(isLoopbackHost("::ffff:127.0.0.1"), true);
  for (const h of ["0.0.0.0", "::", "192.168.1.2", "10.0.0.1", "example.com", "128.0.0.1"]) assert.equal(isLoopbackHost(h), false, h);
  await assert.rejects(start({ host: "0.0.0.0" }), { code: "DT_INVALID_OPTION", path: "token" });
  const token = "another-token-abcdefgh";
  const server = await start({ host: "0.0.0.0", token });
  const { port } = server;
  await good(port, { authorization: `Bearer ${token}` });
  assert.equal((await post(port, "/rpc", body)).status, 401);
  assert.equal((await post(port, "/rpc", body, { authorization: `Bearer ${token}`, host: `evil.example:${port}` })).status, 403);
  await server.close();
});

test("CLI: serve's HTTP flags are checked before anything loads (usage errors, exit 2)", async () => {
  for (const args of [
    ["serve", "--no-stdio"],
    ["serve", "--token", "abc"],
    ["serve", "--host", "127.0.0.1"],
    ["serve", "--port", "0", "--no-stdio", "--host", "0.0.0.0"],
    ["serve", "--port", "0", "--no-stdio", "--token", "has space"],
    ["serve", "--port", "0", "--no-stdio", "--allow-host", "a b"],
  ]) {
    const r = await runCli(args, { env: { DELTATOK_TOKEN: "" } });
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
  }
});
