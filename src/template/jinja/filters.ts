/**
 * Jinja2 3.1 builtin filters and tests (with HF's `tojson`), with Python semantics: lazy
 * generators where Jinja2 returns generators (map, select, items, unique, batch, ...), Python
 * sorting and comparison, Markup propagation, and Python's argument errors.
 *
 * Layer: template/jinja.
 */
import { PyFloat } from "../../json/values.js";
import { DumpsTooLarge, JsonDumpsError, dumps } from "../../json/dumps.js";
import { PyError, typeError } from "./pyerror.js";
import { ITEM_UNITS, PIECE_UNITS, TUPLE_UNITS, dictItems, dictKeys, dictSize, failUndefined, fval, isDict, isFloat, isInt, isIterable, isNumber, isStr, mapKey, mkFloat, mkInt, pyCompare, pyEq, pyIter, pyLen, pyList, pyRepr, pyStr, strOf, truthy, typeName } from "./ops.js";
import { bigOut, parsePyFloat, parsePyInt, pyAdd, pyMul, pySub } from "./arith.js";
import type { SizeGuard } from "./ops.js";
import { percentFormat, fmtF } from "./format.js";
import { cpArray, pyCapitalize, pyCenter, lineCount, pySplitlines } from "./pystr.js";
import { attrOf, caseMapped, escapedStr, replaced, stripped, striptags } from "./methods.js";
import { pformat, titleWords, urlQuote, wrapLine } from "./layout.js";
import type { RenderState } from "./runtime.js";
import { UNDERSCORE_ATTRS } from "./pyattrs-data.js";
import { callValue, pySlice } from "./runtime.js";
import { getAttr, getItem } from "./methods.js";
import { DictView, GROUP, MISSING, Markup, PyDict, PyIter, PyRange, Undefined, isTuple, mkTuple } from "./values.js";

import { NONE, fbind, noArgs, noSuchCallable } from "./bind.js";
import { addTest, callTestByName } from "./tests.js";
import type { FilterFn } from "./bind.js";
export type { FilterFn, TestFn } from "./bind.js";
export { TESTS } from "./tests.js";

/** markupsafe.soft_str */
function softStr(v: unknown, g: SizeGuard): string | Markup {
  if (typeof v === "string" || v instanceof Markup) return v;
  return pyStr(v, g);
}

/** markupsafe.escape of a str, charged to `g` when it grows. */
function escaped(g: SizeGuard, s: string): Markup {
  return new Markup(escapedStr(g, s));
}

function mapStr(v: string | Markup, f: (s: string) => string): string | Markup {
  return typeof v === "string" ? f(v) : new Markup(f(v.s));
}

function gen(typeName: string, fn: () => Generator<unknown>, qualname = ""): PyIter {
  return new PyIter(typeName, fn(), qualname);
}

/** Iterates any Python iterable lazily (what pyIter snapshots is charged to `g`). */
function* iterate(v: unknown, g: SizeGuard): Generator<unknown> {
  const it = pyIter(v, g);
  if (Array.isArray(it)) {
    yield* it;
    return;
  }
  for (let r = it.next(); !r.done; r = it.next()) yield r.value;
}

/** A case-insensitive sort or comparison key (the lowered copy is charged to `g`). */
function ignoreCase(v: unknown, g: SizeGuard): unknown {
  if (typeof v === "string") return caseMapped(g, v, lower);
  return v instanceof Markup ? new Markup(caseMapped(g, v.s, lower)) : v;
}

const lower = (s: string): string => s.toLowerCase();
const upper = (s: string): string => s.toUpperCase();

/** jinja2.filters._prepare_attribute_parts */
function attrParts(attr: unknown): unknown[] {
  if (attr === null || attr === MISSING) return [];

  if (typeof attr === "string") return attr.split(".").map((x) => (/^[0-9]+$/.test(x) && !hasNonAsciiDigit(x) ? Number(x) : x));
  return [attr];
}

function hasNonAsciiDigit(s: string): boolean {
  return /[^0-9]/.test(s);
}

function attrGetter(rs: RenderState, attribute: unknown, post: ((v: unknown) => unknown) | null, dflt: unknown = null): (item: unknown) => unknown {
  // (the parts of a dotted path: at most one per character)
  if (typeof attribute === "string") rs.buildItems(attribute.length + 1);
  const parts = attrParts(attribute);
  return (item: unknown) => {
    let it = item;
    for (const p of parts) {
      it = getItem(rs, it, p);
      if (dflt !== null && it instanceof Undefined) it = dflt;
    }
    return post !== null ? post(it) : it;
  };
}

function multiAttrGetter(rs: RenderState, attribute: unknown, post: ((v: unknown) => unknown) | null): (item: unknown) => unknown[] {
  // (the comma-separated paths and their parts: at most two per character)
  if (typeof attribute === "string") rs.buildItems(2 * attribute.length + 2);
  const split: unknown[] = typeof attribute === "string" ? attribute.split(",") : [attribute];
  const parts = split.map(attrParts);
  return (item: unknown) =>
    parts.map((ps) => {
      let it = item;
      for (const p of ps) it = getItem(rs, it, p);
      return post !== null ? post(it) : it;
    });
}

