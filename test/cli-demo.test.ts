/**
 * `deltatok demo` (`npm start`): counts every request of the bundled long agentic coding
 * conversation and of the 20 tau-bench conversations both ways, exits 0 only when every ISL and
 * OSL agreed between full and incremental mode, and prints a per-turn table whose prompt sizes
 * grow with the conversation. It names its corpora relative to the package, never by install
 * path. The bundled long conversation is real data with its source and license recorded.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { runCli } from "./helpers/cli.js";
import { repoPath, ROOT } from "./helpers/paths.js";
import { DEMO_LONG_FILE, DEMO_SHORT_FILE } from "../src/cli/demo.js";

test("the bundled long conversation: one real agentic conversation, source and license recorded", () => {
  const lines = readFileSync(repoPath(...DEMO_LONG_FILE.split("/")), "utf8").split("\n").filter((l) => l.trim() !== "");
  assert.equal(lines.length, 1);
  const c = JSON.parse(lines[0] as string) as { id: string; messages: Array<{ role: string }>; tools: unknown[]; license: string; source: string };
  assert.ok(c.messages.filter((m) => m.role === "assistant").length >= 50, "long: at least 50 model turns");
  assert.ok(Array.isArray(c.tools) && c.tools.length > 0);
  assert.match(c.license, /Apache-2\.0/);
  const readme = readFileSync(repoPath("data", "README.md"), "utf8");
  assert.ok(readme.includes(DEMO_LONG_FILE.slice("data/".length)) && readme.includes("mlcommons/endpoints") && readme.includes("License"));
  assert.ok(readFileSync(repoPath(...DEMO_SHORT_FILE.split("/")), "utf8").length > 0);
});

test("deltatok demo: both modes agree on every request; the table's prompts grow turn by turn", async () => {
  const r = await runCli(["demo"], { timeoutMs: 300_000 });
  assert.equal(r.code, 0, `exit 0 means every ISL and OSL agreed\n${r.stdout}\n${r.stderr}`);
  const out = r.stdout;
  assert.ok(!out.includes(ROOT), "no install path in the output");
  assert.ok(out.includes(DEMO_LONG_FILE) && out.includes(DEMO_SHORT_FILE));
  // the per-turn table: rows "a–b   isl1–isl2   full ms   incremental ms", ISL increasing
  const rows = [...out.matchAll(/^\s+(\d+)(?:–(\d+))?\s+([\d,]+)–([\d,]+)\s+([\d.]+) \S+\s+([\d.]+) \S+$/gm)];
  assert.ok(rows.length >= 5, out);
  const isl = rows.map((m) => Number((m[4] as string).replace(/,/g, "")));
  for (let i = 1; i < isl.length; i++) assert.ok((isl[i] as number) > (isl[i - 1] as number), `row ${i}: ${isl.join(", ")}`);
  assert.equal(Number(rows[0]?.[1]), 1, "the table starts at the first model turn");
});
