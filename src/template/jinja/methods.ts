/**
 * Python attributes and methods of the builtin types a template can reach (str, list, tuple,
 * dict, int, float, range, dict views, Namespace, LoopContext, Macro, Cycler, Joiner), with the
 * ImmutableSandboxedEnvironment rules: names starting with "_" and methods that mutate a list
 * or dict exist but are unsafe (SecurityError when used); anything else unknown is missing.
 * Nothing here ever reaches a JS property of a JS object.
 *
 * Layer: template/jinja.
 */
import { PyFloat } from "../../json/values.js";
import { PyError, typeError, valueError } from "./pyerror.js";
import { strFormat } from "./format.js";
import {
  ENTRY_UNITS,
  ITEM_UNITS,
  OBJECT_UNITS,
  TUPLE_UNITS,
  dictGet,
  dictItems,
  dictKeys,
  dictSet,
  dictSize,
  newDict,
  fval,
  isDict,
  isStr,
  markupEscape,
  mkFloat,
  pyEq,
  pyList,
  pyRepr,
  pyStr,
  strOf,
  typeName,
} from "./ops.js";
import type { SizeGuard } from "./ops.js";
import {
  cpLen,
  cpSlice,
  pyCapitalize,
  pyCenter,
  pyCount,
  pyExpandtabs,
  pyFind,
  pyIsAlnum,
  pyIsAlpha,
  pyIsDecimal,
  pyIsDigit,
  pyIsIdentifier,
  pyIsLower,
  pyIsNumeric,
  pyIsPrintable,
  pyIsSpace,
  pyIsTitle,
  pyIsUpper,
  pyLjust,
  pyReplace,
  pyRjust,
  replaceCount,
  pyRsplit,
  pySplit,
  pySplitCount,
  pySplitlines,
  splitBound,
  lineCount,
  expandedLength,
  pyStrip,
  pySwapcase,
  pyTitle,
  pyZfill,
} from "./pystr.js";
import type { RenderState } from "./runtime.js";
import { UNDERSCORE_ATTRS } from "./pyattrs-data.js";
import {
  Cycler,
  DictView,
  GROUP,
  Joiner,
  MISSING,
  Markup,
  Namespace,
  PyFunction,
  PyIter,
  PyRange,
  isTuple,
  mkTuple,
} from "./values.js";

import { LoopContext, Macro, TemplateReference } from "./runtime.js";
import { dataValue, failUndefined, isInt, isPlainDict } from "./ops.js";
import { cpToUnit, hasSurrogates } from "./pystr.js";
import { Undefined } from "./values.js";

const UNSAFE_MARK = (): symbol => UNSAFE;

// ---- argument binding ------------------------------------------------------------------------

type Args = unknown[];
type Kw = Map<string, unknown> | null;

/**
 * Binds positional and keyword arguments to parameter names. `kwNames` are the parameters that
 * may be passed by keyword (Python builtins are mostly positional-only).
 */
function bind(fname: string, args: Args, kwargs: Kw, names: string[], required: number, kwNames: readonly string[] = []): unknown[] {
  if (args.length > names.length) {
    throw typeError(
      required === names.length
        ? `${fname}() takes exactly ${names.length === 1 ? "one argument" : `${names.length} arguments`} (${args.length} given)`
        : `${fname} expected at most ${names.length} argument${names.length === 1 ? "" : "s"}, got ${args.length}`,
    );
  }
  const out: unknown[] = names.map((_, i) => (i < args.length ? args[i] : MISSING));
  if (kwargs !== null) {
    for (const [k, v] of kwargs) {
      const i = names.indexOf(k);
      if (i < 0 || !kwNames.includes(k)) {
        if (kwNames.length === 0) throw typeError(`${fname}() takes no keyword arguments`);
        throw typeError(`${fname}() got an unexpected keyword argument ${pyRepr(k)}`);
      }
      if (out[i] !== MISSING) throw typeError(`${fname}() got multiple values for argument ${pyRepr(k)}`);
      out[i] = v;
    }
  }
  for (let i = 0; i < required; i++) {
    if (out[i] === MISSING) {
      if (kwNames.length === 0) {
        throw typeError(`${fname}() takes ${required === names.length ? "exactly" : "at least"} ${required === 1 ? "one argument" : `${required} arguments`} (${args.length} given)`);
      }
      throw typeError(`${fname}() missing required argument ${pyRepr(names[i])} (pos ${i + 1})`);
    }
  }
  return out;
}

function optStr(fname: string, v: unknown, what = "arg"): string | null {
  if (v === MISSING || v === null) return null;
  if (isStr(v)) return strOf(v);
  if (what === "strip") throw typeError(`${fname} arg must be None or str`);
  throw typeError(`must be str or None, not ${typeName(v)}`);
}

function reqStr(fname: string, v: unknown, argn: number): string {
  if (isStr(v)) return strOf(v);
  throw typeError(`${fname}() argument ${argn} must be str, not ${typeName(v)}`);
}

function mustStr(v: unknown): string {
  if (isStr(v)) return strOf(v);
  throw typeError(`must be str, not ${typeName(v)}`);
}

