/**
 * `--shard i/n` + `deltatok merge` give exactly the unsharded replay output: the same records in the
 * same order, byte for byte (bad lines, a repeated id and lines without an id included), for
 * n = 1, 2, 3, 7 — replay (in process and on workers), tokenize (JSONL and binary), rollout and
 * verify — and the merged summary's counts equal the unsharded run's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { jsonl } from "./helpers/cli.js";
import { ok, same, shardFixture } from "./helpers/shard.js";
import { inShard, parseShard, shardKey, shardOfKey } from "../src/cli/shard.js";

const { dir, corpus, COMMON, sharded } = shardFixture("deltatok-shard-");

test("the shard of a line: one of n, stable, keyed by the decoded id or the line number", () => {
  assert.equal(shardKey('{"id": "a\\u0062", "messages": []}', 3), "s:ab");
  assert.equal(shardKey('{"messages": [], "id": 7}', 3), "r:7");
  assert.equal(shardKey("{broken", 3), "#3");
  assert.equal(shardKey(undefined, 9), "#9");
  // the rule is pinned (Python: hashlib.sha256(b"s:ab").digest()[:8] = 80760a4d634afc6c, mod 7 = 4)
  assert.equal(shardOfKey("s:ab", 7), 4);
  for (const n of [1, 2, 3, 7]) {
    for (let line = 1; line <= 50; line++) {
      const text = `{"id": "c${line}"}`;
      const owners = Array.from({ length: n }, (_v, i) => inShard({ index: i, count: n }, text, line)).filter(Boolean);
      assert.equal(owners.length, 1, `line ${line} of ${n} shards`);
    }
  }
  for (const bad of ["3/3", "-1/2", "1", "a/b", "0/0", "1/2/3", "0/1000001"]) assert.throws(() => parseShard(bad), { code: "DT_INVALID_OPTION" }, bad);
  assert.deepEqual(parseShard("2/7"), { index: 2, count: 7 });
});

test("replay: --shard + merge equals the unsharded run for n = 1, 2, 3, 7 (in process and on workers)", async () => {
  const full = join(dir, "replay-full.json");
  const whole = await ok(["replay", corpus, ...COMMON, "--summary", full]);
  const s0 = JSON.parse(readFileSync(full, "utf8")) as Record<string, unknown>;
  assert.ok(jsonl(whole).some((r) => r.index === null), "the corpus has unusable lines");
  for (const n of [1, 2, 3, 7]) {
    const m = await sharded("replay", n, [], n === 3 ? ["--workers", "1"] : []);
    same(m.out, Buffer.from(whole), `n = ${n}`);
    for (const k of ["corpus", "tokenizer", "mode", "conversations", "requests", "errors", "isl_total", "osl_total"]) assert.deepEqual(m.summary[k], s0[k], `${k}, n = ${n}`);
    assert.equal(JSON.stringify(m.summary.errors_by_code), JSON.stringify(s0.errors_by_code), "errors by code, keyed in corpus order");
    assert.equal((m.summary.cache as { requests: number }).requests, (s0.cache as { requests: number }).requests);
    assert.equal((m.summary.shards as unknown[]).length, n);
    // a shard's own output is a subset of the lines, each record with its corpus line
    const first = jsonl(readFileSync(m.shards[0] as string, "utf8"));
    assert.equal((first[0]?.deltatok_shard as { shards: number }).shards, n);
    assert.ok(first.slice(1, -1).every((r) => typeof r.line === "number"));
  }
});

