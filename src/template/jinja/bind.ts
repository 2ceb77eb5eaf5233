/**
 * Python argument binding of the builtin filters and tests (`def f(value, p1=d1, ...)`, with
 * CPython's TypeError messages), their calling convention, and the "no filter/test named"
 * error of filters that call others by name.
 *
 * Layer: template/jinja.
 */
import { PyError, typeError } from "./pyerror.js";
import { failUndefined, pyRepr } from "./ops.js";
import type { RenderState } from "./runtime.js";
import { MISSING, Undefined } from "./values.js";


export type FilterFn = (rs: RenderState, value: unknown, args: unknown[], kwargs: Map<string, unknown> | null) => unknown;
export type TestFn = (rs: RenderState, value: unknown, args: unknown[], kwargs: Map<string, unknown> | null) => boolean;

export const NONE = Symbol("no-default");

/**
 * Python argument binding for `def f(value, p1=d1, ...)`: returns the parameter values.
 * `params` lists [name, default] (NONE = required).
 */
/** Python filter functions that receive a context/environment/eval-context first (counted by Python). */
export const PASS_ARG = new Set(["sync_do_join", "sync_do_first", "sync_do_groupby", "sync_do_sum", "sync_do_unique", "do_attr", "do_last", "do_max", "do_min", "do_random", "do_replace", "do_sort", "do_truncate", "do_wordwrap", "do_xmlattr"]);

export function fbind(fname: string, args: unknown[], kwargs: Map<string, unknown> | null, params: Array<[string, unknown]>): unknown[] {
  const extra = PASS_ARG.has(fname) ? 1 : 0;
  const total = params.length + 1 + extra;
  const required = params.filter((p) => p[1] === NONE).length + 1 + extra;
  if (args.length > params.length) {
    const given = args.length + 1 + extra;
    if (required === total) throw typeError(`${fname}() takes ${total} positional argument${total === 1 ? "" : "s"} but ${given} were given`);
    throw typeError(`${fname}() takes from ${required} to ${total} positional arguments but ${given} were given`);
  }
  const out = params.map((_, i) => (i < args.length ? args[i] : MISSING));
  if (kwargs !== null) {
    for (const [k, v] of kwargs) {
      const i = params.findIndex((p) => p[0] === k);
      if (i < 0) throw typeError(`${fname}() got an unexpected keyword argument ${pyRepr(k)}`);
      if (out[i] !== MISSING) throw typeError(`${fname}() got multiple values for argument ${pyRepr(k)}`);
      out[i] = v;
    }
  }
  const missing: string[] = [];
  for (let i = 0; i < params.length; i++) {
    if (out[i] === MISSING) {
      const d = (params[i] as [string, unknown])[1];
      if (d === NONE) missing.push((params[i] as [string, unknown])[0]);
      else out[i] = d;
    }
  }
  if (missing.length > 0) {
    const names = missing.map((m) => pyRepr(m));
    const list = names.length === 1 ? names[0] : names.slice(0, -1).join(", ") + " and " + names[names.length - 1];
    throw typeError(`${fname}() missing ${missing.length} required positional argument${missing.length === 1 ? "" : "s"}: ${list}`);
  }
  return out;
}

export function noArgs(fname: string, args: unknown[], kwargs: Map<string, unknown> | null): void {
  fbind(fname, args, kwargs, []);
}

/** Jinja2's error for a filter or test name that does not exist (an undefined name says why). */
export function noSuchCallable(kind: "filter" | "test", name: unknown): PyError {
  let msg = `No ${kind} named ${pyRepr(name)}.`;
  if (name instanceof Undefined) {
    try {
      failUndefined(name);
    } catch (e) {
      msg = `${msg} (${(e as Error).message}; did you forget to quote the callable name?)`;
    }
  }
  return new PyError("TemplateRuntimeError", msg);
}