/** Stable sort with Python `<` on keys (TypeError for incomparable keys, as Python raises). */
function pySorted(rs: RenderState, items: unknown[], key: (v: unknown) => unknown, reverse: boolean): unknown[] {
  rs.addSteps(items.length);
  // the keyed copy (a slot and a pair per item) and the sorted result
  rs.buildItems(3 * items.length);
  const keyed = items.map((v) => ({ v, k: key(v) }));
  // V8 calls cmp(later, earlier) when inserting; Python's sort asks later < earlier first.
  const cmp = (a: { k: unknown }, b: { k: unknown }): number => {
    if (pyCompare(a.k, b.k, "lt") < 0) return -1; // a < b
    if (pyCompare(b.k, a.k, "lt") < 0) return 1; // b < a
    return 0;
  };
  keyed.sort(reverse ? (a, b) => cmp(b, a) : cmp);
  return keyed.map((x) => x.v);
}

function toInt(fname: string, v: unknown): number {
  if (typeof v === "number" && Number.isInteger(v)) return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "bigint") return Number(v);
  if (v instanceof Undefined) failUndefined(v);
  throw typeError(`'${typeName(v)}' object cannot be interpreted as an integer`);
  void fname;
}

function reversedOf(value: unknown, g: SizeGuard): unknown {
  if (Array.isArray(value)) {
    const arr = value;
    return gen(isTuple(arr) ? "reversed" : "list_reverseiterator", function* () {
      for (let i = arr.length - 1; i >= 0; i--) yield arr[i];
    });
  }
  if (value instanceof PyRange) {
    const r = value;
    return gen("range_iterator", function* () {
      for (let i = r.length - 1; i >= 0; i--) yield r.at(i);
    });
  }
  if (isDict(value)) {
    g.buildItems(dictSize(value));
    const ks = dictKeys(value);
    return gen("dict_reversekeyiterator", function* () {
      for (let i = ks.length - 1; i >= 0; i--) yield ks[i];
    });
  }
  if (value instanceof Undefined) {
    // Undefined has __len__ and __getitem__, so reversed() accepts it (and yields nothing)
    return gen("reversed", function* () {});
  }
  if (value instanceof DictView) {
    const arr = pyList(value, g);
    return gen(`dict_reverse${value.kind === "keys" ? "key" : value.kind === "values" ? "value" : "item"}iterator`, function* () {
      for (let i = arr.length - 1; i >= 0; i--) yield arr[i];
    });
  }
  return MISSING;
}

/** Python round(x, n) for floats (correctly rounded, half to even on the exact value). */
function roundFloat(x: number, n: number): number {
  if (!Number.isFinite(x)) return x;
  if (n >= 0) {
    if (n > 300) return x;
    const s = fmtF(x, n);
    const r = Number(s);
    return x < 0 || Object.is(x, -0) ? -r : r;
  }
  const p = Math.pow(10, -n);
  const q = x / p;
  let r = Math.round(q);
  if (Math.abs(q - Math.trunc(q)) === 0.5) r = 2 * Math.round(q / 2);
  return r * p;
}

function pyRound(g: SizeGuard, v: unknown, ndigits: unknown): unknown {
  if (ndigits === null) {
    if (isInt(v) || typeof v === "boolean") return typeof v === "boolean" ? (v ? 1 : 0) : v;
    if (isFloat(v)) {
      const x = fval(v);
      if (!Number.isFinite(x)) throw new PyError(x !== x ? "ValueError" : "OverflowError", x !== x ? "cannot convert float NaN to integer" : "cannot convert float infinity to integer");
      return mkInt(BigInt(roundFloat(x, 0)));
    }
    throw typeError(`type ${typeName(v)} doesn't define __round__ method`);
  }
  const n = toInt("round", ndigits);
  if (isInt(v) || typeof v === "boolean") {
    const iv = typeof v === "boolean" ? (v ? 1 : 0) : v;
    if (n >= 0) return iv;
    // |v| < 10 ** (its digits) ≤ 10 ** -n / 10, below half a unit: 0 (without 10 ** -n)
    if (-n > String(iv).replace("-", "").length) return 0;
    const p = 10n ** BigInt(-n);
    const b = BigInt(iv);
    let q = b / p;
    const rem = b - q * p;
    const twice = 2n * (rem < 0n ? -rem : rem);
    if (twice > p || (twice === p && q % 2n !== 0n)) q += b < 0n ? -1n : 1n;
    return bigOut(g, mkInt(q * p));
  }
  if (isFloat(v)) return mkFloat(roundFloat(fval(v), n));
  throw typeError(`type ${typeName(v)} doesn't define __round__ method`);
}

