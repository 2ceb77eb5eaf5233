/**
 * Errors: syntax errors (DT_TEMPLATE_SYNTAX with Jinja2's message and line), raise_exception
 * (DT_TEMPLATE_RAISED whose message is exactly the argument), runtime errors
 * (DT_TEMPLATE_RUNTIME, "Type: message" as Python prints it). Python-rendered cases run first.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { DeltatokError } from "../src/errors.js";
import { TemplateErrorDetail, compileTemplate, pythonErrorString } from "../src/template/index.js";
import { checkFamily } from "./fixtures/template/harness.js";

checkFamily("errors");

function error(fn: () => unknown): DeltatokError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof DeltatokError);
    return e;
  }
  assert.fail("expected an error");
}

test("syntax errors carry Jinja2's message and the line", () => {
  const e = error(() => compileTemplate("line 1\nline 2\n{% if x %}\n{% endfor %}"));
  assert.equal(e.code, "DT_TEMPLATE_SYNTAX");
  assert.equal(
    e.message,
    "TemplateSyntaxError: Encountered unknown tag 'endfor'. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'. (line 4)",
  );
  assert.ok(e.cause instanceof TemplateErrorDetail);
  assert.equal(e.cause.line, 4);
  assert.equal(pythonErrorString(e), "TemplateSyntaxError: Encountered unknown tag 'endfor'. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'.");
  assert.equal(error(() => compileTemplate("a\r\nb\r\n{{ 1 +}}")).cause instanceof TemplateErrorDetail, true);
  assert.equal((error(() => compileTemplate("a\r\nb\r\n{{ 1 +}}")).cause as TemplateErrorDetail).line, 3);
});

test("raise_exception: the message is exactly the argument", () => {
  const t = compileTemplate("{{ raise_exception('Only user/assistant roles are supported! Got: ' ~ role) }}");
  const e = error(() => t.render({ role: "tool" }));
  assert.equal(e.code, "DT_TEMPLATE_RAISED");
  assert.equal(e.message, "Only user/assistant roles are supported! Got: tool");
  assert.equal(pythonErrorString(e), "TemplateError: Only user/assistant roles are supported! Got: tool");
});

test("runtime errors name the Python exception", () => {
  const e = error(() => compileTemplate("{% for k, v in x|items %}{% endfor %}").render({ x: "s" }));
  assert.equal(e.code, "DT_TEMPLATE_RUNTIME");
  assert.equal(e.message, "TypeError: Can only get item pairs from a mapping.");
  const u = error(() => compileTemplate("{{ x.items() }}").render({ x: "s" }));
  assert.equal(u.message, "UndefinedError: 'str object' has no attribute 'items'");
});

test("bad arguments to the API", () => {
  assert.equal(error(() => compileTemplate(5 as unknown as string)).code, "DT_INVALID_OPTION");
  assert.equal(error(() => compileTemplate("x").render(null as unknown as Record<string, unknown>)).code, "DT_INVALID_OPTION");
});
