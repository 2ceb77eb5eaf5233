/**
 * Triage names the splice when the splice itself is wrong: a fault put into the code the splicer
 * runs — the encode from a safe cut (`TokenEncoder.encodeFrom` with a seam token), which a whole
 * encode never calls — not into the answer after it. `deltatok verify` must name stage "splice"
 * for every request the fault changed, with the first wrong id after the reused prefix (an
 * encode from the cut, not a wrong cut), and "render"/"encoder" for none.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Deltatok } from "../src/api/deltatok.js";
import { TokenEncoder } from "../src/tokenize/encoder.js";
import { verifyCorpus, type VerifyOptions } from "../src/cli/verify.js";
import { repoPath } from "./helpers/paths.js";

const dir = mkdtempSync(join(tmpdir(), "deltatok-verify-fault-"));
const corpus = join(dir, "c.jsonl");
writeFileSync(corpus, readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n").slice(0, 3).join("\n") + "\n");
const OPTS: VerifyOptions = { chatTemplateKwargs: null, parseToolArguments: false, final: false, maxReported: 1000, progress: false };

test("a fault in the encode from a safe cut is named stage splice, after the reused prefix", async () => {
  const [inc, full] = await Promise.all([
    Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30" }),
    Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30", mode: "full" }),
  ]);
  const encodeFrom = TokenEncoder.prototype.encodeFrom;
  let faults = 0;
  // the fault: after a seam (a splice), the last id encoded is off by one
  TokenEncoder.prototype.encodeFrom = function (this: TokenEncoder, text, from, seamId, tokenBase, ids, ...rest) {
    const n = encodeFrom.call(this, text, from, seamId, tokenBase, ids, ...rest);
    if (seamId !== null && ids !== null && n > 0) {
      ids.data[ids.length - 1] = (ids.data[ids.length - 1] as number) + 1;
      faults++;
    }
    return n;
  };
  let s;
  try {
    s = await verifyCorpus(inc, full, corpus, OPTS, (ids) => inc.decode(ids));
  } finally {
    TokenEncoder.prototype.encodeFrom = encodeFrom;
  }
  assert.ok(faults > 0, "the splicer encoded from a cut");
  assert.ok(s.differ > 10, `the fault shows: ${s.differ} of ${s.requests}`);
  assert.deepEqual(s.stages, { render: 0, splice: s.differ, encoder: 0, unattributed: 0 });
  for (const d of s.differences) {
    assert.equal(d.stage, "splice");
    assert.equal(d.kind, "ids");
    assert.ok(d.splice?.outcome === "partial" || d.splice?.outcome === "hit", `spliced: ${d.splice?.outcome}`);
    assert.ok((d.splice?.reused as number) <= (d.splice?.position as number), "the reused prefix is right: the encode from the cut is wrong");
    assert.equal(d.splice?.spliced, (d.splice?.encoded as number) + 1);
  }
});
