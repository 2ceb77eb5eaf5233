/**
 * The reproduction against the real command, in a child process: `deltatok serve --port
 * 0 --no-stdio`, a client that drops its connection mid-body (with the issue's `Host: x`, and
 * with a Host the server accepts), then a good request, then SIGTERM: the server answered the
 * good request, counted both faults, and exits 0. Also: DELTATOK_TOKEN is honoured (and --token
 * wins over it).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { get, openSocket, outcome, post } from "./helpers/serve.js";

const js = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const ts = fileURLToPath(new URL("../src/cli/main.ts", import.meta.url));

/** Starts `deltatok serve --port 0 --no-stdio ...` and reads its port from the listening line. */
async function startServe(extra: string[], env: NodeJS.ProcessEnv = {}) {
  const argv = existsSync(js) ? [js] : ["--import", "tsx", ts];
  const child = spawn(process.execPath, [...argv, "serve", "--port", "0", "--no-stdio", "--date", "2026-11-30", "--workers", "0", ...extra], { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, ...env } });
  let stderr = "";
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      const m = /"listening":"http:\/\/[^"]*:(\d+)"/.exec(stderr);
      if (m !== null) resolve(Number(m[1]));
    });
    void exited.then(() => reject(new Error(`serve exited before listening: ${stderr}`)));
  });
  return { child, port, exited, stderr: () => stderr };
}

test("serve --port 0 --no-stdio survives a mid-body disconnect, answers, and exits 0 on SIGTERM", async () => {
  const { child, port, exited, stderr: err } = await startServe([]);
  // the bytes: refused for its Host (403 before the body), then the connection drops
  let s = await openSocket(port);
  const refused = outcome(s, true);
  s.write("POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{");
  assert.equal((await refused).response?.status, 403);
  s.end();
  // the same with an accepted Host: the drop comes while the body is being read
  s = await openSocket(port);
  const dropped = outcome(s);
  s.end(`POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
  await dropped;
  const r = await post(port, "/rpc", JSON.stringify({ id: 1, method: "count_text", params: { text: "hello world" } }));
  assert.deepEqual(r.json, { id: 1, result: { count: 2 } });
  child.kill("SIGTERM");
  const { code, signal } = await exited;
  const stderr = err();
  assert.deepEqual({ code, signal }, { code: 0, signal: null }, stderr);
  const stopped = JSON.parse(stderr.trim().split("\n").at(-1) as string) as { stopped: { answered: number; http: { aborted: number; rejected: Record<string, number> } } };
  assert.equal(stopped.stopped.http.aborted, 1, stderr);
  assert.equal(stopped.stopped.http.rejected.DT_FORBIDDEN, 1);
  assert.equal(stopped.stopped.answered, 2);
});

test("DELTATOK_TOKEN from the environment: every request must carry it (--token takes precedence)", async () => {
  const { child, port, exited } = await startServe([], { DELTATOK_TOKEN: "env-token-0123456789" });
  assert.equal((await get(port, "/health")).status, 401);
  assert.equal((await get(port, "/health", { authorization: "Bearer env-token-0123456789" })).status, 200);
  child.kill("SIGTERM");
  assert.equal((await exited).code, 0);
  const second = await startServe(["--token", "flag-token-0123456789"], { DELTATOK_TOKEN: "env-token-0123456789" });
  assert.equal((await get(second.port, "/health", { authorization: "Bearer env-token-0123456789" })).status, 401);
  assert.equal((await get(second.port, "/health", { authorization: "Bearer flag-token-0123456789" })).status, 200);
  second.child.kill("SIGTERM");
  assert.equal((await second.exited).code, 0);
});
