/**
 * Sandbox: a template reads only what it was given. Python attribute rules (ImmutableSandboxed
 * Environment) are checked against Python by the family cases; here, the JS-specific escape
 * routes: prototypes, constructors, functions, Object.prototype pollution, mutation of inputs.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { DeltatokError } from "../src/errors.js";
import { compileTemplate } from "../src/template/index.js";
import { checkFamily } from "./fixtures/template/harness.js";

checkFamily("sandbox");

function render(src: string, vars: Record<string, unknown> = {}): string {
  return compileTemplate(src).render(vars).text;
}

const messages = [{ role: "user", content: "hi" }];

test("JS prototype and function names are not reachable", () => {
  const names = ["__proto__", "constructor", "prototype", "call", "apply", "bind", "valueOf", "toString", "hasOwnProperty", "__defineGetter__", "isPrototypeOf", "length", "map", "push", "charAt", "then"];
  for (const name of names) {
    for (const target of ["messages", "messages[0]", "messages[0].role", "x", "1", "none", "range", "namespace()", "raise_exception"]) {
      assert.equal(render(`{{ (${target}).${name} is defined }}|{{ (${target})['${name}'] is defined }}`, { messages, x: 1.5 }), "False|False", `${target}.${name}`);
    }
  }
});

test("no way to reach Function or process", () => {
  for (const src of [
    "{{ {}.constructor.constructor('return process')() }}",
    "{{ messages.constructor.constructor('return process')() }}",
    "{{ ''.constructor.constructor('return process')() }}",
    "{{ range.constructor('return process')() }}",
    "{{ messages.__proto__.constructor }}",
    "{{ (messages|attr('constructor'))('x') }}",
    "{{ messages['__proto__']['constructor'] }}",
  ]) {
    let out: string;
    try {
      out = render(src, { messages });
    } catch (e) {
      assert.ok(e instanceof DeltatokError, src);
      assert.ok(["DT_TEMPLATE_RUNTIME", "DT_TEMPLATE_SANDBOX"].includes(e.code), `${src}: ${e.code}`);
      assert.doesNotMatch(e.message, /process|Function/);
      continue;
    }
    assert.equal(out, "", src);
  }
});

test("functions and class instances in the data are not callable or readable", () => {
  class Secret {
    token = "s3cret";
    reveal(): string {
      return this.token;
    }
  }
  const vars = { f: () => "called", obj: new Secret(), m: { fn: () => "called" } };
  assert.equal(render("{{ f is defined }}|{{ obj.token }}|{{ obj.reveal is defined }}|{{ m.fn is defined }}|{{ m['fn'] is defined }}", vars), "False||False|False|False");
  assert.throws(() => render("{{ m.fn() }}", vars), (e: unknown) => e instanceof DeltatokError && e.code === "DT_TEMPLATE_RUNTIME");
});

test("Object.prototype pollution does not leak into templates", () => {
  const proto = Object.prototype as Record<string, unknown>;
  proto["polluted"] = "yes";
  try {
    assert.equal(render("{{ d.polluted is defined }}|{{ d['polluted'] is defined }}|{{ 'polluted' in d }}|{{ polluted is defined }}", { d: { a: 1 } }), "False|False|False|False");
  } finally {
    delete proto["polluted"];
  }
});

test("mutating the inputs fails like Jinja2's ImmutableSandboxedEnvironment", () => {
  for (const src of ["{{ messages.append(1) }}", "{{ messages.pop() }}", "{{ messages[0].update({'role': 'x'}) }}", "{{ messages[0].clear() }}", "{% set l = [] %}{{ l.append(1) }}"]) {
    const snapshot = structuredClone(messages);
    assert.throws(() => render(src, { messages }), (e: unknown) => e instanceof DeltatokError && e.code === "DT_TEMPLATE_SANDBOX", src);
    assert.deepEqual(messages, snapshot);
  }
});
