/**
 * The Python package's own tests (clients/python/tests, `python3 -m unittest`, standard library
 * only) run from `npm test`: apply_chat_template in every variant against the JS library's
 * answers on the bundled corpus, the automatic prefix path (restart, load balancer, in-place
 * edits, threads, asyncio), the queue's drain contract, error mapping, and an offline install
 * into a fresh venv used from outside the repository. Skipped, with a message, only where
 * python3 is absent.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoPath } from "./helpers/paths.js";

const python = spawnSync("python3", ["--version"]).status === 0 ? "python3" : null;
const script = repoPath("dist", "scripts", "python-client-expectations.js");
const skip = python === null ? "python3 is not installed" : !existsSync(script) ? "not built (npm run build)" : false;

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { env, cwd });
    let out = "";
    p.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    p.stderr.setEncoding("utf8").on("data", (d: string) => (out += d));
    p.on("close", (code) => resolve({ code, out }));
  });
}

test("python3 -m unittest (clients/python/tests) passes", { skip, timeout: 600_000 }, async () => {
  const expect = join(mkdtempSync(join(tmpdir(), "deltatok-py-expect-")), "expect.json");
  const made = await run(process.execPath, [script, expect], process.env, repoPath());
  assert.equal(made.code, 0, made.out);
  const env: NodeJS.ProcessEnv = { ...process.env, DELTATOK_TEST_EXPECT: expect, DELTATOK_TEST_NODE: process.execPath };
  delete env.DELTATOK_CMD;
  const r = await run(python as string, ["-W", "error::ResourceWarning", "-m", "unittest", "discover", "-s", "tests"], env, repoPath("clients", "python"));
  assert.equal(r.code, 0, r.out);
  const ran = /Ran (\d+) tests?/.exec(r.out);
  assert.ok(ran !== null && Number(ran[1]) >= 40, r.out);
  assert.doesNotMatch(r.out, /skipped=\d+/, "no test may skip where python3 and the build exist");
});
