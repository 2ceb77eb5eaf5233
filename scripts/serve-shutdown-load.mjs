// Issue 12's SIGTERM reproduction: starts `deltatok serve --port 0 --no-stdio --workers 0`, sends
// N count_prompt requests (bundled tau-bench slice, each on its own connection), SIGTERMs the
// server after K answers, and prints what the clients saw (status codes, socket errors) and the
// exit. Every request should be answered 200 or 503, none reset.
//   node scripts/serve-shutdown-load.mjs [N=600] [K=100] [path/to/main.js=dist/src/cli/main.js]
import { spawn } from "node:child_process";
import { request } from "node:http";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const N = Number(process.argv[2] ?? 600);
const K = Number(process.argv[3] ?? 100);
const cli = process.argv[4] ?? fileURLToPath(new URL("../dist/src/cli/main.js", import.meta.url));
const corpus = fileURLToPath(new URL("../data/tau-bench-airline-20.jsonl", import.meta.url));

const child = spawn(process.execPath, [cli, "serve", "--port", "0", "--no-stdio", "--date", "2026-11-30", "--workers", "0"], { stdio: ["ignore", "inherit", "pipe"] });
let stderr = "";
const port = await new Promise((resolve, reject) => {
  child.stderr.setEncoding("utf8").on("data", (d) => {
    stderr += d;
    const m = /127\.0\.0\.1:(\d+)/.exec(stderr);
    if (m) resolve(Number(m[1]));
  });
  child.on("exit", () => reject(new Error(stderr)));
});
const convs = readFileSync(corpus, "utf8").trim().split("\n").map((l) => JSON.parse(l));
const seen = {};
let answered = 0;
let killedAt = 0;
const exited = new Promise((r) => child.on("exit", (code, signal) => r({ code, signal, ms_after_sigterm: Math.round(performance.now() - killedAt) })));
await Promise.all(
  Array.from({ length: N }, (_, i) => {
    const c = convs[i % convs.length];
    const body = JSON.stringify({ id: i, method: "count_prompt", params: { messages: c.messages, tools: c.tools } });
    return new Promise((resolve) => {
      let done = false;
      const finish = (key) => {
        if (done) return;
        done = true;
        seen[key] = (seen[key] ?? 0) + 1;
        if (++answered === K) {
          killedAt = performance.now();
          child.kill("SIGTERM");
        }
        resolve();
      };
      const req = request({ host: "127.0.0.1", port, method: "POST", path: "/rpc", agent: false, headers: { "content-type": "application/json" } }, (res) => {
        res.resume();
        res.on("end", () => finish(`status ${res.statusCode}`));
        res.on("error", (e) => finish(`error ${e.code}`));
      });
      req.on("error", (e) => finish(`error ${e.code}`));
      req.end(body);
    });
  }),
);
console.log(JSON.stringify({ requests: N, sigterm_after: K, clients_saw: seen, exit: await exited }));
