/**
 * The Python client against the real transformers: clients/python/tests/transformers_matrix.py
 * makes the same calls (apply_chat_template in every variant, batches, __call__, encode/decode,
 * special-token attributes, backend_tokenizer, masks, continue_final_message, tools as
 * functions, pickling, an endpoints-shaped drain, ART-shaped SFT/RL tokenization) on
 * transformers' own tokenizer and on deltatok's for Qwen3, Llama 3.1 and gpt-oss, and compares
 * values and types. The Python it runs: $DELTATOK_TRANSFORMERS_PYTHON, else the venv `.ci/run`
 * makes (.venv-transformers), else python3 when it imports transformers, tokenizers and jinja2.
 * Without one the test is skipped, and fails under CI=true.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { repoPath } from "./helpers/paths.js";

function usable(python: string): boolean {
  return spawnSync(python, ["-c", "import transformers, tokenizers, jinja2, numpy"], { stdio: "ignore" }).status === 0;
}

function findPython(): string | null {
  const given = process.env.DELTATOK_TRANSFORMERS_PYTHON;
  if (given !== undefined && given !== "") return given;
  const venv = repoPath(".venv-transformers", "bin", "python");
  if (existsSync(venv) && usable(venv)) return venv;
  return usable("python3") ? "python3" : null;
}

const python = findPython();
const built = existsSync(repoPath("dist", "src", "cli", "main.js"));
const skip = !built ? "not built (npm run build)" : python === null && process.env.CI !== "true" ? "no Python with transformers + tokenizers (set DELTATOK_TRANSFORMERS_PYTHON, or run .ci/run)" : false;

test("every call of the matrix equals transformers in value and type (Qwen3, Llama 3.1, gpt-oss)", { skip, timeout: 900_000 }, async () => {
  assert.ok(python !== null, "CI=true: a Python with transformers, tokenizers and jinja2 is required (.ci/run installs them into .venv-transformers)");
  const env: NodeJS.ProcessEnv = { ...process.env, DELTATOK_TEST_NODE: process.execPath };
  delete env.DELTATOK_CMD;
  delete env.DELTATOK_TRANSFORMERS_COMPAT;
  delete env.DELTATOK_TRANSFORMERS_TYPES;
  const r = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const p = spawn(python, [repoPath("clients", "python", "tests", "transformers_matrix.py"), repoPath()], { env });
    let out = "";
    let err = "";
    p.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    p.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    p.on("close", (code) => resolve({ code, out, err }));
  });
  let report: { calls: number; mismatches: unknown[]; tokenizers: string[] };
  try {
    report = JSON.parse(r.out) as typeof report;
  } catch {
    assert.fail(`the matrix printed no report (exit ${r.code}):\n${r.out}\n${r.err.slice(-4000)}`);
  }
  assert.deepEqual(report.tokenizers, ["qwen3", "llama3_1", "gptoss"]);
  assert.deepEqual(report.mismatches, [], JSON.stringify(report.mismatches, null, 1));
  assert.ok(report.calls >= 60, `only ${report.calls} calls`);
  assert.equal(r.code, 0);
});
