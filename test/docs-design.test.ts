/**
 * The documents keep their purposes (DESIGN.md's table of where things live): DESIGN.md stays
 * architecture and invariants — at most 500 lines, no issue numbers, no measured-figure log —
 * and every relative link of the project's documents points at a file that exists.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { repoPath } from "./helpers/paths.js";

const DOCS = [
  "README.md",
  "DESIGN.md",
  "COMPATIBILITY.md",
  "CHANGELOG.md",
  "bench/README.md",
  "docs/DEBUGGING.md",
  "docs/ROLLOUTS.md",
  "docs/CONVENTIONS.md",
  "src/pool/README.md",
  "src/tokenize/README.md",
  "src/adapters/README.md",
  "src/template/jinja/README.md",
  "src/template/incremental/INCREMENTAL.md",
  "clients/python/DESIGN.md",
  "deploy/nginx/README.md",
];

test("DESIGN.md is architecture and invariants: ≤ 500 lines, no issue numbers, no figures log", () => {
  const text = readFileSync(repoPath("DESIGN.md"), "utf8");
  const lines = text.split("\n").length;
  assert.ok(lines <= 500, `DESIGN.md has ${lines} lines: details go to the folder documents, figures to bench/README.md`);
  assert.doesNotMatch(text, /\bissue \d+/i, "no issue numbers in design text");
  assert.doesNotMatch(text, /^#+ .*\bMeasured\b/m, "measured figures live in bench/README.md");
});

test("the documents' relative links resolve", () => {
  const broken: string[] = [];
  for (const doc of DOCS) {
    const text = readFileSync(repoPath(doc), "utf8");
    for (const m of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      const target = m[1] as string;
      if (/^[a-z]+:/.test(target)) continue;
      if (!existsSync(join(dirname(repoPath(doc)), target))) broken.push(`${doc}: ${target}`);
    }
  }
  assert.deepEqual(broken, []);
});
