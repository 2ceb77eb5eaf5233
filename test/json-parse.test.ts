/**
 * parseJson keeps Python json.loads semantics (expectations from Python: see
 * scripts/template/gen-json-expectations.py): int vs float, big ints, key order, errors.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { DeltatokError } from "../src/errors.js";
import { floatRepr } from "../src/json/floatrepr.js";
import { findLoneSurrogate, parseJson } from "../src/json/parse.js";
import { KEY_ORDER, PyFloat, keysOf } from "../src/json/values.js";
import { fixturesDir } from "./fixtures/template/harness.js";

type Typed = unknown[];

/** The typed form the Python generator records. */
function typed(v: unknown): Typed {
  if (v === null) return ["none"];
  if (typeof v === "boolean") return ["bool", v];
  if (typeof v === "bigint") return ["int", v.toString()];
  if (typeof v === "number") return Number.isInteger(v) ? ["int", String(v)] : ["float", floatRepr(v)];
  if (v instanceof PyFloat) return ["float", floatRepr(v.value)];
  if (typeof v === "string") return ["str", v];
  if (Array.isArray(v)) return ["list", v.map(typed)];
  if (typeof v === "object") return ["dict", keysOf(v).map((k) => [k, typed((v as Record<string, unknown>)[k])])];
  throw new Error(`unexpected ${typeof v}`);
}

const doc = parseJson(readFileSync(join(fixturesDir(), "json", "parse.json"), "utf8")) as {
  cases: Array<{ input: string; value?: Typed; error?: string }>;
};

for (const c of doc.cases) {
  test(`parseJson ${JSON.stringify(c.input).slice(0, 60)}`, () => {
    if (c.error !== undefined) {
      assert.throws(
        () => parseJson(c.input),
        (e: unknown) => e instanceof DeltatokError && e.code === "DT_INVALID_JSON" && e.message === c.error,
      );
    } else {
      assert.deepEqual(typed(parseJson(c.input)), c.value);
    }
  });
}

test("parsed values stay ordinary JS values", () => {
  const v = parseJson('{"b": 1, "1": 2, "f": 1.0, "x": 0.5, "big": 123456789012345678901234567890}') as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(v), Object.prototype);
  assert.deepEqual(Object.keys(v), ["1", "b", "f", "x", "big"]); // JS order, Python order rides on KEY_ORDER
  assert.deepEqual(keysOf(v), ["b", "1", "f", "x", "big"]);
  assert.equal(Object.getOwnPropertyDescriptor(v, KEY_ORDER)?.enumerable, false);
  const { big: _big, ...rest } = v;
  assert.equal(JSON.stringify(rest), '{"1":2,"b":1,"f":1,"x":0.5}'); // PyFloat serializes as its number
  assert.ok(v["f"] instanceof PyFloat);
  assert.equal(Number(v["f"]), 1);
  assert.equal(v["x"], 0.5);
  assert.equal(v["big"], 123456789012345678901234567890n);
  assert.deepEqual({ ...v }, { "1": 2, b: 1, f: v["f"], x: 0.5, big: 123456789012345678901234567890n });
});

test("__proto__ is an ordinary key", () => {
  const v = parseJson('{"__proto__": {"polluted": 1}}') as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(v), Object.prototype);
  assert.ok(Object.prototype.hasOwnProperty.call(v, "__proto__"));
  assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
});

test("KEY_ORDER is ignored once the object no longer matches it", () => {
  const v = parseJson('{"b": 1, "1": 2}') as Record<string, unknown>;
  v["c"] = 3;
  assert.deepEqual(keysOf(v), ["1", "b", "c"]);
});

test("findLoneSurrogate reports the path of the first lone surrogate", () => {
  assert.equal(findLoneSurrogate({ a: "ok", b: ["x", "\u{1F600}"] }), null);
  assert.equal(findLoneSurrogate(parseJson('[{"role": "user", "content": "a\\ud800"}]')), "[0].content");
  assert.equal(findLoneSurrogate({ "tool calls": [{ f: { "a\udc00": 1 } }] }), '["tool calls"][0].f["a\\udc00"]');
  assert.equal(findLoneSurrogate("\ud83d"), "");
  assert.equal(findLoneSurrogate("\ud83d\ude00"), null);
});

test("deep nesting is refused without a stack overflow", () => {
  assert.throws(() => parseJson("[".repeat(100000)), (e: unknown) => e instanceof DeltatokError && e.code === "DT_INVALID_JSON");
});
