import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { ERROR_CODES } from "../src/errors.js";
import { repoPath } from "./helpers/paths.js";

test("README documents every error code with its meaning, and no other", () => {
  const readme = readFileSync(repoPath("README.md"), "utf8");
  const block = /<!-- error-codes:start -->([\s\S]*)<!-- error-codes:end -->/.exec(readme)?.[1] ?? "";
  const documented = [...block.matchAll(/\| `(DT_[A-Z0-9_]+)` \| (.*) \|/g)].map((m) => [m[1], m[2]]);
  assert.deepEqual(Object.fromEntries(documented), ERROR_CODES, "run: npm run build && node scripts/error-codes.mjs");
});
