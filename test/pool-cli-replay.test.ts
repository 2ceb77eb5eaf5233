/**
 * `deltatok replay --workers N` writes exactly the records of the in-process run, in the same
 * order (bad lines included), sums the workers' stats in --summary, and a SIGTERM ends the run
 * with one final state and a prefix of the serial output.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "./helpers/cli.js";
import { repoPath } from "./helpers/paths.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const dir = mkdtempSync(join(tmpdir(), "deltatok-pool-cli-"));
const slice = readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n").filter((l) => l.trim() !== "");
const corpus = join(dir, "corpus.jsonl");
// 8 real conversations, a broken line, a repeated id (same conversation again), a blank line
writeFileSync(corpus, [...slice.slice(0, 4), "{broken", slice[4], "", slice[0], ...slice.slice(5, 8)].join("\n") + "\n");
const COMMON = ["--date", "2026-11-30", "--renderer", TEST_RENDERER, "--no-progress"];

test("--workers 2 writes the same records in the same order as the in-process run", async () => {
  const serial = await runCli(["replay", corpus, ...COMMON, "--summary", join(dir, "s0.json")]);
  const pooled = await runCli(["replay", corpus, ...COMMON, "--workers", "2", "--summary", join(dir, "s2.json")]);
  assert.equal(serial.code, 0, serial.stderr);
  assert.equal(pooled.code, 0, pooled.stderr);
  assert.ok(serial.stdout.length > 0);
  assert.equal(pooled.stdout, serial.stdout);
  const s0 = JSON.parse(readFileSync(join(dir, "s0.json"), "utf8")) as Record<string, unknown>;
  const s2 = JSON.parse(readFileSync(join(dir, "s2.json"), "utf8")) as Record<string, unknown>;
  assert.equal(s2.workers, 2);
  for (const k of ["conversations", "requests", "errors", "isl_total", "osl_total"]) assert.equal(s2[k], s0[k], k);
  assert.deepEqual(s2.errors_by_code, s0.errors_by_code);
  const c0 = s0.cache as { requests: number };
  const c2 = s2.cache as { requests: number };
  assert.equal(c2.requests, c0.requests, "Deltatok requests summed over workers");
});

test("--workers refuses a bad value (exit 2); a worker that cannot load fails startup (exit 1)", async () => {
  const bad = await runCli(["replay", corpus, ...COMMON, "--workers", "-1"]);
  assert.equal(bad.code, 2);
  const startup = await runCli(["replay", corpus, ...COMMON, "--workers", "1", "--tokenizer", join(dir, "missing")]);
  assert.equal(startup.code, 1);
  assert.match(startup.stderr, /DT_WORKER_STARTUP/);
});

test("SIGTERM during a pooled replay: one final state, output a prefix of the serial one", async () => {
  const big = join(dir, "big.jsonl");
  const lines: string[] = [];
  for (let r = 0; r < 6; r++) for (const l of slice) lines.push(l.replace(/"id":\s*"([^"]*)"/, `"id": "$1-r${r}"`));
  writeFileSync(big, lines.join("\n") + "\n");
  const serial = await runCli(["replay", big, ...COMMON, "--no-osl"]);
  assert.equal(serial.code, 0, serial.stderr);
  // the CLI next to this test: compiled under dist/, the TypeScript source under tsx
  const js = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
  const argv = existsSync(js) ? [js] : ["--import", "tsx", repoPath("src", "cli", "main.ts")];
  const child = spawn(process.execPath, [...argv, "replay", big, ...COMMON, "--no-osl", "--workers", "1"], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let signalled = false;
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
    if (!signalled) {
      signalled = true;
      child.kill("SIGTERM");
    }
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  assert.ok(serial.stdout.startsWith(stdout), "the records written are a prefix of the serial output");
  const finals = stderr.split("\n").filter((l) => l.includes("stopped by"));
  if (code === 143) {
    assert.equal(finals.length, 1, stderr);
    assert.match(finals[0] as string, /^deltatok: replay stopped by SIGTERM: \d+ corpus lines done .*, \d+ read and not done, (\d+ bytes of the corpus not read|nothing left unread)$/);
  } else {
    // the run finished before the signal landed: also one final state, the complete one
    assert.equal(code, 0, stderr);
    assert.equal(stdout, serial.stdout);
  }
});
