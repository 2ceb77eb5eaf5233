/**
 * The value model at the boundary: what callers pass is ordinary JS, and the Python
 * distinctions ride along (PyFloat, bigint, KEY_ORDER); plain JS values without markers work too.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseJson } from "../src/json/parse.js";
import { PyFloat, setKeyOrder } from "../src/json/values.js";
import { compileTemplate } from "../src/template/index.js";

function render(src: string, vars: Record<string, unknown>): string {
  return compileTemplate(src).render(vars).text;
}

test("plain JS numbers: integral = int, otherwise float", () => {
  assert.equal(render("{{ a }} {{ b }} {{ c }} {{ d }} {{ [a, b] }} {{ a is integer }} {{ b is float }}", { a: 1, b: 1.5, c: 1e21, d: -0 }), "1 1.5 1000000000000000000000 0 [1, 1.5] True True");
  assert.equal(render("{{ a|tojson }} {{ (a / 2)|tojson }} {{ (a * 1.0)|tojson }}", { a: 4 }), "4 2.0 4.0");
});

test("PyFloat keeps integral floats floats, bigint keeps big ints exact", () => {
  const v = { f: new PyFloat(1), g: new PyFloat(1e16), n: 123456789012345678901234567890n };
  assert.equal(render("{{ f }} {{ g }} {{ n }} {{ f is float }} {{ n is integer }} {{ n + 1 }}", v), "1.0 1e+16 123456789012345678901234567890 True True 123456789012345678901234567891");
  assert.equal(render("{{ v|tojson }}", { v }), '{"f": 1.0, "g": 1e+16, "n": 123456789012345678901234567890}');
});

test("key order: KEY_ORDER, JSON-parsed objects, Maps", () => {
  const o: Record<string, unknown> = { "1": "x", b: "y" };
  setKeyOrder(o, ["b", "1"]);
  const src = "{% for k in o %}{{ k }},{% endfor %}|{{ o }}|{{ o|tojson }}";
  assert.equal(render(src, { o }), "b,1,|{'b': 'y', '1': 'x'}|{\"b\": \"y\", \"1\": \"x\"}");
  assert.equal(render(src, { o: parseJson('{"b": "y", "1": "x"}') }), "b,1,|{'b': 'y', '1': 'x'}|{\"b\": \"y\", \"1\": \"x\"}");
  assert.equal(render(src, { o: new Map<unknown, unknown>([["b", "y"], [1, "x"]]) }), "b,1,|{'b': 'y', 1: 'x'}|{\"b\": \"y\", \"1\": \"x\"}");
});

test("undefined and function values count as absent keys", () => {
  assert.equal(render("{{ m.content is defined }}|{{ m.f is defined }}|{{ m.x }}", { m: { content: undefined, f: () => "secret", x: 1 } }), "False|False|1");
  assert.equal(render("{{ tools is defined }}|{{ tools is none }}", { tools: undefined }), "False|False");
  assert.equal(render("{{ tools is none }}", { tools: null }), "True");
});

test("frozen and null-prototype objects are ordinary dicts", () => {
  const frozen = Object.freeze({ role: "user", content: Object.freeze(["a"]) });
  const bare = Object.assign(Object.create(null) as Record<string, unknown>, { role: "tool" });
  assert.equal(render("{{ a.role }} {{ a.content[0] }} {{ b.role }} {{ b }}", { a: frozen, b: bare }), "user a tool {'role': 'tool'}");
});

test("the caller's objects are never modified or frozen", () => {
  const messages = [{ role: "user", content: "hi" }, { role: "assistant", content: "x", tool_calls: [{ function: { name: "f", arguments: { a: 1 } } }] }];
  const snapshot = structuredClone(messages);
  render("{% for m in messages %}{{ m|tojson }}{{ m.items()|list }}{% set m = {} %}{% endfor %}{{ messages|sort(attribute='role') }}{{ messages|reverse|list }}", { messages });
  assert.deepEqual(messages, snapshot);
  assert.equal(Object.isFrozen(messages), false);
  assert.equal(Object.isFrozen(messages[0]), false);
});
