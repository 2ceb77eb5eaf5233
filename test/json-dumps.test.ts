/**
 * dumps is Python json.dumps byte for byte (expectations from Python: see
 * scripts/template/gen-json-expectations.py).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { JsonDumpsError, dumps } from "../src/json/dumps.js";
import { parseJson } from "../src/json/parse.js";
import { PyFloat, setKeyOrder } from "../src/json/values.js";
import { fixturesDir } from "./fixtures/template/harness.js";

const doc = parseJson(readFileSync(join(fixturesDir(), "json", "dumps.json"), "utf8")) as {
  cases: Array<{ input: string; options: Record<string, unknown>; output: string }>;
};

for (const c of doc.cases) {
  test(`dumps ${c.input.slice(0, 40)} ${JSON.stringify(c.options)}`, () => {
    const o = c.options;
    const out = dumps(parseJson(c.input), {
      indent: (o["indent"] as number | string | undefined) ?? null,
      separators: (o["separators"] as [string, string] | undefined) ?? null,
      sort_keys: (o["sort_keys"] as boolean | undefined) ?? false,
      ensure_ascii: (o["ensure_ascii"] as boolean | undefined) ?? true,
    });
    assert.equal(out, c.output);
  });
}

test("HF tojson defaults: ensure_ascii off, ', ' and ': ' separators", () => {
  assert.equal(dumps({ a: [1, new PyFloat(2), "é"] }, { ensure_ascii: false }), '{"a": [1, 2.0, "é"]}');
});

test("plain JS values: integral numbers are ints, others floats", () => {
  assert.equal(dumps([1, 1.5, -0, 1e21, 2 ** 53, 123456789012345678901234567890n]), "[1, 1.5, 0, 1000000000000000000000, 9007199254740992, 123456789012345678901234567890]");
});

test("key order from KEY_ORDER, Maps with Python key types", () => {
  const o: Record<string, unknown> = { "1": "x", b: "y" };
  setKeyOrder(o, ["b", "1"]);
  assert.equal(dumps(o), '{"b": "y", "1": "x"}');
  assert.equal(dumps(new Map<unknown, unknown>([[1, "a"], [new PyFloat(2), "b"], [true, "c"], [null, "d"], [1.5, "e"]])), '{"1": "a", "2.0": "b", "true": "c", "null": "d", "1.5": "e"}');
});

test("errors are Python's", () => {
  const circular: unknown[] = [];
  circular.push(circular);
  assert.throws(() => dumps(circular), (e: unknown) => e instanceof JsonDumpsError && e.pyType === "ValueError" && e.message === "Circular reference detected");
  assert.throws(() => dumps(new Set([1])), (e: unknown) => e instanceof JsonDumpsError && e.pyType === "TypeError" && e.message === "Object of type Set is not JSON serializable");
  assert.throws(() => dumps(new Map([[[1], 2]])), (e: unknown) => e instanceof JsonDumpsError && e.message === "keys must be str, int, float, bool or None, not Array");
});
