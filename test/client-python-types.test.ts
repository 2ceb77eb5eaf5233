/**
 * The Python client type-checks: `python -m mypy --strict` over clients/python/src (the settings
 * in clients/python/pyproject.toml: transformers, torch and numpy are optional and not followed).
 * The Python it runs: $DELTATOK_TRANSFORMERS_PYTHON, else the venv `.ci/run` makes
 * (.venv-transformers, where .ci/run installs mypy), else python3. Skipped, with a message, when
 * that Python has no mypy; fails under CI=true without one.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { repoPath } from "./helpers/paths.js";

function hasMypy(python: string): boolean {
  return spawnSync(python, ["-m", "mypy", "--version"], { stdio: "ignore" }).status === 0;
}

function findPython(): string | null {
  const given = process.env.DELTATOK_TRANSFORMERS_PYTHON;
  const venv = repoPath(".venv-transformers", "bin", "python");
  for (const p of [given, existsSync(venv) ? venv : undefined, "python3"]) {
    if (p !== undefined && p !== "" && hasMypy(p)) return p;
  }
  return null;
}

const python = findPython();
const skip = python === null && process.env.CI !== "true" ? "mypy is not installed (run .ci/run, or pip install mypy into .venv-transformers)" : false;

test("mypy --strict passes over clients/python/src", { skip, timeout: 300_000 }, () => {
  assert.ok(python !== null, "CI=true: mypy is required (.ci/run installs it into .venv-transformers)");
  const r = spawnSync(python, ["-m", "mypy", "--strict", "--no-incremental", "src"], { cwd: repoPath("clients", "python"), encoding: "utf8" });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /Success: no issues found in \d+ source files/);
});

test("every type: ignore left in the client says why on its line or the line above", () => {
  const dir = repoPath("clients", "python", "src", "deltatok");
  const unexplained: string[] = [];
  for (const f of readdirSync(dir).filter((x) => x.endsWith(".py"))) {
    const lines = readFileSync(join(dir, f), "utf8").split("\n");
    lines.forEach((line, i) => {
      const at = line.indexOf("# type: ignore");
      if (at < 0) return;
      const after = line.slice(at).replace(/^# type: ignore(\[[^\]]*\])?/, "").trim();
      const above = (lines[i - 1] ?? "").trim();
      if (after === "" && !above.startsWith("#")) unexplained.push(`${f}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(unexplained, []);
});
