/** scripts/check-imports.mjs: passes on this repository, and finds cycles and upward imports in a tree that has them. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoPath } from "./helpers/paths.js";

const SCRIPT = repoPath("scripts", "check-imports.mjs");

function run(...args: string[]): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [SCRIPT, ...args], { encoding: "utf8" });
  return { status: r.status, out: r.stdout + r.stderr };
}

test("the repository's src has no import cycle and no upward import", () => {
  const r = run();
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /no cycles, no upward imports/);
});

test("a run-time cycle and an upward import are reported; a type-only cycle is not", () => {
  const dir = mkdtempSync(join(tmpdir(), "check-imports-"));
  try {
    const put = (path: string, text: string): void => {
      mkdirSync(join(dir, path, ".."), { recursive: true });
      writeFileSync(join(dir, path), text);
    };
    put("errors.ts", "export const E = 1;\n");
    put("json/a.ts", 'import { b } from "./b.js";\nexport const a = () => b;\n');
    put("json/b.ts", 'import { a } from "./a.js";\nexport const b = () => a;\n');
    put("json/c.ts", 'import type { D } from "./d.js";\nexport interface C { d?: D }\n');
    put("json/d.ts", 'import type { C } from "./c.js";\nexport interface D { c?: C }\n');
    put("template/jinja/x.ts", 'import { L } from "../../load/l.js";\nexport const X = L;\n');
    put("load/l.ts", 'import { E } from "../errors.js";\nexport const L = E;\n');
    const r = run("--src", dir);
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /cycle \(2 files\): json\/a\.ts -> json\/b\.ts -> json\/a\.ts/);
    assert.doesNotMatch(r.out, /json\/c\.ts ->/);
    assert.match(r.out, /upward: template\/jinja\/x\.ts \(template\/jinja\) imports load\/l\.ts \(load\)/);
    assert.match(r.out, /2 problem\(s\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
