/**
 * parseRequestLine (src/serve/request-json.ts) gives exactly parseJson's values and errors: on
 * every case of the Python-made parse fixtures, on lines built to hit each place where
 * JSON.parse differs (floats, big integers, -0, array-index keys, escaped digits, nesting, BOM,
 * NaN), and on the bundled corpus; and it takes the JSON.parse path for ordinary lines.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { DeltatokError } from "../src/errors.js";
import { floatRepr } from "../src/json/floatrepr.js";
import { parseJson } from "../src/json/parse.js";
import { PyFloat, keysOf } from "../src/json/values.js";
import { parseRequestLine, plainJsonSuffices } from "../src/serve/request-json.js";
import { fixturesDir } from "./fixtures/template/harness.js";

/** Values with their Python types, key order and -0 spelled out. */
function typed(v: unknown): unknown {
  if (v === null) return ["none"];
  if (typeof v === "boolean") return ["bool", v];
  if (typeof v === "bigint") return ["int", v.toString()];
  if (typeof v === "number") return Number.isInteger(v) ? ["int", Object.is(v, -0) ? "-0" : String(v)] : ["float", floatRepr(v)];
  if (v instanceof PyFloat) return ["float", floatRepr(v.value)];
  if (typeof v === "string") return ["str", v];
  if (Array.isArray(v)) return ["list", v.map(typed)];
  if (typeof v === "object") {
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
    return ["dict", keysOf(v).map((k) => [k, typed((v as Record<string, unknown>)[k])])];
  }
  throw new Error(`unexpected ${typeof v}`);
}

function outcome(f: () => unknown): unknown {
  try {
    return typed(f());
  } catch (e) {
    assert.ok(e instanceof DeltatokError, String(e));
    return ["error", e.code, e.message];
  }
}

function same(line: string): void {
  // compared as text: deepEqual recurses too deep for the 1,000-level lines
  assert.equal(JSON.stringify(outcome(() => parseRequestLine(line))), JSON.stringify(outcome(() => parseJson(line))), line.slice(0, 120));
}

const fixtures = parseJson(readFileSync(join(fixturesDir(), "json", "parse.json"), "utf8")) as { cases: Array<{ input: string }> };

test("every Python parse fixture: the same value or error as parseJson", () => {
  assert.ok(fixtures.cases.length > 20);
  for (const c of fixtures.cases) {
    same(c.input);
    same(`{"id": 1, "params": ${c.input}}`);
  }
});

const differing = [
  '{"a": 1.0}',
  '{"a": [1, 2.5e3, 3]}',
  '{"a": 1E2}',
  '[1.0]',
  "2.0",
  '{"a": 12345678901234567890}',
  '{"a": -9007199254740993}',
  '{"a": 9007199254740991}',
  '{"a": -0}',
  '{"a": [-0, 0]}',
  "-0",
  '{"b": 1, "1": 2, "0": 3}',
  '{"b": 1, "\\u0031": 2}',
  '{"b": 1, "4294967294": 2, "4294967295": 3}',
  '{"__proto__": {"x": 1}, "a": 2}',
  '{"a": 1, "a": 2, "b": 3}',
  '{"a": NaN}',
  '{"a": Infinity}',
  "\ufeff{}",
  '{"a": "\\ud800"}',
  '{"a": 1,}',
  '{"a": 01}',
  '{"a": "x\ty"}',
  "[".repeat(1001) + "]".repeat(1001),
  "[".repeat(1000) + "]".repeat(1000),
  '{"a": ' + "[".repeat(1200) + "]".repeat(1200) + "}",
];

test("lines where JSON.parse would differ: parseJson's value or error", () => {
  for (const line of differing) same(line);
  // the numbers and index keys are sent to the exact parser (__proto__ and duplicates need not be)
  for (const line of differing.slice(0, 14)) assert.equal(plainJsonSuffices(line), false, line.slice(0, 60));
});

test("text inside strings only sends a line to the exact parser, never changes a value", () => {
  for (const line of ['{"a": "price: 1.5"}', '{"a": "[2.0, -0]"}', '{"a": "\\"1\\": x"}', '{"a": "{\\"1\\": 2.0}"}']) same(line);
});

test("the bundled corpus: the same values, and ordinary lines take the JSON.parse path", () => {
  const lines = readFileSync(new URL("../../data/tau-bench-airline-20.jsonl", import.meta.url), "utf8").split("\n").filter((l) => l.trim() !== "");
  let plain = 0;
  for (const l of lines) {
    same(l);
    for (const m of (JSON.parse(l) as { messages: unknown[] }).messages) {
      const line = JSON.stringify({ id: 7, method: "encode_prompt", params: { conversation_id: "c", state: 2, messages: [m], ids_delta: true } });
      same(line);
      if (plainJsonSuffices(line)) plain++;
    }
  }
  assert.ok(plain > 0);
  assert.equal(plainJsonSuffices('{"id": 1, "method": "count_text", "params": {"text": "hi", "n": [1, 2, -3]}}'), true);
});
