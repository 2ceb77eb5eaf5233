/**
 * `--shard i/n` + `deltatok merge` on tokenize (JSONL for n = 2, 3, 7; binary), rollout (binary)
 * and verify give exactly the unsharded output, byte for byte (cli-shard-merge.test.ts: replay),
 * also when each shard runs on workers (--workers 2).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ok, same, shardFixture } from "./helpers/shard.js";

const { dir, corpus, COMMON, sharded } = shardFixture("deltatok-shard-out-");

test("tokenize (JSONL and binary), rollout (binary) and verify: --shard + merge equals the unsharded run", async () => {
  const tok = Buffer.from(await ok(["tokenize", corpus, ...COMMON]));
  for (const n of [2, 3, 7]) same((await sharded("tokenize", n, [])).out, tok, `tokenize n = ${n}`);
  const bin = join(dir, "tokenize-full.bin");
  await ok(["tokenize", corpus, ...COMMON, "--format", "binary", "--out", bin]);
  same((await sharded("tokenize", 3, ["--format", "binary"])).out, readFileSync(bin), "binary tokenize, byte for byte");
  const roll = join(dir, "rollout-full.bin");
  await ok(["rollout", corpus, ...COMMON, "--format", "binary", "--out", roll]);
  same((await sharded("rollout", 2, ["--format", "binary"])).out, readFileSync(roll), "binary rollout");
  const ver = JSON.parse(await ok(["verify", corpus, ...COMMON])) as Record<string, unknown>;
  const mv = JSON.parse((await sharded("verify", 2, [])).out.toString("utf8")) as Record<string, unknown>;
  for (const k of ["corpus", "conversations", "requests", "identical", "same_errors", "differ", "differences"]) assert.deepEqual(mv[k], ver[k], k);
});

test("tokenize (JSONL) and rollout (binary) --workers 2 --shard + merge equal the unsharded in-process run", async () => {
  const tok = Buffer.from(await ok(["tokenize", corpus, ...COMMON]));
  same((await sharded("tokenize", 3, ["--workers", "2"])).out, tok, "tokenize --workers 2, n = 3");
  const roll = join(dir, "rollout-full-w0.bin");
  await ok(["rollout", corpus, ...COMMON, "--format", "binary", "--out", roll]);
  same((await sharded("rollout", 2, ["--format", "binary", "--workers", "2"])).out, readFileSync(roll), "binary rollout --workers 2, n = 2");
});