function toIndex(v: unknown): number {
  if (typeof v === "number" && Number.isInteger(v)) return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "bigint") return v > 0n ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER;
  throw typeError(`'${typeName(v)}' object cannot be interpreted as an integer`);
}

function optIndex(v: unknown): number | null {
  if (v === MISSING || v === null) return null;
  if (typeof v === "number" && Number.isInteger(v)) return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  throw typeError("slice indices must be integers or None or have an __index__ method");
}

// ---- str methods -------------------------------------------------------------------------

type StrMethod = (rs: RenderState, s: string, args: Args, kwargs: Kw, self: string | Markup) => unknown;

function prefixCheck(fname: string, s: string, args: Args, kwargs: Kw, ends: boolean): boolean {
  const [p, st, en] = bind(fname, args, kwargs, ["prefix", "start", "end"], 1);
  const a = optIndex(st);
  const b = optIndex(en);
  let seg = s;
  if (a !== null || b !== null) {
    const len = cpLen(s);
    const x0 = a === null ? 0 : a < 0 ? Math.max(0, a + len) : a;
    if (x0 > len) return false; // Python: start beyond the end never matches
    const x = Math.min(x0, len);
    let y = b === null ? len : b < 0 ? Math.max(0, b + len) : Math.min(b, len);
    if (y < x) y = x;
    seg = cpSlice(s, x, y);
  }
  const test = (q: unknown): boolean => {
    const t = strOf(q as string | Markup);
    return ends ? seg.endsWith(t) : seg.startsWith(t);
  };
  if (isStr(p)) return test(p);
  if (isTuple(p)) {
    for (const q of p as unknown[]) {
      if (!isStr(q)) throw typeError(`tuple for ${fname} must only contain str, not ${typeName(q)}`);
      if (test(q)) return true;
    }
    return false;
  }
  throw typeError(`${fname} first arg must be str or a tuple of str, not ${typeName(p)}`);
}

function findArgs(fname: string, args: Args, kwargs: Kw): [string, number | null, number | null] {
  const [sub, st, en] = bind(fname, args, kwargs, ["sub", "start", "end"], 1);
  return [mustStr(sub), optIndex(st), optIndex(en)];
}

function partition(rs: RenderState, s: string, sep: string, right: boolean): unknown[] {
  if (sep.length === 0) throw valueError("empty separator");
  rs.charge(3 * ITEM_UNITS + TUPLE_UNITS + s.length);
  const i = right ? s.lastIndexOf(sep) : s.indexOf(sep);
  if (i < 0) return right ? mkTuple(["", "", s]) : mkTuple([s, "", ""]);
  return mkTuple([s.slice(0, i), sep, s.slice(i + sep.length)]);
}

function fillChar(fname: string, v: unknown): string {
  if (v === MISSING) return " ";
  if (!isStr(v) || cpLen(strOf(v)) !== 1) {
    throw typeError(`The fill character must be exactly one character long`);
  }
  void fname;
  return strOf(v);
}

function joinItems(rs: RenderState, sep: string, iterable: unknown): string {
  let items: unknown[];
  try {
    items = pyList(iterable, rs);
  } catch (e) {
    if (e instanceof PyError && e.pyType === "TypeError" && e.message.endsWith("is not iterable")) throw typeError("can only join an iterable");
    throw e;
  }
  rs.addSteps(items.length);
  let total = 0;
  rs.buildItems(items.length);
  const parts: string[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    const x = items[i];
    if (!isStr(x)) throw typeError(`sequence item ${i}: expected str instance, ${typeName(x)} found`);
    const t = strOf(x);
    parts[i] = t;
    total += t.length + sep.length;
  }
  rs.buildStr(Math.max(0, total - sep.length));
  return parts.join(sep);
}

/**
 * A case mapping of `s` (which may grow it: 'ß'.upper() is 'SS', up to three units per unit),
 * charged to `g`: its length before, what it grew by after.
 */
export function caseMapped(g: SizeGuard, s: string, f: (s: string) => string): string {
  if (s.length === 0) return s;
  g.buildStr(s.length);
  const r = f(s);
  if (r.length > s.length) g.buildStr(r.length - s.length);
  if (r.length > g.maxChars) g.checkSize(r.length);
  return r;
}

/** markupsafe's escape of a str, charged to `g` when it grows (each of &<>"' becomes 4–5 units). */
export function escapedStr(g: SizeGuard, s: string): string {
  if (!/[&<>"']/.test(s)) return s;
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 38 || c === 34 || c === 39) n += 4;
    else if (c === 60 || c === 62) n += 3;
  }
  g.buildStr(n);
  return markupEscape(s).s;
}

/** The padding center / ljust / rjust / zfill add to `s` for `width`, charged before it is built. */
function padCharge(g: SizeGuard, s: string, width: number, fill: string): void {
  const n = width - cpLen(s);
  if (n > 0) g.buildStr(s.length + n * fill.length);
}

/** str.strip / lstrip / rstrip, charged to `g` when a copy is made. */
export function stripped(g: SizeGuard, s: string, chars: string | null, left: boolean, right: boolean): string {
  const r = pyStrip(s, chars, left, right);
  if (r !== s) g.charge(r.length);
  return r;
}

