/**
 * Budgets: runaway templates stop promptly with DT_TEMPLATE_BUDGET (or the Python error where
 * Python itself stops them: the sandbox's range limit, RecursionError), without allocating the
 * huge value first. Python-rendered cases of the family run first.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { DeltatokError } from "../src/errors.js";
import type { ErrorCode } from "../src/errors.js";
import { compileTemplate, pythonErrorString } from "../src/template/index.js";
import type { RenderOptions } from "../src/template/index.js";
import { checkFamily } from "./fixtures/template/harness.js";

checkFamily("budget");

function fails(src: string, code: ErrorCode, options?: RenderOptions, vars: Record<string, unknown> = {}): DeltatokError {
  let err: unknown;
  try {
    compileTemplate(src).render(vars, options);
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof DeltatokError, `expected a DeltatokError for ${src}`);
  assert.equal(err.code, code, `${src}: ${err.message}`);
  return err;
}

test("huge repetitions are refused before they are built", () => {
  fails("{{ 'x' * 10**12 }}", "DT_TEMPLATE_BUDGET");
  fails("{{ [1] * 10**12 }}", "DT_TEMPLATE_BUDGET");
  fails("{{ 'x'.center(10**10) }}|{{ '1'.zfill(10**10) }}", "DT_TEMPLATE_BUDGET");
  fails("{{ '%999999999d' % 1 }}", "DT_TEMPLATE_BUDGET");
  fails("{{ ('a' * 100000).replace('a', 'a' * 10000) }}", "DT_TEMPLATE_BUDGET");
  fails("{{ ('a\\n' * 100000)|indent(100000) }}", "DT_TEMPLATE_BUDGET");
  fails("{{ [1, 2]|tojson(indent=10**9) }}", "DT_TEMPLATE_BUDGET");
});

test("doubling in a loop stops at the output-size budget", () => {
  for (const op of ["~", "+"]) {
    const e = fails(`{% set ns = namespace(s='ab') %}{% for i in range(100) %}{% set ns.s = ns.s ${op} ns.s %}{% endfor %}`, "DT_TEMPLATE_BUDGET");
    assert.match(e.message, /output-size budget/);
  }
  fails("{% set ns = namespace(s=[1]) %}{% for i in range(100) %}{% set ns.s = ns.s + ns.s %}{% endfor %}", "DT_TEMPLATE_BUDGET");
});

test("the step budget bounds loops", () => {
  const e = fails("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "DT_TEMPLATE_BUDGET", { budget: { maxSteps: 100000 } });
  assert.match(e.message, /step budget/);
  const r = compileTemplate("{% for i in range(10) %}{{ i }}{% endfor %}").render({});
  assert.ok(r.steps >= 10 && r.steps < 100, `steps ${r.steps}`);
});

test("the output budget bounds the rendered text", () => {
  fails("{% for i in range(1000) %}{{ 'x' * 1000 }}{% endfor %}", "DT_TEMPLATE_BUDGET", { budget: { maxOutputChars: 100000 } });
  assert.equal(compileTemplate("{{ 'x' * 1000 }}").render({}, { budget: { maxOutputChars: 1000 } }).text.length, 1000);
});

test("range beyond the sandbox's MAX_RANGE fails like Python (OverflowError, sandbox code)", () => {
  const e = fails("{% for i in range(10**9) %}{% endfor %}", "DT_TEMPLATE_SANDBOX");
  assert.equal(pythonErrorString(e), "OverflowError: Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
});

test("infinite recursion stops with Python's RecursionError, as a budget error", () => {
  for (const src of [
    "{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}",
    "{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}",
    "{% macro r() %}{% call r() %}{{ caller() }}{% endcall %}{% endmacro %}{% call r() %}{% endcall %}",
    "{% macro r() %}{{ [1]|map('string')|join }}{{ r() }}{% endmacro %}{{ r() }}",
  ]) {
    const e = fails(src, "DT_TEMPLATE_BUDGET");
    assert.equal(pythonErrorString(e), "RecursionError: maximum recursion depth exceeded");
  }
  // the reference renderer's limit: 198 nested macro calls render, 199 do not
  const src = "{% macro r(n) %}{% if n > 0 %}{{ r(n - 1) }}{% endif %}{% endmacro %}{{ r(N) }}ok";
  assert.equal(compileTemplate(src).render({ N: 197 }).text, "ok");
  fails(src, "DT_TEMPLATE_BUDGET", undefined, { N: 198 });
  assert.equal(compileTemplate(src).render({ N: 500 }, { budget: { maxDepth: 600 } }).text, "ok");
});

test("pathologically nested templates fail to compile without a stack overflow", () => {
  for (const src of ["{{ " + "(".repeat(20000) + "1" + ")".repeat(20000) + " }}", "{% if true %}".repeat(5000) + "{% endif %}".repeat(5000)]) {
    assert.throws(() => compileTemplate(src), (e: unknown) => e instanceof DeltatokError && e.code === "DT_TEMPLATE_BUDGET");
  }
});
