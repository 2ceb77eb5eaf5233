/**
 * `deltatok verify` shows progress when stderr is not a terminal (a log file, CI): periodic
 * lines by default (the first at once), none with --no-progress; the result on stdout is the same.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./helpers/cli.js";
import { repoPath } from "./helpers/paths.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

test("verify with stderr on a pipe: progress lines by default, none with --no-progress", async () => {
  const dir = mkdtempSync(join(tmpdir(), "deltatok-verify-progress-"));
  const corpus = join(dir, "c.jsonl");
  writeFileSync(corpus, readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n").slice(0, 2).join("\n") + "\n");
  const common = ["verify", corpus, "--date", "2026-11-30", "--renderer", TEST_RENDERER];
  const on = await runCli(common);
  assert.equal(on.code, 0, on.stderr);
  assert.match(on.stderr, /^verify \d+%: \d+ requests, 0 differ$/m);
  assert.ok(!on.stderr.includes("\r"), "plain lines on a pipe");
  const off = await runCli([...common, "--no-progress"]);
  assert.equal(off.code, 0, off.stderr);
  assert.doesNotMatch(off.stderr, /^verify \d+%:/m);
  const strip = (s: string) => s.replace(/"(elapsed_s|load_s|requests_per_s)": [\d.]+/g, "");
  assert.equal(strip(on.stdout), strip(off.stdout));
});