function tojsonImpl(rs: RenderState, value: unknown, ensureAscii: unknown, indent: unknown, separators: unknown, sortKeys: unknown): string {
  let ind: number | string | null = null;
  if (indent !== null) {
    if (isStr(indent)) ind = strOf(indent);
    else if (isInt(indent) || typeof indent === "boolean") {
      ind = Number(fval(indent));
      rs.buildStr(Math.max(0, ind));
    }
    else throw typeError(`can't multiply sequence by non-int of type '${typeName(indent)}'`);
  }
  let seps: [string, string] | null = null;
  if (separators !== null) {
    const arr = pyList(separators, rs);
    if (arr.length !== 2) throw new PyError("ValueError", `too many values to unpack (expected 2)`);
    seps = [pyStrOrErr(arr[0]), pyStrOrErr(arr[1])];
  }
  // the output is charged twice its length (its pieces, then the flattened text); past what the
  // budget leaves, dumps stops before building more
  try {
    const r = dumps(value, {
      ensure_ascii: truthy(ensureAscii),
      indent: ind,
      separators: seps,
      sort_keys: truthy(sortKeys),
      typeName,
      maxLength: Math.min(rs.maxChars, Math.floor(rs.room() / 2)),
      default: (v: unknown) => {
        if (v instanceof Markup) return v.s;
        if (v instanceof PyDict) {
          rs.buildItems(v.m.size);
          rs.charge(v.m.size * TUPLE_UNITS);
          return new Map(dictItems(v) as Array<[unknown, unknown]>);
        }
        if (isTuple(v)) {
          rs.buildItems((v as unknown[]).length);
          return Array.from(v as unknown[]);
        }
        throw new JsonDumpsError("TypeError", `Object of type ${typeName(v)} is not JSON serializable`);
      },
    });
    rs.charge(2 * r.length);
    return r;
  } catch (e) {
    if (e instanceof JsonDumpsError) throw new PyError(e.pyType, e.message);
    if (e instanceof DumpsTooLarge) {
      rs.checkSize(e.size);
      rs.charge(2 * e.size);
    }
    throw e;
  }
}

function pyStrOrErr(v: unknown): string {
  if (isStr(v)) return strOf(v);
  throw typeError(`sequence item 0: expected str instance, ${typeName(v)} found`);
}

function callFilterByName(rs: RenderState, name: unknown, value: unknown, args: unknown[], kwargs: Map<string, unknown> | null): unknown {
  const f = typeof name === "string" ? FILTERS.get(name) : undefined;
  if (f === undefined) throw noSuchCallable("filter", name);
  return f(rs, value, args, kwargs);
}

function selectOrReject(rs: RenderState, value: unknown, args: unknown[], kwargs: Map<string, unknown> | null, negate: boolean, lookupAttr: boolean): PyIter {
  return gen("generator", selectOrRejectGen, "select_or_reject");
  function* selectOrRejectGen(): Generator<unknown> {
    if (!truthy(value)) return;
    let trans: (x: unknown) => unknown = (x) => x;
    let off = 0;
    if (lookupAttr) {
      if (args.length === 0) throw new PyError("FilterArgumentError", "Missing parameter for attribute name");
      trans = attrGetter(rs, args[0], null);
      off = 1;
    }
    let func: (x: unknown) => boolean;
    if (args.length > off) {
      const name = args[off];
      const rest = args.slice(off + 1);
      func = (x) => callTestByName(rs, name, x, rest, kwargs);
    } else func = (x) => truthy(x);
    for (const item of iterate(value, rs)) {
      rs.addSteps(1);
      const ok = func(trans(item));
      if (ok !== negate) yield item;
    }
  }
}

