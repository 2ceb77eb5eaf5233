/**
 * Every template expectation case (all families: loops, scoping, macros, filters, errors,
 * budgets, generation, ...) rendered incrementally — without a trace, then again with its own
 * trace, then with the trace after the variables changed — gives exactly the full render's
 * result: the same text, generation spans and steps, or the same error.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { DeltatokError } from "../src/errors.js";
import { compileTemplate, pythonErrorString, type CompiledTemplate, type PreviousRender } from "../src/template/index.js";
import { fixturesDir, loadFamily, nowOf, type Case } from "./fixtures/template/harness.js";

type Out = { text: string; generation: Array<[number, number]>; steps: number } | { error: string; code: string };

function full(t: CompiledTemplate, vars: Record<string, unknown>, now: Date): Out {
  try {
    const r = t.render(vars, { now });
    return { text: r.text, generation: r.generation, steps: r.steps };
  } catch (e) {
    if (!(e instanceof DeltatokError)) throw e;
    return { error: pythonErrorString(e) ?? e.message, code: e.code };
  }
}

function incremental(t: CompiledTemplate, vars: Record<string, unknown>, now: Date, prev: PreviousRender | null): [Out, PreviousRender | null] {
  try {
    const r = t.renderIncremental(vars, { now }, prev);
    return [{ text: r.segments.join(""), generation: r.generation, steps: r.steps }, { trace: r.trace, segments: r.segments }];
  } catch (e) {
    if (!(e instanceof DeltatokError)) throw e;
    return [{ error: pythonErrorString(e) ?? e.message, code: e.code }, prev];
  }
}

/** Deterministic variations of a case's variables (lists grow / shrink / reverse, scalars change). */
const VARIATIONS: Array<(v: unknown, depth: number) => unknown> = [
  // grow: strings change, ints increment, lists get one more copy of their last item
  (v, d) => {
    if (typeof v === "string") return v + "!";
    if (typeof v === "number" && Number.isInteger(v)) return v + 1;
    if (Array.isArray(v) && v.length > 0 && d < 6) return [...v, v[v.length - 1]];
    return v;
  },
  // shrink: lists lose their first item
  (v) => (Array.isArray(v) && v.length > 0 ? v.slice(1) : v),
  // reorder: lists reversed, dict keys reversed, ints become floats
  (v) => {
    if (Array.isArray(v)) return v.slice().reverse();
    if (typeof v === "number" && Number.isInteger(v)) return v + 0.5;
    if (typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype) {
      const o: Record<string, unknown> = {};
      for (const k of Object.keys(v).reverse()) o[k] = (v as Record<string, unknown>)[k];
      return o;
    }
    return v;
  },
];

function show(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? `${x}n` : x)) ?? "";
}

function vary(v: unknown, f: (v: unknown, depth: number) => unknown, depth = 0): unknown {
  if (depth > 6) return v;
  let x = f(v, depth);
  if (Array.isArray(x)) x = x.map((y) => vary(y, f, depth + 1));
  else if (typeof x === "object" && x !== null && Object.getPrototypeOf(x) === Object.prototype) {
    const o: Record<string, unknown> = {};
    for (const [k, y] of Object.entries(x)) o[k] = vary(y, f, depth + 1);
    x = o;
  }
  return x;
}

const families = readdirSync(join(fixturesDir(), "expectations"))
  .filter((f) => f.endsWith(".json"))
  .map((f) => f.slice(0, -5));

for (const family of families) {
  test(`incremental render equals full render: ${family}`, () => {
    let n = 0;
    for (const c of loadFamily(family) as Case[]) {
      let t: CompiledTemplate;
      try {
        t = compileTemplate(c.template);
      } catch {
        continue; // syntax errors: nothing to render
      }
      const now = nowOf(c);
      const vars = c.vars ?? {};
      const want = full(t, vars, now);
      const [a, prevA] = incremental(t, vars, now, null);
      assert.deepEqual(a, want, `${family}/${c.name} (no trace): ${JSON.stringify(c.template)}`);
      const [b, prevB] = incremental(t, vars, now, prevA);
      assert.deepEqual(b, want, `${family}/${c.name} (own trace): ${JSON.stringify(c.template)}`);
      VARIATIONS.forEach((f, i) => {
        const vars2: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(vars)) vars2[k] = vary(v, f);
        const want2 = full(t, vars2, now);
        const [d, prevD] = incremental(t, vars2, now, prevB);
        assert.deepEqual(d, want2, `${family}/${c.name} (variation ${i}): ${JSON.stringify(c.template)} vars ${show(vars2)}`);
        const [e] = incremental(t, vars, now, prevD);
        assert.deepEqual(e, want, `${family}/${c.name} (back from variation ${i}): ${JSON.stringify(c.template)}`);
      });
      n++;
    }
    assert.ok(n > 0);
  });
}