/** str.replace, its result (and the pieces it is joined from) charged to `g` before it is built. */
export function replaced(g: SizeGuard, s: string, old: string, rep: string, count: number): string {
  const n = replaceCount(s, old, count);
  if (n === 0) return s;
  g.buildStr(s.length + n * (rep.length - old.length));
  g.buildItems(n + 1);
  return pyReplace(s, old, rep, count);
}

/**
 * Results of str.split / rsplit / splitlines: `bound` is the most pieces `s` could give; when
 * that many would not fit in the budget, the pieces are counted first (`count()`).
 * The pieces are charged (a slot each) with their text before the list is built.
 */
function splitCharge(g: SizeGuard, s: string, bound: number, count: () => number): void {
  const fits = bound * ITEM_UNITS + s.length <= g.room() && bound * 16 <= g.maxChars;
  g.buildItems(fits ? bound : count());
  g.charge(s.length);
}

export const STR_METHODS: Record<string, StrMethod> = Object.assign(Object.create(null) as Record<string, StrMethod>, {
  strip: (rs: RenderState, s: string, a: Args, k: Kw) => stripped(rs, s, optStr("strip", bind("strip", a, k, ["chars"], 0)[0], "strip"), true, true),
  lstrip: (rs: RenderState, s: string, a: Args, k: Kw) => stripped(rs, s, optStr("lstrip", bind("lstrip", a, k, ["chars"], 0)[0], "strip"), true, false),
  rstrip: (rs: RenderState, s: string, a: Args, k: Kw) => stripped(rs, s, optStr("rstrip", bind("rstrip", a, k, ["chars"], 0)[0], "strip"), false, true),
  split: (rs: RenderState, s: string, a: Args, k: Kw) => {
    const [sep, mx] = bind("split", a, k, ["sep", "maxsplit"], 0, ["sep", "maxsplit"]);
    const sp = optStr("split", sep);
    if (sp === "") throw valueError("empty separator");
    const max = mx === MISSING ? -1 : toIndex(mx);
    splitCharge(rs, s, splitBound(s, sp, max), () => pySplitCount(s, sp, max));
    const r = pySplit(s, sp, max);
    rs.addSteps(r.length);
    return r;
  },
  rsplit: (rs: RenderState, s: string, a: Args, k: Kw) => {
    const [sep, mx] = bind("rsplit", a, k, ["sep", "maxsplit"], 0, ["sep", "maxsplit"]);
    const sp = optStr("rsplit", sep);
    if (sp === "") throw valueError("empty separator");
    const max = mx === MISSING ? -1 : toIndex(mx);
    splitCharge(rs, s, splitBound(s, sp, max), () => pySplitCount(s, sp, max));
    const r = pyRsplit(s, sp, max);
    rs.addSteps(r.length);
    return r;
  },
  splitlines: (rs: RenderState, s: string, a: Args, k: Kw) => {
    const [ke] = bind("splitlines", a, k, ["keepends"], 0, ["keepends"]);
    splitCharge(rs, s, s.length + 1, () => lineCount(s));
    return pySplitlines(s, ke !== MISSING && Boolean(fval(ke)));
  },
  startswith: (_rs: RenderState, s: string, a: Args, k: Kw) => prefixCheck("startswith", s, a, k, false),
  endswith: (_rs: RenderState, s: string, a: Args, k: Kw) => prefixCheck("endswith", s, a, k, true),
  find: (_rs: RenderState, s: string, a: Args, k: Kw) => {
    const [sub, st, en] = findArgs("find", a, k);
    return pyFind(s, sub, st, en, false);
  },
  rfind: (_rs: RenderState, s: string, a: Args, k: Kw) => {
    const [sub, st, en] = findArgs("rfind", a, k);
    return pyFind(s, sub, st, en, true);
  },
  index: (_rs: RenderState, s: string, a: Args, k: Kw) => {
    const [sub, st, en] = findArgs("index", a, k);
    const r = pyFind(s, sub, st, en, false);
    if (r < 0) throw valueError("substring not found");
    return r;
  },
  rindex: (_rs: RenderState, s: string, a: Args, k: Kw) => {
    const [sub, st, en] = findArgs("rindex", a, k);
    const r = pyFind(s, sub, st, en, true);
    if (r < 0) throw valueError("substring not found");
    return r;
  },
  count: (_rs: RenderState, s: string, a: Args, k: Kw) => {
    const [sub, st, en] = findArgs("count", a, k);
    return pyCount(s, sub, st, en);
  },
  replace: (rs: RenderState, s: string, a: Args, k: Kw, self: string | Markup) => {
    const [o, n, c] = bind("replace", a, k, ["old", "new", "count"], 2);
    const old = reqStr("replace", o, 1);
    const rep = self instanceof Markup ? markupEscape(n).s : reqStr("replace", n, 2);
    const count = c === MISSING ? -1 : toIndex(c);
    return replaced(rs, s, old, rep, count);
  },
  upper: (rs: RenderState, s: string, a: Args, k: Kw) => (bind("upper", a, k, [], 0), caseMapped(rs, s, (x) => x.toUpperCase())),
  lower: (rs: RenderState, s: string, a: Args, k: Kw) => (bind("lower", a, k, [], 0), caseMapped(rs, s, (x) => x.toLowerCase())),
  casefold: (rs: RenderState, s: string, a: Args, k: Kw) => (bind("casefold", a, k, [], 0), caseMapped(rs, s, (x) => x.toLowerCase().replace(/ß/g, "ss"))),
  title: (rs: RenderState, s: string, a: Args, k: Kw) => (bind("title", a, k, [], 0), caseMapped(rs, s, pyTitle)),
  capitalize: (rs: RenderState, s: string, a: Args, k: Kw) => (bind("capitalize", a, k, [], 0), caseMapped(rs, s, pyCapitalize)),
  swapcase: (rs: RenderState, s: string, a: Args, k: Kw) => (bind("swapcase", a, k, [], 0), caseMapped(rs, s, pySwapcase)),
  center: (rs: RenderState, s: string, a: Args, k: Kw, self: string | Markup) => {
    const [w, f] = bind("center", a, k, ["width", "fillchar"], 1);
    const width = toIndex(w);
    const fill = self instanceof Markup && f !== MISSING ? markupEscape(f).s : fillChar("center", f);
    padCharge(rs, s, width, fill);
    return pyCenter(s, width, fill);
  },
  ljust: (rs: RenderState, s: string, a: Args, k: Kw) => {
    const [w, f] = bind("ljust", a, k, ["width", "fillchar"], 1);
    const width = toIndex(w);
    const fill = fillChar("ljust", f);
    padCharge(rs, s, width, fill);
    return pyLjust(s, width, fill);
  },
  rjust: (rs: RenderState, s: string, a: Args, k: Kw) => {
    const [w, f] = bind("rjust", a, k, ["width", "fillchar"], 1);
    const width = toIndex(w);
    const fill = fillChar("rjust", f);
    padCharge(rs, s, width, fill);
    return pyRjust(s, width, fill);
  },
  zfill: (rs: RenderState, s: string, a: Args, k: Kw) => {
    const [w] = bind("zfill", a, k, ["width"], 1);
    const width = toIndex(w);
    padCharge(rs, s, width, "0");
    return pyZfill(s, width);
  },
  expandtabs: (rs: RenderState, s: string, a: Args, k: Kw) => {
    const [t] = bind("expandtabs", a, k, ["tabsize"], 0, ["tabsize"]);
    const tabsize = t === MISSING ? 8 : toIndex(t);
    const n = expandedLength(s, tabsize);
    if (n !== s.length || s.indexOf("\t") >= 0) {
      rs.checkSize(n);
      rs.charge(2 * n);
    }
    return pyExpandtabs(s, tabsize);
  },
  partition: (rs: RenderState, s: string, a: Args, k: Kw) => partition(rs, s, mustStr(bind("partition", a, k, ["sep"], 1)[0]), false),
  rpartition: (rs: RenderState, s: string, a: Args, k: Kw) => partition(rs, s, mustStr(bind("rpartition", a, k, ["sep"], 1)[0]), true),
  removeprefix: (rs: RenderState, s: string, a: Args, k: Kw) => {
    const p = mustStr(bind("removeprefix", a, k, ["prefix"], 1)[0]);
    return p.length > 0 && s.startsWith(p) ? (rs.charge(s.length - p.length), s.slice(p.length)) : s;
  },
  removesuffix: (rs: RenderState, s: string, a: Args, k: Kw) => {
    const p = mustStr(bind("removesuffix", a, k, ["suffix"], 1)[0]);
    return p.length > 0 && s.endsWith(p) ? (rs.charge(s.length - p.length), s.slice(0, s.length - p.length)) : s;
  },
  join: (rs: RenderState, s: string, a: Args, k: Kw, self: string | Markup) => {
    const [it] = bind("join", a, k, ["iterable"], 1);
    if (self instanceof Markup) {
      const list = pyList(it, rs);
      rs.buildItems(list.length);
      const items = list.map((x) => (x instanceof Markup ? x.s : escapedStr(rs, pyStr(x, rs))));
      return joinItems(rs, s, items);
    }
    return joinItems(rs, s, it);
  },
  format: (rs: RenderState, s: string, a: Args, k: Kw, self: string | Markup) => {
    const kw = k ?? new Map<string, unknown>();
    return strFormat(s, a, kw, lookups(rs), rs, 0, self instanceof Markup);
  },
  format_map: (rs: RenderState, s: string, a: Args, k: Kw, self: string | Markup) => {
    if (k !== null && k.size > 0) throw typeError("format_map() takes no keyword arguments");
    if (a.length !== 1) throw typeError(`format_map() takes exactly one argument (${a.length} given)`);
    const m = a[0];
    if (!isDict(m)) throw typeError(`'${typeName(m)}' object is not subscriptable`);
    const kw = new Map<string, unknown>();
    rs.charge(dictSize(m) * ENTRY_UNITS);
    for (const key of dictKeys(m)) kw.set(String(key), dictGet(m, key));
    return strFormat(s, [], kw, lookups(rs), rs, 0, self instanceof Markup);
  },
  isalnum: (_rs: RenderState, s: string) => pyIsAlnum(s),
  isalpha: (_rs: RenderState, s: string) => pyIsAlpha(s),
  isascii: (_rs: RenderState, s: string) => /^[\x00-\x7f]*$/.test(s),
  isdecimal: (_rs: RenderState, s: string) => pyIsDecimal(s),
  isdigit: (_rs: RenderState, s: string) => pyIsDigit(s),
  isidentifier: (_rs: RenderState, s: string) => pyIsIdentifier(s),
  islower: (_rs: RenderState, s: string) => pyIsLower(s),
  isnumeric: (_rs: RenderState, s: string) => pyIsNumeric(s),
  isprintable: (_rs: RenderState, s: string) => pyIsPrintable(s),
  isspace: (_rs: RenderState, s: string) => pyIsSpace(s),
  istitle: (_rs: RenderState, s: string) => pyIsTitle(s),
  isupper: (_rs: RenderState, s: string) => pyIsUpper(s),
});

