/**
 * The Python client (clients/python, stdlib only) against `deltatok serve`: over stdio and over
 * HTTP, the example replay gives exactly `deltatok replay`'s ISL and OSL; many threads sharing
 * one pipe all get their own answers; deltatok's errors arrive as DeltatokError with the code.
 * Skipped, with a message, only where python3 is absent.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jsonl, runCli } from "./helpers/cli.js";
import { repoPath } from "./helpers/paths.js";

const python = spawnSync("python3", ["--version"]).status === 0 ? "python3" : null;
const cli = repoPath("dist", "src", "cli", "main.js");
const skip = python === null ? "python3 is not installed" : !existsSync(cli) ? "not built (npm run build)" : false;
const env = { ...process.env, DELTATOK_CMD: `${process.execPath} ${cli}` };
const dir = mkdtempSync(join(tmpdir(), "deltatok-py-"));
const corpus = join(dir, "corpus.jsonl");
writeFileSync(corpus, readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n").slice(0, 4).join("\n") + "\n");

function py(args: string[], input = ""): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(python as string, args, { env, cwd: repoPath("clients", "python") });
    let stdout = "";
    let stderr = "";
    p.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    p.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    p.on("close", (code) => resolve({ code, stdout, stderr }));
    p.stdin.end(input);
  });
}

const key = (r: Record<string, unknown>) => `${r.id}#${r.index}`;

test("python client over stdio and HTTP gives replay's ISL and OSL", { skip }, async () => {
  const ref = await runCli(["replay", corpus, "--date", "2026-11-30"]);
  assert.equal(ref.code, 0, ref.stderr);
  const want = new Map(jsonl(ref.stdout).map((r) => [key(r), [r.isl, r.osl]]));
  assert.ok(want.size > 20);

  const stdio = await py(["examples/replay.py", corpus, "--", "--date", "2026-11-30", "--workers", "2"]);
  assert.equal(stdio.code, 0, stdio.stderr);
  const got = jsonl(stdio.stdout);
  assert.equal(got.length, want.size);
  for (const r of got) assert.deepEqual([r.isl, r.osl], want.get(key(r)), key(r));

  const server = spawn(process.execPath, [cli, "serve", "--no-stdio", "--port", "0", "--date", "2026-11-30", "--workers", "1"], { env });
  const url = await new Promise<string>((resolve, reject) => {
    let err = "";
    server.stderr.setEncoding("utf8").on("data", (d: string) => {
      err += d;
      const m = /"listening":"([^"]+)"/.exec(err);
      if (m) resolve(m[1] as string);
    });
    server.on("close", () => reject(new Error(`server exited: ${err}`)));
  });
  try {
    const http = await py(["examples/replay.py", corpus, "--http", url]);
    assert.equal(http.code, 0, http.stderr);
    const gotHttp = jsonl(http.stdout);
    assert.equal(gotHttp.length, want.size);
    for (const r of gotHttp) assert.deepEqual([r.isl, r.osl], want.get(key(r)), key(r));
  } finally {
    server.kill("SIGTERM");
  }
});

test("python client: 16 threads share one pipe; errors carry codes", { skip }, async () => {
  const script = `
import json, sys, threading
sys.path.insert(0, ".")
from deltatok_client import DeltatokClient, DeltatokError
dt = DeltatokClient(["--workers", "2"])
out, lock = [], threading.Lock()
def work(t):
    for i in range(25):
        n = dt.count_text("word " * (t * 25 + i + 1))
        with lock: out.append((t * 25 + i + 1, n))
threads = [threading.Thread(target=work, args=(t,)) for t in range(16)]
[t.start() for t in threads]; [t.join() for t in threads]
try:
    dt.count_prompt([])
    code = None
except DeltatokError as e:
    code = e.code
try:
    dt.count_prompt([{"role": "user", "content": 5}])
except DeltatokError as e:
    path = e.path
print(json.dumps({"answers": sorted(out), "code": code, "path": path, "exit": dt.close()}))
`;
  const r = await py(["-c", script]);
  assert.equal(r.code, 0, r.stderr);
  const o = JSON.parse(r.stdout) as { answers: Array<[number, number]>; code: string; path: string; exit: number };
  assert.equal(o.answers.length, 400);
  // "word " repeated n times is n tokens with Qwen3 ("word" + n-1 " word" + trailing " ")
  const counts = new Map(o.answers);
  assert.equal(new Set(o.answers.map(([n]) => n)).size, 400);
  for (const [n, c] of counts) if (n > 1) assert.equal(c - (counts.get(n - 1) ?? 0), 1, `n=${n}`);
  assert.equal(o.code, "DT_INVALID_MESSAGES");
  assert.equal(o.path, "messages[0].content");
  assert.equal(o.exit, 0, "serve exits 0 when stdin closes");
});
