/**
 * Jinja2 3.1's builtin tests (`is odd`, `is defined`, `is eq`, ...), with Python semantics and
 * argument errors, and calling a test by name (select / reject).
 *
 * Layer: template/jinja.
 */
import { typeError } from "./pyerror.js";
import { isDict, isFloat, isInt, isIterable, isNumber, isStr, pyCompare, pyContains, pyEq, pyStr } from "./ops.js";
import { pyMod } from "./arith.js";
import { percentFormat } from "./format.js";
import { pyIsLower, pyIsUpper } from "./pystr.js";
import type { RenderState } from "./runtime.js";
import { LoopContext, isCallable } from "./runtime.js";
import { Markup, PyRange, Undefined } from "./values.js";

import { NONE, fbind, noSuchCallable } from "./bind.js";
import type { TestFn } from "./bind.js";

// ---- tests -----------------------------------------------------------------------------------

function tbind(fname: string, args: unknown[], kwargs: Map<string, unknown> | null, params: Array<[string, unknown]>): unknown[] {
  return fbind(fname, args, kwargs, params);
}

function cmpTest(op: "eq" | "ne" | "lt" | "lteq" | "gt" | "gteq", pyop: string): TestFn {
  return (_rs, v, a, k) => {
    if (k !== null && k.size > 0) throw typeError(`${pyop}() takes no keyword arguments`);
    if (a.length !== 1) throw typeError(`${pyop} expected 2 arguments, got ${a.length + 1}`);
    const b = a[0];
    switch (op) {
      case "eq":
        return pyEq(v, b);
      case "ne":
        return !pyEq(v, b);
      case "lt":
        return pyCompare(v, b, "lt") < 0;
      case "lteq":
        return pyCompare(v, b, "lteq") <= 0;
      case "gt":
        return pyCompare(v, b, "gt") > 0;
      default:
        return pyCompare(v, b, "gteq") >= 0;
    }
  };
}

function modEq(rs: RenderState, v: unknown, m: unknown, r: number): boolean {
  const x = pyMod(v, m, rs, (s, args) => percentFormat(s as string, args, rs));
  return pyEq(x, r);
}

const T: Record<string, TestFn> = {
  odd: (rs, v, a, k) => (tbind("test_odd", a, k, []), modEq(rs, v, 2, 1)),
  even: (rs, v, a, k) => (tbind("test_even", a, k, []), modEq(rs, v, 2, 0)),
  divisibleby: (rs, v, a, k) => {
    const [num] = tbind("test_divisibleby", a, k, [["num", NONE]]);
    return modEq(rs, v, num, 0);
  },
  defined: (_rs, v, a, k) => (tbind("test_defined", a, k, []), !(v instanceof Undefined)),
  undefined: (_rs, v, a, k) => (tbind("test_undefined", a, k, []), v instanceof Undefined),
  test: (_rs, v, a, k) => (tbind("test_test", a, k, []), typeof v === "string" && TESTS.has(v)),
  none: (_rs, v, a, k) => (tbind("test_none", a, k, []), v === null),
  boolean: (_rs, v, a, k) => (tbind("test_boolean", a, k, []), typeof v === "boolean"),
  false: (_rs, v, a, k) => (tbind("test_false", a, k, []), v === false),
  true: (_rs, v, a, k) => (tbind("test_true", a, k, []), v === true),
  integer: (_rs, v, a, k) => (tbind("test_integer", a, k, []), isInt(v)),
  float: (_rs, v, a, k) => (tbind("test_float", a, k, []), isFloat(v)),
  lower: (rs, v, a, k) => (tbind("test_lower", a, k, []), pyIsLower(pyStr(v, rs))),
  upper: (rs, v, a, k) => (tbind("test_upper", a, k, []), pyIsUpper(pyStr(v, rs))),
  string: (_rs, v, a, k) => (tbind("test_string", a, k, []), isStr(v)),
  mapping: (_rs, v, a, k) => (tbind("test_mapping", a, k, []), isDict(v)),
  number: (_rs, v, a, k) => (tbind("test_number", a, k, []), isNumber(v)),
  sequence: (_rs, v, a, k) => {
    tbind("test_sequence", a, k, []);
    return isStr(v) || Array.isArray(v) || isDict(v) || v instanceof PyRange || v instanceof Undefined;
  },
  iterable: (_rs, v, a, k) => (tbind("test_iterable", a, k, []), isIterable(v) || v instanceof LoopContext),
  callable: (_rs, v, a, k) => {
    if (a.length > 0 || (k !== null && k.size > 0)) throw typeError(`callable() takes exactly one argument (${a.length + 1} given)`);
    return isCallable(v);
  },
  sameas: (_rs, v, a, k) => {
    const [other] = tbind("test_sameas", a, k, [["other", NONE]]);
    if (typeof v === "number" && typeof other === "number") return v === other && Number.isInteger(v) === Number.isInteger(other);
    return v === other;
  },
  escaped: (_rs, v, a, k) => (tbind("test_escaped", a, k, []), v instanceof Markup),
  in: (_rs, v, a, k) => {
    const [seq] = tbind("test_in", a, k, [["seq", NONE]]);
    return pyContains(seq, v);
  },
  "==": cmpTest("eq", "eq"),
  eq: cmpTest("eq", "eq"),
  equalto: cmpTest("eq", "eq"),
  "!=": cmpTest("ne", "ne"),
  ne: cmpTest("ne", "ne"),
  ">": cmpTest("gt", "gt"),
  gt: cmpTest("gt", "gt"),
  greaterthan: cmpTest("gt", "gt"),
  ">=": cmpTest("gteq", "ge"),
  ge: cmpTest("gteq", "ge"),
  "<": cmpTest("lt", "lt"),
  lt: cmpTest("lt", "lt"),
  lessthan: cmpTest("lt", "lt"),
  "<=": cmpTest("lteq", "le"),
  le: cmpTest("lteq", "le"),
};

const ALL = new Map(Object.entries(T));
export const TESTS: ReadonlyMap<string, TestFn> = ALL;

/** Adds a test defined with the filters (`filter`, which needs their table): filters.ts only. */
export function addTest(name: string, fn: TestFn): void {
  ALL.set(name, fn);
}

export function callTestByName(rs: RenderState, name: unknown, value: unknown, args: unknown[], kwargs: Map<string, unknown> | null): boolean {
  const f = typeof name === "string" ? TESTS.get(name) : undefined;
  if (f === undefined) throw noSuchCallable("test", name);
  return f(rs, value, args, kwargs);
}