/** markupsafe.Markup methods that return Markup (others return plain values). */
const MARKUP_RESULT = new Set(["strip", "lstrip", "rstrip", "replace", "upper", "lower", "title", "capitalize", "swapcase", "casefold", "center", "ljust", "rjust", "zfill", "expandtabs", "removeprefix", "removesuffix", "join", "format", "format_map"]);
const MARKUP_LIST_RESULT = new Set(["split", "rsplit", "splitlines", "partition", "rpartition"]);

/** Calls a str method; `self` may be a Markup. Returns MISSING when there is no such method. */
export function callStrMethod(rs: RenderState, self: string | Markup, name: string, args: Args, kwargs: Kw): unknown {
  const m = STR_METHODS[name];
  if (m === undefined) return MISSING;
  const s = typeof self === "string" ? self : self.s;
  const r = m(rs, s, args, kwargs, self);
  if (self instanceof Markup) {
    if (MARKUP_RESULT.has(name)) return new Markup(r as string);
    if (MARKUP_LIST_RESULT.has(name)) {
      rs.buildItems((r as string[]).length);
      const arr = (r as string[]).map((x) => new Markup(x));
      return isTuple(r) ? mkTuple(arr) : arr;
    }
  }
  return r;
}

function lookups(rs: RenderState): { getattr(o: unknown, n: string): unknown; getitem(o: unknown, k: unknown): unknown } {
  return { getattr: (o, n) => getAttr(rs, o, n), getitem: (o, k) => getItem(rs, o, k) };
}

