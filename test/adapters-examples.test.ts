/**
 * The framework examples run as a user runs them (`node examples/…` from the package root, the
 * package imported by name): each exits 0, prints a count and the window before every model
 * call, keeps every count within the window, and has to drop turns to do so.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import { repoPath, ROOT } from "./helpers/paths.js";

const run = promisify(execFile);

for (const file of ["examples/ai-sdk-window.mjs", "examples/langchain-window.mjs"]) {
  test(`${file} keeps every prompt within its window`, async (t) => {
    if (!existsSync(repoPath("dist", "src", "adapters", "ai-sdk.js"))) return t.skip("not built (run npm run build)");
    const { stdout } = await run(process.execPath, [file], { cwd: ROOT, timeout: 120_000 });
    const rows = [...stdout.matchAll(/^turn (\d+) step (\d+): kept (\d+) of (\d+) messages \(dropped (\d+)\), (\d+) tokens, window (\d+)$/gm)];
    assert.ok(rows.length >= 10, stdout);
    for (const r of rows) {
      assert.ok(Number(r[6]) <= Number(r[7]), r[0]);
      assert.equal(Number(r[3]) + Number(r[5]), Number(r[4]), r[0]);
    }
    assert.ok(rows.some((r) => Number(r[5]) > 0), "the window made the loop drop turns");
    const turns = rows.map((r) => Number(r[1]));
    assert.equal(turns[0], 1);
    assert.ok(turns.every((x, i) => i === 0 || x >= (turns[i - 1] as number)), "turns in order");
  });
}
