/**
 * {% generation %}: renders its body (as HF's tag does when the tracker is inactive) and
 * records each body's [start, end) span, in UTF-16 offsets of the root output at the moment the
 * tag is evaluated (what HF's AssistantTracker measures). Python-rendered cases run first.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { compileTemplate } from "../src/template/index.js";
import { checkFamily } from "./fixtures/template/harness.js";

checkFamily("generation");

function spans(src: string, vars: Record<string, unknown> = {}): { text: string; generation: Array<[number, number]> } {
  return compileTemplate(src).render(vars);
}

test("spans cover the generated text", () => {
  const r = spans("a{% generation %}b{{ x }}c{% endgeneration %}d", { x: "😀" });
  assert.equal(r.text, "ab😀cd");
  assert.deepEqual(r.generation, [[1, 5]]);
  assert.equal(r.text.slice(1, 5), "b😀c");
});

test("one span per assistant turn, in order", () => {
  const src =
    "{% for m in messages %}<{{ m.role }}>{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}{% else %}{{ m.content }}{% endif %}{% endfor %}";
  const messages = [
    { role: "user", content: "hi" },
    { role: "assistant", content: "hello" },
    { role: "user", content: "again" },
    { role: "assistant", content: "bye" },
  ];
  const r = spans(src, { messages });
  assert.deepEqual(r.generation.map(([s, e]) => r.text.slice(s, e)), ["hello", "bye"]);
});

test("empty and nested bodies", () => {
  assert.deepEqual(spans("x{% generation %}{% endgeneration %}y").generation, [[1, 1]]);
  const r = spans("{% generation %}a{% generation %}b{% endgeneration %}c{% endgeneration %}");
  assert.equal(r.text, "abc");
  // the inner tag is evaluated while the outer body is being captured: offsets of the root so far
  assert.deepEqual(r.generation, [[0, 1], [0, 3]]);
});

test("a set inside the body does not leak (the body is a caller function)", () => {
  assert.equal(spans("{% set x = 1 %}{% generation %}{% set x = 2 %}{{ x }}{% endgeneration %}{{ x }}").text, "21");
});