// ---- list / tuple / dict methods ------------------------------------------------------------

const LIST_MUTATING = new Set(["append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort"]);
const DICT_MUTATING = new Set(["clear", "pop", "popitem", "setdefault", "update"]);

function seqIndex(arr: unknown[], a: Args, k: Kw): number {
  const [x, st, en] = bind("index", a, k, ["value", "start", "stop"], 1);
  const len = arr.length;
  let s = st === MISSING ? 0 : toIndex(st);
  let e = en === MISSING ? len : toIndex(en);
  if (s < 0) s = Math.max(0, s + len);
  if (e < 0) e = Math.max(0, e + len);
  for (let i = s; i < Math.min(e, len); i++) if (pyEq(arr[i], x)) return i;
  throw valueError(isTuple(arr) ? "tuple.index(x): x not in tuple" : `${pyRepr(x)} is not in list`);
}

function listMethod(obj: unknown[], name: string): unknown {
  if ((obj as unknown as { [GROUP]?: boolean })[GROUP] === true) {
    if (name === "grouper") return obj[0];
    if (name === "list") return obj[1];
  }
  switch (name) {
    case "count":
      return method("count", obj, (_rs, a, k) => {
        const [x] = bind("count", a, k, ["value"], 1);
        let n = 0;
        for (const y of obj) if (pyEq(y, x)) n++;
        return n;
      });
    case "index":
      return method("index", obj, (_rs, a, k) => seqIndex(obj, a, k));
    case "copy":
      if (isTuple(obj)) return MISSING;
      return method("copy", obj, (rs, a, k) => (bind("copy", a, k, [], 0), rs.buildItems(obj.length), obj.slice()));
  }
  if (!isTuple(obj) && LIST_MUTATING.has(name)) return UNSAFE_MARK();
  return MISSING;
}

