/**
 * The test runner (scripts/run-tests.mjs) moves the wall clock 400 days ahead for exactly the
 * files its --clock-ahead-files patterns name, in the file's process and in the node processes
 * it starts, and leaves every other file on the real clock. The real time is read from the kernel
 * (a new file's mtime), which the hook does not touch.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoPath } from "./helpers/paths.js";

const DAY = 86_400_000;

/** A test file asserting the days between its Date.now() (and a child node's) and the kernel's clock. */
function probe(dir: string, name: string, aheadDays: number): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    [
      'import { test } from "node:test";',
      'import assert from "node:assert/strict";',
      'import { execFileSync } from "node:child_process";',
      'import { statSync, writeFileSync } from "node:fs";',
      "const kernelNow = () => { const f = new URL('./stamp-' + process.pid, import.meta.url); writeFileSync(f, ''); return statSync(f).mtimeMs; };",
      `const want = ${aheadDays};`,
      'test("clock", () => {',
      `  const own = Math.round((Date.now() - kernelNow()) / ${DAY}) + 0;`,
      `  const child = 0 + Math.round((Number(execFileSync(process.execPath, ["-e", "process.stdout.write(String(Date.now()))"], { encoding: "utf8" })) - kernelNow()) / ${DAY});`,
      "  assert.deepEqual([own, child], [want, want]);",
      "});",
    ].join("\n"),
  );
  return file;
}

test("--clock-ahead-files: matching files (and their child processes) run 400 days ahead, the others on today", () => {
  const dir = mkdtempSync(join(tmpdir(), "deltatok-runner-"));
  const ahead = probe(dir, "api-probe.test.mjs", 400);
  const today = probe(dir, "cache-probe.test.mjs", 0);
  // a clean environment for the runner's own node --test processes (not this test's child context)
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: "" };
  delete env.NODE_TEST_CONTEXT;
  const run = (extra: string[], files: string[]) => spawnSync(process.execPath, [repoPath("scripts", "run-tests.mjs"), ...extra, ...files], { encoding: "utf8", env });
  const r = run(["--clock-ahead-files", "template-*,api-*"], [ahead, today]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /2 test files, \d+ at a time, 1 of them with the wall clock 400 days ahead/);
  // and the probes can fail: swapped expectations are two failed files
  const swapped = run(["--clock-ahead-files", "cache-*"], [ahead, today]);
  assert.equal(swapped.status, 1);
  assert.match(swapped.stdout, /2 files failed/);
});

test("the runner reports each file's CPU time and the suite's (Linux: from /proc/self/stat)", { skip: process.platform !== "linux" && "no /proc" }, () => {
  const dir = mkdtempSync(join(tmpdir(), "deltatok-runner-"));
  // a file that burns about 300 ms of CPU in a child node process it waits for
  const file = join(dir, "busy.test.mjs");
  writeFileSync(
    file,
    [
      'import { test } from "node:test";',
      'import { execFileSync } from "node:child_process";',
      'test("busy", () => { execFileSync(process.execPath, ["-e", "const e = process.cpuUsage().user + 300000; while (process.cpuUsage().user < e);"]); });',
    ].join("\n"),
  );
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: "" };
  delete env.NODE_TEST_CONTEXT;
  const r = spawnSync(process.execPath, [repoPath("scripts", "run-tests.mjs"), file], { encoding: "utf8", env });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /busy\.test\.mjs: 1\/1 passed in \d+s, CPU \d+s/);
  const total = /CPU (\d+)s on (\d+) CPUs/.exec(r.stdout);
  assert.ok(total !== null, r.stdout);
  assert.match(r.stdout, /most CPU: busy\.test\.mjs/);
});
