/**
 * `--shard i/n` + `deltatok merge` on tokenize (JSONL and binary), rollout (binary)
 * and verify give exactly the unsharded output, byte for byte (cli-shard-merge.test.ts: replay),
 * also when each shard runs on workers (--workers 2).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ok, same, shardFixture } from "./helpers/shard.js";

const { dir, corpus, COMMON, sharded } = shardFixture("deltatok-shard-out-");

// The unsharded runs, each made once and compared with by both tests.
const full = (async () => {
  const tok = Buffer.from(await ok(["tokenize", corpus, ...COMMON]));
  const bin = join(dir, "tokenize-full.bin");
  await ok(["tokenize", corpus, ...COMMON, "--format", "binary", "--out", bin]);
  const roll = join(dir, "rollout-full.bin");
  await ok(["rollout", corpus, ...COMMON, "--format", "binary", "--out", roll]);
  return { tok, bin: readFileSync(bin), roll: readFileSync(roll) };
})();
full.catch(() => undefined); // a failure is reported by the tests that await it

// The number of shards is swept (1, 2, 3, 7) on replay in cli-shard-merge.test.ts: the JSONL
// merge is the same code for every command, so each command here runs at one n.
test("tokenize (JSONL and binary), rollout (binary) and verify: --shard + merge equals the unsharded run", async () => {
  const f = await full;
  same((await sharded("tokenize", 3, [])).out, f.tok, "tokenize n = 3");
  same((await sharded("tokenize", 3, ["--format", "binary"])).out, f.bin, "binary tokenize, byte for byte");
  same((await sharded("rollout", 2, ["--format", "binary"])).out, f.roll, "binary rollout");
  const ver = JSON.parse(await ok(["verify", corpus, ...COMMON])) as Record<string, unknown>;
  const mv = JSON.parse((await sharded("verify", 2, [])).out.toString("utf8")) as Record<string, unknown>;
  for (const k of ["corpus", "conversations", "requests", "identical", "same_errors", "differ", "differences"]) assert.deepEqual(mv[k], ver[k], k);
});

test("tokenize (JSONL) and rollout (binary) --workers 2 --shard + merge equal the unsharded in-process run", async () => {
  const f = await full;
  same((await sharded("tokenize", 2, ["--workers", "2"])).out, f.tok, "tokenize --workers 2, n = 2");
  same((await sharded("rollout", 2, ["--format", "binary", "--workers", "2"])).out, f.roll, "binary rollout --workers 2, n = 2");
});