function dictMethod(d: object, name: string): unknown {
  switch (name) {
    case "items":
      return method("items", d, (_rs, a, k) => (bind("items", a, k, [], 0), new DictView("items", d)));
    case "keys":
      return method("keys", d, (_rs, a, k) => (bind("keys", a, k, [], 0), new DictView("keys", d)));
    case "values":
      return method("values", d, (_rs, a, k) => (bind("values", a, k, [], 0), new DictView("values", d)));
    case "get":
      return method("get", d, (_rs, a, k) => {
        const [key, dflt] = bind("get", a, k, ["key", "default"], 1);
        const v = dictGet(d, key);
        return v === MISSING ? (dflt === MISSING ? null : dflt) : v;
      });
    case "copy":
      return method("copy", d, (rs, a, k) => {
        bind("copy", a, k, [], 0);
        rs.charge(OBJECT_UNITS);
        const m = newDict();
        for (const [key, v] of dictItems(d) as unknown[][]) dictSet(m, key, v, rs);
        return m;
      });
    case "fromkeys":
      return method("fromkeys", d, (rs, a, k) => {
        const [it, v] = bind("fromkeys", a, k, ["iterable", "value"], 1);
        rs.charge(OBJECT_UNITS);
        const m = newDict();
        for (const key of pyList(it, rs)) dictSet(m, key, v === MISSING ? null : v, rs);
        return m;
      });
  }
  if (DICT_MUTATING.has(name)) return UNSAFE_MARK();
  return MISSING;
}

function method(name: string, self: unknown, fn: (rs: RenderState, a: Args, k: Kw) => unknown): PyFunction {
  return new PyFunction(name, "builtin_function_or_method", fn, self);
}

// ---- numbers -----------------------------------------------------------------------------------

function intAttr(v: number | bigint | boolean, name: string): unknown {
  const n = typeof v === "boolean" ? (v ? 1 : 0) : v;
  switch (name) {
    case "real":
    case "numerator":
      return n;
    case "imag":
      return 0;
    case "denominator":
      return 1;
    case "bit_length":
      return method(name, v, () => (n === 0 ? 0 : (typeof n === "bigint" ? (n < 0n ? -n : n) : Math.abs(n)).toString(2).length));
    case "bit_count":
      return method(name, v, () => (typeof n === "bigint" ? (n < 0n ? -n : n) : Math.abs(n)).toString(2).replace(/0/g, "").length);
    case "conjugate":
      return method(name, v, () => n);
    case "as_integer_ratio":
      return method(name, v, () => mkTuple([n, 1]));
    case "to_bytes":
    case "from_bytes":
      return method(name, v, () => {
        throw new PyError("TemplateRuntimeError", `int.${name} is not supported`);
      });
  }
  return MISSING;
}

function floatAttr(x: number, name: string): unknown {
  switch (name) {
    case "real":
      return mkFloat(x);
    case "imag":
      return new PyFloat(0);
    case "is_integer":
      return method(name, x, () => Number.isInteger(x));
    case "conjugate":
      return method(name, x, () => mkFloat(x));
    case "hex":
    case "fromhex":
    case "as_integer_ratio":
      return method(name, x, () => {
        throw new PyError("TemplateRuntimeError", `float.${name} is not supported`);
      });
  }
  return MISSING;
}

// ---- dispatch ------------------------------------------------------------------------------------

/** The key of UNDERSCORE_ATTRS for a value's Python type. */
function attrTypeKey(obj: unknown): string {
  switch (typeof obj) {
    case "string":
      return "str";
    case "number":
      return Number.isInteger(obj) ? "int" : "float";
    case "bigint":
      return "int";
    case "boolean":
      return "bool";
    case "object":
      break;
    default:
      return "object";
  }
  if (obj === null) return "NoneType";
  if (obj instanceof PyFunction) return obj.typeName;
  if (obj instanceof PyIter) return obj.typeName === "generator" ? "generator" : "list_reverseiterator";
  const t = typeName(obj);
  if (t.startsWith("dict_")) return t;
  return t in UNDERSCORE_ATTRS ? t : "object";
}

/**
 * Python `getattr(obj, name)` under the sandbox: the value, MISSING (AttributeError) or UNSAFE
 * (the attribute exists but is blocked).
 */
