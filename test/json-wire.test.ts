/**
 * The boundary conversions of what deltatok writes out (src/json/wire.ts): camelCase keys to
 * snake_case (digits, acronyms; codes, data-like and snake_case keys unchanged), and a negative
 * zero written `-0.0`, which JSON.parse and Python's json.loads read back as -0.0.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { snakeCase, snakeKeys, wireJson } from "../src/json/index.js";

test("snakeCase: words, digits, acronyms; other keys unchanged", () => {
  const cases: Array<[string, string]> = [
    ["maxRssMb", "max_rss_mb"],
    ["charsEncoded", "chars_encoded"],
    ["lastCharsEncoded", "last_chars_encoded"],
    ["bytesHeld", "bytes_held"],
    ["destroyedAtShutdown", "destroyed_at_shutdown"],
    ["keepsPrefix", "keeps_prefix"],
    ["utf16Offsets", "utf16_offsets"],
    ["p50Ms", "p50_ms"],
    ["sha256Hex", "sha256_hex"],
    ["idsFromHTTP", "ids_from_http"],
    ["parseJSONText", "parse_json_text"],
    ["toJSON", "to_json"],
    ["aB", "a_b"],
    // not camelCase identifiers: as they are
    ["count", "count"],
    ["tokens_reused", "tokens_reused"],
    ["DT_FORBIDDEN", "DT_FORBIDDEN"],
    ["Content", "Content"],
    ["151643", "151643"],
    ["no_safe_boundary", "no_safe_boundary"],
    ["<|imStart|>", "<|imStart|>"],
    ["some-key", "some-key"],
    ["", ""],
  ];
  for (const [k, want] of cases) assert.equal(snakeCase(k), want, k);
});

test("snakeKeys: plain objects at every depth, through arrays; values and class instances untouched", () => {
  class Tagged {
    innerKey = 1;
  }
  const t = new Tagged();
  const v = { cacheStats: { tokensReused: 3, render: { unitsReused: 1 }, fallbacks: { no_safe_boundary: 0 } }, probes: [{ keepsPrefix: true, probe: "aName" }], rejected: { DT_FORBIDDEN: 2 }, tag: t, n: null };
  assert.deepEqual(snakeKeys(v), {
    cache_stats: { tokens_reused: 3, render: { units_reused: 1 }, fallbacks: { no_safe_boundary: 0 } },
    probes: [{ keeps_prefix: true, probe: "aName" }],
    rejected: { DT_FORBIDDEN: 2 },
    tag: t,
    n: null,
  });
  assert.equal((snakeKeys(v) as { tag: unknown }).tag, t, "a class instance is kept as it is");
  assert.equal(snakeKeys(7), 7);
  assert.equal(snakeKeys("camelCase"), "camelCase", "values are not keys");
});

test("wireJson: -0 is written -0.0 (JSON.stringify writes 0); everything else as JSON.stringify", () => {
  const v = { logprobs: [null, -0, 0, -0.5, -1, 1e-7], nested: [{ x: -0 }], s: "-0", id: 1 };
  const text = wireJson(v);
  assert.equal(text, '{"logprobs":[null,-0.0,0,-0.5,-1,1e-7],"nested":[{"x":-0.0}],"s":"-0","id":1}');
  assert.ok(Object.is(v.logprobs[1], -0) && Object.is(v.nested[0]?.x, -0), "the value written is not changed");
  const back = JSON.parse(text) as typeof v;
  assert.ok(Object.is(back.logprobs[1], -0) && Object.is(back.logprobs[2], 0) && Object.is(back.nested[0]?.x, -0));
  // no negative zero: JSON.stringify's own text, indent included
  const plain = { a: [0, 1.5, "x"], b: { c: null } };
  assert.equal(wireJson(plain), JSON.stringify(plain));
  assert.equal(wireJson(plain, 2), JSON.stringify(plain, null, 2));
  assert.equal(wireJson(-0), "-0.0");
  assert.equal(wireJson({ a: -0 }, 2), '{\n  "a": -0.0\n}');
  // a string that looks like the marker's neighbourhood stays a string
  assert.equal(wireJson(["-0.0", -0]), '["-0.0",-0.0]');
});

test("wireJson's -0.0 is a negative float to Python's json.loads", () => {
  const text = wireJson({ logprobs: [-0, 0, -0.25] });
  const py = spawnSync("python3", ["-c", "import json,math,sys; v=json.loads(sys.stdin.read())['logprobs']; print(json.dumps([type(x).__name__ + ':' + str(math.copysign(1.0, x)) for x in v]))"], { input: text, encoding: "utf8" });
  assert.equal(py.status, 0, py.stderr);
  assert.deepEqual(JSON.parse(py.stdout), ["float:-1.0", "int:1.0", "float:-1.0"]);
});