const F: Record<string, FilterFn> = {
  abs: (rs, v, a, k) => {
    fbind("abs", a, k, []);
    if (typeof v === "number") return Number.isInteger(v) ? Math.abs(v) || 0 : Math.abs(v);
    if (typeof v === "bigint") return v < 0n ? bigOut(rs, mkInt(-v)) : v;
    if (typeof v === "boolean") return v ? 1 : 0;
    if (v instanceof PyFloat) return new PyFloat(Math.abs(v.value));
    throw typeError(`bad operand type for abs(): '${typeName(v)}'`);
  },
  attr: (rs, v, a, k) => {
    const [name] = fbind("do_attr", a, k, [["name", NONE]]);
    if (!isStr(name)) throw typeError("attribute name must be string, not '" + typeName(name) + "'");
    if (v instanceof Undefined) {
      const nm = strOf(name);
      // hasattr(undefined, name): dunders it lacks are AttributeError (False), others raise
      if (UNDERSCORE_ATTRS["Undefined"]?.has(nm)) return getAttr(rs, v, nm);
      if (nm.startsWith("__") && nm.endsWith("__")) return new Undefined(null, v, nm);
      failUndefined(v);
    }
    const at = attrOf(rs, v, strOf(name));
    if (at === MISSING) return new Undefined(null, v, strOf(name));
    return getAttr(rs, v, strOf(name));
  },
  batch: (rs, v, a, k) => {
    const [linecount, fill] = fbind("do_batch", a, k, [["linecount", NONE], ["fill_with", null]]);
    const n = toInt("batch", linecount);
    return gen("generator", function* () {
      let tmp: unknown[] = [];
      for (const item of iterate(v, rs)) {
        rs.addSteps(1);
        if (tmp.length === n) {
          yield tmp;
          tmp = [];
        }
        rs.charge(ITEM_UNITS);
        tmp.push(item);
      }
      if (tmp.length > 0) {
        if (fill !== null && tmp.length < n) {
          rs.buildItems(n - tmp.length);
          for (let i = tmp.length; i < n; i++) tmp.push(fill);
        }
        yield tmp;
      }
    }, "do_batch");
  },
  capitalize: (rs, v, a, k) => (noArgs("do_capitalize", a, k), mapStr(softStr(v, rs), (s) => caseMapped(rs, s, pyCapitalize))),
  center: (rs, v, a, k) => {
    const [width] = fbind("do_center", a, k, [["width", 80]]);
    const w = toInt("center", width);
    rs.buildStr(Math.max(0, w));
    return mapStr(softStr(v, rs), (s) => pyCenter(s, w, " "));
  },
  count: (_rs, v, a, k) => {
    if (a.length > 0 || (k !== null && k.size > 0)) throw typeError(`len() takes exactly one argument (${a.length + 1} given)`);
    return pyLen(v);
  },
  default: (_rs, v, a, k) => {
    const [dv, boolean] = fbind("do_default", a, k, [["default_value", ""], ["boolean", false]]);
    if (v instanceof Undefined || (truthy(boolean) && !truthy(v))) return dv;
    return v;
  },
  dictsort: (rs, v, a, k) => {
    const [cs, by, reverse] = fbind("do_dictsort", a, k, [["case_sensitive", false], ["by", "key"], ["reverse", false]]);
    let pos: number;
    if (by === "key") pos = 0;
    else if (by === "value") pos = 1;
    else throw new PyError("FilterArgumentError", 'You can only sort by either "key" or "value"');
    if (!isDict(v)) {
      if (v instanceof Undefined) failUndefined(v);
      throw new PyError("AttributeError", `'${typeName(v)}' object has no attribute 'items'`);
    }
    const n = dictSize(v);
    rs.buildItems(n);
    rs.charge(n * TUPLE_UNITS);
    const items = dictItems(v);
    return pySorted(rs, items, (it) => {
      const x = (it as unknown[])[pos];
      return truthy(cs) ? x : ignoreCase(x, rs);
    }, truthy(reverse));
  },
  escape: (rs, v, a, k) => (fbind("escape", a, k, []), v instanceof Markup ? v : escaped(rs, pyStr(v, rs))),
  filesizeformat: (_rs, v, a, k) => {
    const [binary] = fbind("do_filesizeformat", a, k, [["binary", false]]);
    const bytes = toFloatStrict(v);
    const base = truthy(binary) ? 1024 : 1000;
    const prefixes = truthy(binary) ? ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"] : ["kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"];
    if (bytes === 1) return "1 Byte";
    if (bytes < base) return `${Math.trunc(bytes)} Bytes`;
    let unit = 1;
    let prefix = "";
    for (let i = 0; i < prefixes.length; i++) {
      unit = Math.pow(base, i + 2);
      prefix = prefixes[i] as string;
      if (bytes < unit) return `${fmtF((base * bytes) / unit, 1)} ${prefix}`;
    }
    return `${fmtF((base * bytes) / unit, 1)} ${prefix}`;
  },
  first: (rs, v, a, k) => {
    fbind("sync_do_first", a, k, []);
    if (isStr(v)) {
      // the first code point (as pyIter would give it, a plain str), without the others
      const s = strOf(v);
      if (s.length === 0) return new Undefined("No first item, sequence was empty.");
      const c = s.charCodeAt(0);
      const d = s.charCodeAt(1);
      return c >= 0xd800 && c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff ? s.slice(0, 2) : s[0];
    }
    const it = pyIter(v, rs);
    if (Array.isArray(it)) return it.length > 0 ? it[0] : new Undefined("No first item, sequence was empty.");
    const r = it.next();
    return r.done ? new Undefined("No first item, sequence was empty.") : r.value;
  },
  float: (_rs, v, a, k) => {
    const [dflt] = fbind("do_float", a, k, [["default", new PyFloat(0)]]);
    if (v instanceof Undefined) failUndefined(v);
    if (isNumber(v)) return mkFloat(fval(v));
    if (isStr(v)) {
      const f = parsePyFloat(strOf(v));
      return f === null ? dflt : mkFloat(f);
    }
    return dflt;
  },
  forceescape: (rs, v, a, k) => (fbind("do_forceescape", a, k, []), escaped(rs, v instanceof Markup ? v.s : pyStr(v, rs))),
  format: (rs, v, a, k) => {
    if (a.length > 0 && k !== null && k.size > 0) throw new PyError("FilterArgumentError", "can't handle positional and keyword arguments at the same time");
    const fmtv = softStr(v, rs);
    if (k !== null && k.size > 0) return percentFormat(fmtv, new Map(k), rs);
    return percentFormat(fmtv, mkTuple(a.slice()), rs);
  },
  groupby: (rs, v, a, k) => {
    const [attribute, dflt, cs] = fbind("sync_do_groupby", a, k, [["attribute", NONE], ["default", null], ["case_sensitive", false]]);
    const expr = attrGetter(rs, attribute, truthy(cs) ? null : (x) => ignoreCase(x, rs), dflt);
    const sorted = pySorted(rs, pyList(v, rs), expr, false);
    // the groups' lists hold every item once; each group is a tuple in the result list
    rs.buildItems(sorted.length);
    const out: unknown[] = [];
    const outExpr = attrGetter(rs, attribute, null, dflt);
    let curKey: unknown = MISSING;
    let cur: unknown[] = [];
    const group = (): void => {
      rs.charge(ITEM_UNITS + TUPLE_UNITS);
      out.push(groupTuple(truthy(cs) ? curKey : outExpr(cur[0]), cur));
    };
    for (const item of sorted) {
      const key = expr(item);
      if (curKey !== MISSING && pyEq(key, curKey)) cur.push(item);
      else {
        if (curKey !== MISSING) group();
        curKey = key;
        cur = [item];
      }
    }
    if (curKey !== MISSING) group();
    return out;
  },
  indent: (rs, v, a, k) => {
    const [width, first, blank] = fbind("do_indent", a, k, [["width", 4], ["first", false], ["blank", false]]);
    const indention = isStr(width) ? strOf(width) : strOf(pyMul(" ", width, rs) as string);
    if (!isStr(v)) {
      // `s += "\n"` then `s.splitlines()` on a non-str, as Python fails
      if (v instanceof Undefined) failUndefined(v);
      if (Array.isArray(v) && !isTuple(v)) throw new PyError("AttributeError", "'list' object has no attribute 'splitlines'");
      if (isTuple(v)) throw typeError('can only concatenate tuple (not "str") to tuple');
      throw typeError(`unsupported operand type(s) for +=: '${typeName(v)}' and 'str'`);
    }
    const isM = v instanceof Markup;
    const ind = isM && !(width instanceof Markup) ? escaped(rs, indention).s : indention;
    const s = strOf(v) + "\n";
    let rv: string;
    // the lines (a slot, and a copy with the indentation, each) and the result, before any is built
    const nl = lineCount(s);
    rs.buildItems(2 * nl);
    rs.buildStr(s.length + (nl + 1) * ind.length);
    const lines = pySplitlines(s, false);
    if (truthy(blank)) rv = lines.join("\n" + ind);
    else {
      rv = lines.shift() ?? "";
      if (lines.length > 0) rv += "\n" + lines.map((line) => (line ? ind + line : line)).join("\n");
    }
    if (truthy(first)) rv = ind + rv;
    rs.checkSize(rv.length);
    return isM ? new Markup(rv) : rv;
  },
  int: (rs, v, a, k) => {
    const [dflt, base] = fbind("do_int", a, k, [["default", 0], ["base", 10]]);
    if (v instanceof Undefined) failUndefined(v);
    if (isStr(v)) {
      const b = toInt("int", base);
      const r = parsePyInt(strOf(v), b);
      if (r !== null) return bigOut(rs, r);
      const f = parsePyFloat(strOf(v));
      if (f !== null && Number.isFinite(f)) return mkInt(BigInt(Math.trunc(f)));
      return dflt;
    }
    if (isInt(v)) return v;
    if (typeof v === "boolean") return v ? 1 : 0;
    if (isFloat(v)) {
      const x = fval(v);
      if (x !== x) return dflt;
      if (!Number.isFinite(x)) throw new PyError("OverflowError", "cannot convert float infinity to integer");
      return mkInt(BigInt(Math.trunc(x)));
    }
    return dflt;
  },
  items: (rs, v, a, k) => {
    fbind("do_items", a, k, []);
    return gen("generator", function* () {
      if (v instanceof Undefined) return;
      if (!isDict(v)) throw typeError("Can only get item pairs from a mapping.");
      const n = dictSize(v);
      rs.buildItems(n);
      rs.charge(n * TUPLE_UNITS);
      yield* dictItems(v);
    }, "do_items");
  },
  join: (rs, v, a, k) => {
    const [d, attribute] = fbind("sync_do_join", a, k, [["d", ""], ["attribute", null]]);
    let items = pyList(v, rs);
    if (attribute !== null) {
      const g = attrGetter(rs, attribute, null);
      rs.buildItems(items.length);
      items = items.map(g);
    }
    rs.addSteps(items.length);
    const sep = pyStr(d, rs);
    let total = 0;
    rs.buildItems(items.length);
    const parts = items.map((x) => {
      const s = pyStr(x, rs);
      total += s.length + sep.length;
      return s;
    });
    rs.buildStr(Math.max(0, total - sep.length));
    return parts.join(sep);
  },
  last: (rs, v, a, k) => {
    fbind("do_last", a, k, []);
    if (typeof v === "string" || v instanceof Markup) {
      // the last code point, without the others
      const s = strOf(v);
      if (s.length === 0) return new Undefined("No last item, sequence was empty.");
      const d = s.charCodeAt(s.length - 1);
      const c = s.charCodeAt(s.length - 2);
      const ch = d >= 0xdc00 && d <= 0xdfff && c >= 0xd800 && c <= 0xdbff ? s.slice(-2) : (s[s.length - 1] as string);
      return v instanceof Markup ? new Markup(ch) : ch;
    }
    const r = reversedOf(v, rs);
    if (r === MISSING) throw typeError(`'${typeName(v)}' object is not reversible`);
    const n = (r as PyIter).next();
    return n.done ? new Undefined("No last item, sequence was empty.") : n.value;
  },
  length: (_rs, v, a, k) => {
    if (a.length > 0 || (k !== null && k.size > 0)) throw typeError(`len() takes exactly one argument (${a.length + 1} given)`);
    return pyLen(v);
  },
  list: (rs, v, a, k) => {
    fbind("sync_do_list", a, k, []);
    const r = pyList(v, rs);
    rs.addSteps(r.length);
    return r;
  },
  lower: (rs, v, a, k) => (noArgs("do_lower", a, k), mapStr(softStr(v, rs), (s) => caseMapped(rs, s, lower))),
  map: (rs, v, a, k) =>
    gen("generator", function* () {
      if (!truthy(v)) return;
      let func: (x: unknown) => unknown;
      if (a.length === 0 && k !== null && k.has("attribute")) {
        const kw = new Map(k);
        const attribute = kw.get("attribute");
        kw.delete("attribute");
        const dflt = kw.has("default") ? kw.get("default") : null;
        kw.delete("default");
        if (kw.size > 0) throw new PyError("FilterArgumentError", `Unexpected keyword argument ${pyRepr(kw.keys().next().value)}`);
        func = attrGetter(rs, attribute, null, dflt);
      } else {
        if (a.length === 0) throw new PyError("FilterArgumentError", "map requires a filter argument");
        const name = a[0];
        const rest = a.slice(1);
        func = (x) => callFilterByName(rs, name, x, rest, k);
      }
      for (const item of iterate(v, rs)) {
        rs.addSteps(1);
        yield func(item);
      }
    }, "sync_do_map"),
  max: (rs, v, a, k) => minMax(rs, v, a, k, "do_max", true),
  min: (rs, v, a, k) => minMax(rs, v, a, k, "do_min", false),
  pprint: (rs, v, a, k) => (fbind("do_pprint", a, k, []), pformat(rs, v, 0, 0)),
  random: (rs, v, a, k) => {
    fbind("do_random", a, k, []);
    const seq = pyList(v, rs);
    if (seq.length === 0) return new Undefined("No random item, sequence was empty.");
    return seq[Math.floor(Math.random() * seq.length)];
  },
  reject: (rs, v, a, k) => selectOrReject(rs, v, a, k, true, false),
  rejectattr: (rs, v, a, k) => selectOrReject(rs, v, a, k, true, true),
  replace: (rs, v, a, k) => {
    const [old, nw, count] = fbind("do_replace", a, k, [["old", NONE], ["new", NONE], ["count", null]]);
    const s = pyStr(v, rs);
    const o = pyStr(old, rs);
    const n = pyStr(nw, rs);
    const c = count === null ? -1 : toInt("replace", count);
    return replaced(rs, s, o, n, c);
  },
  reverse: (rs, v, a, k) => {
    fbind("do_reverse", a, k, []);
    if (isStr(v)) {
      // the code points, then the reversed text
      const s = strOf(v);
      rs.buildItems(s.length);
      rs.buildStr(s.length);
      const r = cpArray(s).reverse().join("");
      return v instanceof Markup ? new Markup(r) : r;
    }
    const r = reversedOf(v, rs);
    if (r !== MISSING) return r;
    try {
      return pyList(v, rs).reverse();
    } catch (e) {
      if (e instanceof PyError && e.pyType === "TypeError") throw new PyError("FilterArgumentError", "argument must be iterable");
      throw e;
    }
  },
  round: (rs, v, a, k) => {
    const [precision, method] = fbind("do_round", a, k, [["precision", 0], ["method", "common"]]);
    if (method !== "common" && method !== "ceil" && method !== "floor") throw new PyError("FilterArgumentError", "method must be common, ceil or floor");
    if (method === "common") return pyRound(rs, v, precision);
    if (v instanceof Undefined) failUndefined(v);
    const p = toInt("round", precision);
    const scale = Math.pow(10, p);
    const x = fval(v) * scale;
    const r = method === "ceil" ? Math.ceil(x) : Math.floor(x);
    return mkFloat(r / scale);
  },
  safe: (rs, v, a, k) => (fbind("do_mark_safe", a, k, []), v instanceof Markup ? v : new Markup(pyStr(v, rs))),
  select: (rs, v, a, k) => selectOrReject(rs, v, a, k, false, false),
  selectattr: (rs, v, a, k) => selectOrReject(rs, v, a, k, false, true),
  slice: (rs, v, a, k) => {
    const [slices, fill] = fbind("sync_do_slice", a, k, [["slices", NONE], ["fill_with", null]]);
    const n = toInt("slice", slices);
    return gen("generator", function* () {
      const seq = pyList(v, rs);
      rs.addSteps(seq.length);
      const length = seq.length;
      const per = Math.floor(length / n);
      const extra = length % n;
      let offset = 0;
      for (let i = 0; i < n; i++) {
        const start = offset + i * per;
        if (i < extra) offset++;
        const end = offset + (i + 1) * per;
        // (each slice: its items and one more slot, for the list and a fill value)
        rs.buildItems(Math.max(0, end - start) + 1);
        const tmp = seq.slice(start, end);
        if (fill !== null && i >= extra) tmp.push(fill);
        yield tmp;
      }
    }, "sync_do_slice");
  },
  sort: (rs, v, a, k) => {
    const [reverse, cs, attribute] = fbind("do_sort", a, k, [["reverse", false], ["case_sensitive", false], ["attribute", null]]);
    const key = multiAttrGetter(rs, attribute, truthy(cs) ? null : (x) => ignoreCase(x, rs));
    return pySorted(rs, pyList(v, rs), key, truthy(reverse));
  },
  string: (rs, v, a, k) => {
    if (a.length > 0 || (k !== null && k.size > 0)) throw typeError(`soft_str() takes exactly one argument (${a.length + 1} given)`);
    return softStr(v, rs);
  },
  striptags: (rs, v, a, k) => (fbind("do_striptags", a, k, []), striptags(rs, v instanceof Markup ? v.s : pyStr(v, rs))),
  sum: (rs, v, a, k) => {
    const [attribute, start] = fbind("sync_do_sum", a, k, [["attribute", null], ["start", 0]]);
    let items = pyList(v, rs);
    if (attribute !== null) {
      rs.buildItems(items.length);
      items = items.map(attrGetter(rs, attribute, null));
    }
    if (isStr(start)) throw typeError("sum() can't sum strings [use ''.join(seq) instead]");
    rs.addSteps(items.length);
    let acc: unknown = start;
    for (const x of items) acc = pyAdd(acc, x, rs);
    return acc;
  },
  title: (rs, v, a, k) => {
    noArgs("do_title", a, k);
    return mapStr(softStr(v, rs), (s) => caseMapped(rs, s, titleWords));
  },
  tojson: (rs, v, a, k) => {
    const [ensureAscii, indent, separators, sortKeys] = fbind("tojson", a, k, [["ensure_ascii", false], ["indent", null], ["separators", null], ["sort_keys", false]]);
    return tojsonImpl(rs, v, ensureAscii, indent, separators, sortKeys);
  },
  trim: (rs, v, a, k) => {
    const [chars] = fbind("do_trim", a, k, [["chars", null]]);
    let c: string | null = null;
    if (chars !== null) {
      if (!isStr(chars)) throw typeError("strip arg must be None or str");
      c = strOf(chars);
    }
    return mapStr(softStr(v, rs), (s) => stripped(rs, s, c, true, true));
  },
  truncate: (rs, v, a, k) => {
    const [length, killwords, end, leeway] = fbind("do_truncate", a, k, [["length", 255], ["killwords", false], ["end", "..."], ["leeway", null]]);
    const lw = leeway === null ? 5 : leeway;
    const endLen = pyLen(end);
    if (pyCompare(length, endLen, "gteq") < 0) throw new PyError("AssertionError", `expected length >= ${endLen}, got ${pyStr(length)}`);
    if (pyCompare(lw, 0, "gteq") < 0) throw new PyError("AssertionError", `expected leeway >= 0, got ${pyStr(lw)}`);
    if (pyCompare(pyLen(v), pyAdd(length, lw, rs), "lteq") <= 0) return v;
    const head = pySlice(v, null, pySub(length, endLen, rs), null, rs);
    if (truthy(killwords)) return pyAdd(head, end, rs);
    const parts = callValue(rs, getAttr(rs, head, "rsplit"), [" ", 1], null);
    return pyAdd(getItem(rs, parts, 0), end, rs);
  },
  unique: (rs, v, a, k) => {
    const [cs, attribute] = fbind("sync_do_unique", a, k, [["case_sensitive", false], ["attribute", null]]);
    const getter = attrGetter(rs, attribute, truthy(cs) ? null : (x) => ignoreCase(x, rs));
    return gen("generator", function* () {
      // a set of the keys seen, by their normalized form (1 == 1.0 == True, Markup == str, as
      // Python hashes them); a NaN equals nothing, so each is new
      const seen = new Set<unknown>();
      for (const item of iterate(v, rs)) {
        rs.addSteps(1);
        const key = getter(item);
        if (!isHashable(key)) throw typeError(`unhashable type: '${typeName(key)}'`);
        const nk = mapKey(key);
        if (typeof nk === "number" && nk !== nk) {
          yield item;
          continue;
        }
        if (!seen.has(nk)) {
          rs.charge(ITEM_UNITS);
          seen.add(nk);
          yield item;
        }
      }
    }, "sync_do_unique");
  },
  upper: (rs, v, a, k) => (noArgs("do_upper", a, k), mapStr(softStr(v, rs), (s) => caseMapped(rs, s, upper))),
  urlencode: (rs, v, a, k) => {
    fbind("do_urlencode", a, k, []);
    if (isStr(v) || !isIterable(v)) return urlQuote(rs, v, false);
    if (isDict(v)) {
      rs.buildItems(dictSize(v));
      rs.charge(dictSize(v) * TUPLE_UNITS);
    }
    const items = isDict(v) ? dictItems(v) : pyList(v, rs);
    rs.buildItems(items.length);
    const parts = items.map((it) => {
      const [kk, vv] = pyList(it, rs);
      return `${urlQuote(rs, kk, true)}=${urlQuote(rs, vv, true)}`;
    });
    let n = 0;
    for (const p of parts) n += p.length + 1;
    rs.buildStr(Math.max(0, n - 1));
    return parts.join("&");
  },
  urlize: () => {
    throw new PyError("TemplateRuntimeError", "the urlize filter is not supported by deltatok");
  },
  wordcount: (rs, v, a, k) => {
    fbind("do_wordcount", a, k, []);
    const sv = softStr(v, rs);
    const s = sv instanceof Markup ? sv.s : sv;
    // counted match by match (no array of every word)
    const re = /[\p{L}\p{N}_]+/gu;
    let n = 0;
    while (re.exec(s) !== null) n++;
    return n;
  },
  wordwrap: (rs, v, a, k) => {
    const [width, breakLong, wrapstring] = fbind("do_wordwrap", a, k, [["width", 79], ["break_long_words", true], ["wrapstring", null], ["break_on_hyphens", true]]);
    const w = toInt("wordwrap", width);
    const sep = wrapstring === null ? "\n" : pyStr(wrapstring, rs);
    const s = pyStr(v, rs);
    rs.buildItems(lineCount(s));
    const wrapped: string[] = [];
    let n = 0;
    for (const line of pySplitlines(s, false)) {
      // each wrapped line is charged as wrapLine makes it (a slot, its text and a separator)
      const r = wrapLine(rs, line, w, truthy(breakLong), sep.length).join(sep);
      wrapped.push(r);
      n += r.length + sep.length;
    }
    rs.buildStr(Math.max(0, n - sep.length));
    return wrapped.join(sep);
  },
  xmlattr: (rs, v, a, k) => {
    const [autospace] = fbind("do_xmlattr", a, k, [["autospace", true]]);
    if (!isDict(v)) throw new PyError("AttributeError", `'${typeName(v)}' object has no attribute 'items'`);
    const items: string[] = [];
    rs.buildItems(dictSize(v));
    rs.charge(dictSize(v) * TUPLE_UNITS);
    let n = 0;
    for (const it of dictItems(v)) {
      const [key, val] = it as unknown[];
      if (val === null || val instanceof Undefined) continue;
      const ks = pyStr(key, rs);
      if (/[\s/>=]/.test(ks)) throw new PyError("ValueError", `Invalid character in attribute name: ${pyRepr(key)}`);
      const item = `${key instanceof Markup ? key.s : escaped(rs, ks).s}="${val instanceof Markup ? val.s : escaped(rs, pyStr(val, rs)).s}"`;
      rs.charge(item.length + PIECE_UNITS);
      items.push(item);
      n += item.length + 1;
    }
    rs.buildStr(n);
    let rv = items.join(" ");
    if (truthy(autospace) && rv) rv = " " + rv;
    return rv;
  },
};
F["d"] = F["default"] as FilterFn;
F["e"] = F["escape"] as FilterFn;