export function attrOf(rs: RenderState, obj: unknown, name: string): unknown {
  if (name.charCodeAt(0) === 95 /* _ */) {
    if (obj instanceof Namespace) return name === "__class__" || name === "_Namespace__attrs" || obj.attrs.has(name) ? UNSAFE_MARK() : MISSING;
    const set = UNDERSCORE_ATTRS[attrTypeKey(obj)] ?? (UNDERSCORE_ATTRS["object"] as ReadonlySet<string>);
    return set.has(name) ? UNSAFE_MARK() : MISSING;
  }
  switch (typeof obj) {
    case "string":
      return name in STR_METHODS ? strBound(obj, name) : name === "encode" || name === "maketrans" || name === "translate" ? unsupported("str", name, obj) : MISSING;
    case "number":
      if (Number.isInteger(obj)) return intAttr(obj, name);
      return floatAttr(obj, name);
    case "bigint":
    case "boolean":
      return intAttr(obj, name);
    case "object":
      break;
    default:
      return MISSING;
  }
  if (obj === null) return MISSING;
  if (Array.isArray(obj)) return listMethod(obj, name);
  if (isDict(obj)) return dictMethod(obj, name);
  if (obj instanceof PyFloat) return floatAttr(obj.value, name);
  if (obj instanceof Markup) {
    if (name in STR_METHODS) return strBound(obj, name);
    if (name === "escape") return method(name, obj, (rs2, a) => (a[0] instanceof Markup ? a[0] : new Markup(escapedStr(rs2, pyStr(a[0], rs2)))));
    if (name === "unescape") return method(name, obj, (rs2) => (rs2.buildStr(obj.s.length), unescapeHtml(obj.s)));
    if (name === "striptags") return method(name, obj, (rs2) => striptags(rs2, obj.s));
    return MISSING;
  }
  if (obj instanceof Namespace) return obj.attrs.has(name) ? obj.attrs.get(name) : MISSING;
  if (obj instanceof LoopContext) return loopAttr(obj, name);
  if (obj instanceof Macro) {
    const d = obj.def;
    switch (name) {
      case "name":
        return d.name;
      case "arguments":
        return mkTuple(d.args.slice());
      case "catch_kwargs":
        return d.catchKwargs;
      case "catch_varargs":
        return d.catchVarargs;
      case "caller":
        return d.accessesCaller;
      case "explicit_caller":
        return d.args.includes("caller");
    }
    return MISSING;
  }
  if (obj instanceof PyRange) {
    switch (name) {
      case "start":
        return obj.start;
      case "stop":
        return obj.stop;
      case "step":
        return obj.step;
      case "count":
        return method(name, obj, (_rs, a) => {
          let n = 0;
          for (let i = 0; i < obj.length; i++) if (pyEq(obj.at(i), a[0])) n++;
          return n;
        });
      case "index":
        return method(name, obj, (_rs, a) => {
          for (let i = 0; i < obj.length; i++) if (pyEq(obj.at(i), a[0])) return i;
          throw valueError(`${pyRepr(a[0])} is not in range`);
        });
    }
    return MISSING;
  }
  if (obj instanceof DictView) {
    if (name === "mapping") return obj.dict;
    if (name === "isdisjoint" && obj.kind !== "values") {
      return method(name, obj, (rs2, a) => {
        const other = pyList(a[0], rs2);
        const mine = pyList(obj, rs2);
        return !other.some((x) => mine.some((y) => pyEq(x, y)));
      });
    }
    return MISSING;
  }
  if (obj instanceof Cycler) {
    switch (name) {
      case "items":
        rs.buildItems(obj.items.length);
        return mkTuple(obj.items.slice());
      case "pos":
        return obj.pos;
      case "current":
        return obj.items[obj.pos];
      case "reset":
        return method(name, obj, () => {
          obj.pos = 0;
          return null;
        });
      case "next":
        return method(name, obj, () => {
          const rv = obj.items[obj.pos];
          obj.pos = (obj.pos + 1) % obj.items.length;
          return rv;
        });
    }
    return MISSING;
  }
  if (obj instanceof Joiner) {
    if (name === "sep") return obj.sep;
    if (name === "used") return obj.used;
    return MISSING;
  }
  if (obj instanceof PyIter) {
    if (name === "send" || name === "throw" || name === "close") return unsupported(obj.typeName, name, obj);
    return MISSING;
  }
  if (obj instanceof PyFunction) {
    if (obj.typeName === "type" && name === "mro") return UNSAFE_MARK();
    if (obj.typeName === "type" && obj.name === "dict" && name === "fromkeys") return dictMethod(newDict(), "fromkeys");
    return MISSING;
  }
  void rs;
  return MISSING;
}

function unsupported(tn: string, name: string, self: unknown): PyFunction {
  return method(name, self, () => {
    throw new PyError("TemplateRuntimeError", `${tn}.${name} is not supported by deltatok`);
  });
}

function strBound(self: string | Markup, name: string): PyFunction {
  return method(name, self, (rs, a, k) => callStrMethod(rs, self, name, a, k));
}

/** A loop attribute (or MISSING): what getattr(loop, name) gives for names not starting with "_". */
export function loopAttr(lc: LoopContext, name: string): unknown {
  switch (name) {
    case "index0":
      return lc.index0;
    case "index":
      return lc.index;
    case "revindex":
      return lc.revindex;
    case "revindex0":
      return lc.revindex0;
    case "first":
      return lc.first;
    case "last":
      return lc.last;
    case "length":
      return lc.length;
    case "depth":
      return lc.depth;
    case "depth0":
      return lc.depth0;
    case "previtem":
      return lc.previtem;
    case "nextitem":
      return lc.nextitem;
    case "cycle":
      return method("cycle", lc, (_rs, a) => lc.cycle(a));
    case "changed":
      return method("changed", lc, (_rs, a) => lc.changed(a));
  }
  return MISSING;
}

function unescapeHtml(s: string): string {
  return s.replace(/&(#\d+|#[xX][0-9a-fA-F]+|amp|lt|gt|quot|apos|#39);/g, (m, g: string) => {
    if (g === "amp") return "&";
    if (g === "lt") return "<";
    if (g === "gt") return ">";
    if (g === "quot") return '"';
    if (g === "apos") return "'";
    if (g[1] === "x" || g[1] === "X") return String.fromCodePoint(parseInt(g.slice(2), 16));
    if (g[0] === "#") return String.fromCodePoint(parseInt(g.slice(1), 10));
    return m;
  });
}

