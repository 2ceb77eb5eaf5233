/**
 * strftime_now: Python datetime.strftime on Linux/glibc (C locale) for every directive, flags
 * and widths (Python-rendered cases); `now` is the render input; readsClock tells the Deltatok
 * whether the date matters.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { compileTemplate } from "../src/template/index.js";
import { checkFamily } from "./fixtures/template/harness.js";

checkFamily("strftime");

test("readsClock is true exactly when the template can reach strftime_now", () => {
  assert.equal(compileTemplate("{{ strftime_now('%Y') }}").readsClock, true);
  assert.equal(compileTemplate("{% if false %}{{ strftime_now('%Y') }}{% endif %}").readsClock, true);
  assert.equal(compileTemplate("{% set f = strftime_now %}{{ f('%Y') }}").readsClock, true);
  assert.equal(compileTemplate("{% macro m() %}{{ strftime_now('%d') }}{% endmacro %}").readsClock, true);
  assert.equal(compileTemplate("{{ 'strftime_now' }}{{ x.strftime_now }}").readsClock, false);
  assert.equal(compileTemplate("{{ messages }}").readsClock, false);
});

test("now: its UTC fields are the naive datetime", () => {
  const t = compileTemplate("{{ strftime_now('%Y-%m-%d %H:%M:%S %a %j') }}");
  assert.equal(t.render({}, { now: new Date(Date.UTC(2026, 10, 30)) }).text, "2026-11-30 00:00:00 Mon 334");
  assert.equal(t.render({}, { now: new Date("2024-02-29T23:59:59.999Z") }).text, "2024-02-29 23:59:59 Thu 060");
});

test("without now, the current local time is used", () => {
  const before = new Date();
  const text = compileTemplate("{{ strftime_now('%Y-%m-%d') }}").render({}).text;
  const after = new Date();
  const fmt = (d: Date): string => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
  assert.ok(text === fmt(before) || text === fmt(after), text);
});