function isHashable(v: unknown): boolean {
  return !(Array.isArray(v) && !isTuple(v)) && !isDict(v);
}

function groupTuple(key: unknown, list: unknown[]): unknown[] {
  const t = mkTuple([key, list]);
  (t as unknown as { [GROUP]: boolean })[GROUP] = true;
  return t;
}

function toFloatStrict(v: unknown): number {
  if (isNumber(v)) return fval(v);
  if (isStr(v)) {
    const f = parsePyFloat(strOf(v));
    if (f === null) throw new PyError("ValueError", `could not convert string to float: ${pyRepr(v)}`);
    return f;
  }
  if (v instanceof Undefined) failUndefined(v);
  throw typeError(`float() argument must be a string or a real number, not '${typeName(v)}'`);
}

function minMax(rs: RenderState, v: unknown, a: unknown[], k: Map<string, unknown> | null, fname: string, isMax: boolean): unknown {
  const [cs, attribute] = fbind(fname, a, k, [["case_sensitive", false], ["attribute", null]]);
  const items = pyList(v, rs);
  if (items.length === 0) return new Undefined("No aggregated item, sequence was empty.");
  rs.addSteps(items.length);
  const key = attrGetter(rs, attribute, truthy(cs) ? null : (x) => ignoreCase(x, rs));
  let best = items[0];
  let bestKey = key(best);
  for (let i = 1; i < items.length; i++) {
    const kk = key(items[i]);
    const better = isMax ? pyCompare(kk, bestKey, "gt") > 0 : pyCompare(kk, bestKey, "lt") < 0;
    if (better) {
      best = items[i];
      bestKey = kk;
    }
  }
  return best;
}

export const FILTERS: ReadonlyMap<string, FilterFn> = new Map(Object.entries(F));

// the `filter` test needs the filter table
addTest("filter", (_rs, v, a, k) => (fbind("test_filter", a, k, []), typeof v === "string" && FILTERS.has(v)));