/** markupsafe Markup.striptags (each step's copy, the words and the result charged to `g`) */
export function striptags(g: SizeGuard, value: string): string {
  let v = value;
  for (;;) {
    const start = v.indexOf("<!--");
    if (start < 0) break;
    const end = v.indexOf("-->", start);
    if (end < 0) break;
    g.charge(v.length);
    v = v.slice(0, start) + v.slice(end + 3);
  }
  for (;;) {
    const start = v.indexOf("<");
    if (start < 0) break;
    const end = v.indexOf(">", start);
    if (end < 0) break;
    g.charge(v.length);
    v = v.slice(0, start) + v.slice(end + 1);
  }
  const words = pySplitCount(v, null, -1);
  g.buildItems(words);
  g.buildStr(2 * v.length);
  v = pySplit(v, null, -1).join(" ");
  return unescapeHtml(v);
}

// ---- sandboxed attribute / item access -------------------------------------------------------

/** Marker: Python has the attribute but the sandbox forbids it. */
export const UNSAFE: unique symbol = Symbol("unsafe") as never;

export function unsafeUndefined(obj: unknown, name: string): Undefined {
  return new Undefined(`access to attribute ${pyRepr(name)} of ${pyRepr(typeName(obj))} object is unsafe.`, obj, name, "SecurityError");
}

/** Python obj[key] without the attribute fallback: value or MISSING (TypeError/LookupError). */
export function itemOf(obj: unknown, key: unknown): unknown {
  if (Array.isArray(obj)) {
    let i: number;
    if (typeof key === "number" && Number.isInteger(key)) i = key;
    else if (typeof key === "boolean") i = key ? 1 : 0;
    else if (typeof key === "bigint") return MISSING;
    else return MISSING;
    if (i < 0) i += obj.length;
    if (i < 0 || i >= obj.length) return MISSING;
    const v = obj[i];
    return v === undefined ? null : v;
  }
  if (typeof obj === "object" && obj !== null) {
    if (isDict(obj)) {
      try {
        return dictGet(obj, key);
      } catch {
        return MISSING;
      }
    }
    if (obj instanceof TemplateReference) {
      return typeof key === "string" ? obj.block(key) : MISSING;
    }
    if (obj instanceof PyRange) {
      if (!isInt(key) && typeof key !== "boolean") return MISSING;
      let i = Number(key);
      if (i < 0) i += obj.length;
      if (i < 0 || i >= obj.length) return MISSING;
      return obj.at(i);
    }
  }
  if (typeof obj === "string" || obj instanceof Markup) {
    const s = strOf(obj);
    let i: number;
    if (typeof key === "number" && Number.isInteger(key)) i = key;
    else if (typeof key === "boolean") i = key ? 1 : 0;
    else return MISSING;
    if (!hasSurrogates(s)) {
      if (i < 0) i += s.length;
      if (i < 0 || i >= s.length) return MISSING;
      const c = s[i] as string;
      return obj instanceof Markup ? new Markup(c) : c;
    }
    // by code point, without materializing the string's code points
    if (i < 0) i += cpLen(s);
    if (i < 0) return MISSING;
    const u = cpToUnit(s, i);
    if (u >= s.length) return MISSING;
    const hi = s.charCodeAt(u);
    const lo = s.charCodeAt(u + 1);
    const ch = hi >= 0xd800 && hi <= 0xdbff && lo >= 0xdc00 && lo <= 0xdfff ? s.slice(u, u + 2) : (s[u] as string);
    return obj instanceof Markup ? new Markup(ch) : ch;
  }
  return MISSING;
}

/** Sandboxed environment.getattr(obj, name) */
export function getAttr(rs: RenderState, obj: unknown, name: string): unknown {
  if (obj instanceof Undefined) {
    // Attributes the Undefined class itself has are found (and blocked); others raise.
    if (name.charCodeAt(0) === 95 && (UNDERSCORE_ATTRS["Undefined"] as ReadonlySet<string>).has(name)) return unsafeUndefined(obj, name);
    failUndefined(obj);
  }
  if (isPlainDict(obj)) {
    // Fast path for data dicts: Python methods of dict first, then the key.
    const a = attrOf(rs, obj, name);
    if (a !== MISSING) return a === UNSAFE ? unsafeUndefined(obj, name) : a;
    if (Object.prototype.hasOwnProperty.call(obj, name)) {
      const v = dataValue(obj[name]);
      if (v !== MISSING) return v;
    }
    return new Undefined(null, obj, name);
  }
  const a = attrOf(rs, obj, name);
  if (a === UNSAFE) return unsafeUndefined(obj, name);
  if (a !== MISSING) return a;
  const it = itemOf(obj, name);
  if (it !== MISSING) return it;
  return new Undefined(null, obj, name);
}

/** Sandboxed environment.getitem(obj, key) */
export function getItem(rs: RenderState, obj: unknown, key: unknown): unknown {
  if (obj instanceof Undefined) failUndefined(obj);
  const it = itemOf(obj, key);
  if (it !== MISSING) return it;
  if (isStr(key)) {
    const name = strOf(key);
    const a = attrOf(rs, obj, name);
    if (a === UNSAFE) return unsafeUndefined(obj, name);
    if (a !== MISSING) return a;
  }
  return new Undefined(null, obj, key);
}

