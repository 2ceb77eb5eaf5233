/**
 * `deltatok verify`: incremental and full agree on a real corpus slice (exit 0, every request
 * identical or failing alike); and its difference reporting works: fed two engines that cannot
 * agree (different tokenizers), it reports the first differing token of every request.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Deltatok } from "../src/api/deltatok.js";
import { verifyCorpus } from "../src/cli/verify.js";
import { runCli } from "./helpers/cli.js";
import { repoPath } from "./helpers/paths.js";

const dir = mkdtempSync(join(tmpdir(), "deltatok-verify-"));
const corpus = join(dir, "c.jsonl");
writeFileSync(corpus, readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n").slice(0, 3).join("\n") + "\n");

test("verify: incremental and full agree on every request (exit 0)", async () => {
  const r = await runCli(["verify", corpus, "--final", "--date", "2026-11-30"]);
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(r.stdout) as { requests: number; identical: number; differ: number; same_errors: number };
  assert.ok(s.requests > 20);
  assert.equal(s.differ, 0);
  assert.equal(s.identical + s.same_errors, s.requests);
});

test("verify reports the first differing token when answers differ", async () => {
  const a = await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30" });
  const b = await Deltatok.create({ tokenizer: "llama3_1", chatTemplateFile: repoPath("test/fixtures/template/golden/templates/qwen3.jinja"), mode: "full", date: "2026-11-30" });
  const s = await verifyCorpus(a, b, corpus, { chatTemplateKwargs: null, parseToolArguments: false, final: false, maxReported: 5, progress: false }, (ids) => a.tokenizer.tokenizer.decode(Array.from(ids)));
  assert.equal(s.differ, s.requests);
  assert.equal(s.differences.length, 5, "at most maxReported listed, all counted");
  const d = s.differences[0];
  assert.equal(d?.kind, "ids");
  assert.equal(typeof d?.position, "number");
  assert.notEqual(d?.incremental.token, d?.full.token);
});
