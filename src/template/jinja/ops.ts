/**
 * Python semantics of values: type names, truthiness, str()/repr(), ==/</in, len(), iteration,
 * membership, dict helpers, Markup escaping and the Undefined protocol (arithmetic: arith.ts).
 * Everything here is pure (no render state); what builds a value charges the render's build budget through a SizeGuard first (its units are here too).
 *
 * Layer: template/jinja.
 */
import { floatRepr } from "../../json/floatrepr.js";
import { PyFloat, keysOf } from "../../json/values.js";
import { PyError, typeError } from "./pyerror.js";
import { StrBuilder, TooLarge, cpArray, cpLen, pyStrCompare, pyStrRepr } from "./pystr.js";
import {
  Cycler,
  DictView,
  Joiner,
  MISSING,
  Markup,
  MissingType,
  Namespace,
  PyDict,
  PyFunction,
  PyIter,
  PyRange,
  Undefined,
  isTuple,
  mkTuple,
} from "./values.js";

/**
 * Build-budget units (RenderState.charge): one unit is one UTF-16 code unit of a string built,
 * at most 2 bytes of heap. Other builds are charged in the same units, by what they hold:
 */
/** one list or tuple slot, with a small element (a boxed number, a one-character string): ≤ 32 bytes */
export const ITEM_UNITS = 16;
/** one slot of an array of small integers (a range iterated): 8 bytes */
export const SLOT_UNITS = 4;
/** one entry of a template-made dict (map entry and key/value pair): ≤ 96 bytes */
export const ENTRY_UNITS = 48;
/** one template-made object (namespace, macro, loop context, generator, cycler, ...): ≤ 128 bytes */
export const OBJECT_UNITS = 64;
/** one piece appended to a string under construction (a rope node): ≤ 32 bytes */
export const PIECE_UNITS = 16;
/** one small tuple made for a pair (dict items, loop over a dict's items): ≤ 96 bytes */
export const TUPLE_UNITS = 48;

/**
 * What a render may still build: every operation that makes a string, a list or a dict charges
 * its size here before building it (so the total a render allocates is bounded), and a single
 * value is also capped (`maxOutputChars`). Implemented by RenderState.
 */
export interface SizeGuard {
  /** throws DT_TEMPLATE_BUDGET when a single string of `n` UTF-16 units would be too large (no charge) */
  checkSize(n: number): void;
  /** charges `n` build units; throws DT_TEMPLATE_BUDGET when the render's build budget would be exceeded */
  charge(n: number): void;
  /** a string of `n` UTF-16 units is about to be built: the per-value cap, then charge(n) */
  buildStr(n: number): void;
  /** a list of `n` items is about to be built: the per-value cap (maxChars / 16 items), then charged n × ITEM_UNITS */
  buildItems(n: number): void;
  /** counts `n` evaluation steps (the step budget) */
  addSteps(n: number): void;
  /** the per-value cap of strings, in UTF-16 units */
  readonly maxChars: number;
  /** build units the render's budget has left */
  room(): number;
}

const OBJECT_PROTO = Object.prototype;
const hasOwn = Object.prototype.hasOwnProperty;

/** Objects implemented by the runtime module register their Python type info here. */
export interface PyObjectInfo {
  typeName(v: object): string | undefined;
  objectTypeRepr(v: object): string | undefined;
  str(v: object): string | undefined;
}
const extraInfo: PyObjectInfo[] = [];
export function registerObjectInfo(i: PyObjectInfo): void {
  extraInfo.push(i);
}

// ---- classification ---------------------------------------------------------------------

/** A dict: plain data object or Map from the caller, or a PyDict made by the template. */
export function isDict(v: unknown): boolean {
  if (typeof v !== "object" || v === null) return false;
  if (v instanceof PyDict || v instanceof Map) return true;
  if (Array.isArray(v)) return false;
  const p = Object.getPrototypeOf(v);
  return p === OBJECT_PROTO || p === null;
}

export function isPlainDict(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const p = Object.getPrototypeOf(v);
  return p === OBJECT_PROTO || p === null;
}

export function isStr(v: unknown): v is string | Markup {
  return typeof v === "string" || v instanceof Markup;
}

export function strOf(v: string | Markup): string {
  return typeof v === "string" ? v : v.s;
}

export function isInt(v: unknown): v is number | bigint {
  return (typeof v === "number" && Number.isInteger(v)) || typeof v === "bigint";
}

export function isFloat(v: unknown): boolean {
  return (typeof v === "number" && !Number.isInteger(v)) || v instanceof PyFloat;
}

/** int, float or bool (Python numbers.Number) */
export function isNumber(v: unknown): boolean {
  return typeof v === "number" || typeof v === "bigint" || typeof v === "boolean" || v instanceof PyFloat;
}

/** Makes a Python float from a JS number (integral values are boxed). */
export function mkFloat(x: number): number | PyFloat {
  return Number.isInteger(x) ? new PyFloat(x) : x;
}

/** Normalizes an integer result (bigint inside the safe range becomes a number). */
export function mkInt(v: number | bigint): number | bigint {
  if (typeof v === "bigint") {
    if (v >= -9007199254740991n && v <= 9007199254740991n) return Number(v);
    return v;
  }
  return v === 0 ? 0 : v;
}

/** Float value of a number-like (int, float, bool). */
export function fval(v: unknown): number {
  if (typeof v === "number") return v;
  if (v instanceof PyFloat) return v.value;
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "boolean") return v ? 1 : 0;
  return NaN;
}

// ---- type names -------------------------------------------------------------------------

export function typeName(v: unknown): string {
  switch (typeof v) {
    case "string":
      return "str";
    case "number":
      return Number.isInteger(v) ? "int" : "float";
    case "bigint":
      return "int";
    case "boolean":
      return "bool";
    case "undefined":
      return "Undefined";
    case "function":
      return "function";
    case "object":
      break;
    default:
      return "object";
  }
  if (v === null) return "NoneType";
  if (Array.isArray(v)) return isTuple(v) ? "tuple" : "list";
  if (v instanceof PyFloat) return "float";
  if (isDict(v)) return "dict";
  if (v instanceof Undefined) return "Undefined";
  if (v instanceof Markup) return "Markup";
  if (v instanceof PyRange) return "range";
  if (v instanceof DictView) return "dict_" + v.kind;
  if (v instanceof PyIter) return v.typeName;
  if (v instanceof Namespace) return "Namespace";
  if (v instanceof Cycler) return "Cycler";
  if (v instanceof MissingType) return "MissingType";
  if (v instanceof Joiner) return "Joiner";
  if (v instanceof PyFunction) return v.typeName;
  for (const i of extraInfo) {
    const t = i.typeName(v);
    if (t !== undefined) return t;
  }
  return "object";
}

/** jinja2.utils.object_type_repr */
export function objectTypeRepr(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (v instanceof Markup) return "markupsafe.Markup object";
  if (v instanceof Undefined) return "jinja2.runtime.Undefined object";
  if (v instanceof Namespace) return "jinja2.utils.Namespace object";
  if (v instanceof Cycler) return "jinja2.utils.Cycler object";
  if (v instanceof Joiner) return "jinja2.utils.Joiner object";
  if (typeof v === "object") {
    for (const i of extraInfo) {
      const t = i.objectTypeRepr(v);
      if (t !== undefined) return t;
    }
  }
  return typeName(v) + " object";
}

// ---- Undefined --------------------------------------------------------------------------

export function undefinedMessage(u: Undefined): string {
  if (u.hint) return u.hint;
  if (u.obj === MISSING) return `${pyRepr(u.name)} is undefined`;
  if (typeof u.name !== "string") return `${objectTypeRepr(u.obj)} has no element ${pyRepr(u.name)}`;
  return `${pyStrRepr(objectTypeRepr(u.obj))} has no attribute ${pyStrRepr(u.name)}`;
}

export function failUndefined(u: Undefined): never {
  throw new PyError(u.exc, undefinedMessage(u), u.exc === "SecurityError" ? "DT_TEMPLATE_SANDBOX" : "DT_TEMPLATE_RUNTIME");
}

// ---- dict helpers -----------------------------------------------------------------------

const UNDEFINED_KEY = Symbol("undefined-key");

/** Normalized key for a Python hashable (1 == 1.0 == True share a key). */
export function mapKey(k: unknown): unknown {
  switch (typeof k) {
    case "string":
    case "number":
      return k === 0 ? 0 : k;
    case "boolean":
      return k ? 1 : 0;
    case "bigint":
      return mkInt(k);
    case "object":
      if (k === null) return null;
      if (k instanceof PyFloat) return k.value === 0 ? 0 : k.value;
      if (k instanceof Markup) return k.s;
      if (isTuple(k)) return "\u0000tuple:" + (k as unknown[]).map((x) => typeName(x) + ":" + String(mapKey(x))).join("\u0000");
      if (k instanceof PyRange) return k.length === 0 ? "\u0000range:0" : `\u0000range:${k.length}:${k.start}:${k.length > 1 ? k.step : 0}`;
      if (k instanceof Undefined) return UNDEFINED_KEY; // all Undefined objects hash and compare equal
      if (Array.isArray(k) || isDict(k) || (k instanceof DictView && k.kind !== "values")) throw typeError(`unhashable type: '${typeName(k)}'`);
      return k; // other objects hash by identity
    default:
      return k;
  }
}

export function newDict(): PyDict {
  return new PyDict();
}

/**
 * d[k] = v on a template dict (keeps the first key object, as Python does); a new entry is
 * charged to `g` (and a tuple key's normalized form, which the dict holds).
 */
export function dictSet(d: PyDict, k: unknown, v: unknown, g: SizeGuard): void {
  const nk = mapKey(k);
  const e = d.m.get(nk);
  if (e !== undefined) e[1] = v;
  else {
    g.charge(typeof nk === "string" && typeof k === "object" ? ENTRY_UNITS + nk.length : ENTRY_UNITS);
    d.m.set(nk, [k, v]);
  }
}

export function dictKeys(dIn: unknown): unknown[] {
  const d = dIn as object;
  if (d instanceof PyDict) {
    const out: unknown[] = [];
    for (const e of d.m.values()) out.push(e[0]);
    return out;
  }
  if (d instanceof Map) return Array.from(d.keys());
  return keysOf(d);
}

export function dictSize(dIn: unknown): number {
  const d = dIn as object;
  if (d instanceof PyDict) return d.m.size;
  if (d instanceof Map) return d.size;
  return Object.keys(d).length;
}

/** d[k] or MISSING (unhashable keys raise TypeError as in Python). */
export function dictGet(dIn: unknown, k: unknown): unknown {
  const d = dIn as object;
  if (d instanceof PyDict) {
    const e = d.m.get(mapKey(k));
    return e === undefined ? MISSING : e[1];
  }
  if (d instanceof Map) {
    if (d.has(k)) return d.get(k);
    mapKey(k);
    return MISSING;
  }
  if (typeof k === "string") {
    if (!hasOwn.call(d, k)) return MISSING;
    const v = (d as Record<string, unknown>)[k];
    return v === undefined || typeof v === "function" ? MISSING : v;
  }
  if (k instanceof Markup) return dictGet(d, k.s);
  mapKey(k); // raises for unhashable keys
  return MISSING;
}

export function dictItems(dIn: unknown): unknown[][] {
  const d = dIn as object;
  if (d instanceof PyDict) {
    const out: unknown[][] = [];
    for (const e of d.m.values()) out.push(mkTuple([e[0], e[1]]));
    return out;
  }
  if (d instanceof Map) {
    const out: unknown[][] = [];
    for (const [k, v] of d) out.push(mkTuple([k, v]));
    return out;
  }
  const ks = keysOf(d);
  const out: unknown[][] = new Array(ks.length);
  for (let i = 0; i < ks.length; i++) {
    const k = ks[i] as string;
    out[i] = mkTuple([k, (d as Record<string, unknown>)[k]]);
  }
  return out;
}

export function dictValues(dIn: unknown): unknown[] {
  const d = dIn as object;
  if (d instanceof PyDict) {
    const out: unknown[] = [];
    for (const e of d.m.values()) out.push(e[1]);
    return out;
  }
  if (d instanceof Map) return Array.from(d.values());
  const ks = keysOf(d);
  return ks.map((k) => (d as Record<string, unknown>)[k]);
}

/** A template dict from (key, value) pairs. */
export function dictFromPairs(pairs: Iterable<readonly [unknown, unknown]>, g: SizeGuard): PyDict {
  const d = new PyDict();
  for (const [k, v] of pairs) dictSet(d, k, v, g);
  return d;
}

/** Reads a plain-data value out of caller data: JS undefined/functions count as absent. */
export function dataValue(v: unknown): unknown {
  if (v === undefined || typeof v === "function" || typeof v === "symbol") return MISSING;
  return v;
}

// ---- truthiness, str, repr -------------------------------------------------------------

export function truthy(v: unknown): boolean {
  switch (typeof v) {
    case "boolean":
      return v;
    case "string":
      return v.length > 0;
    case "number":
      return v !== 0 && v === v;
    case "bigint":
      return v !== 0n;
    case "undefined":
      return false;
    case "object":
      break;
    default:
      return true;
  }
  if (v === null) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Undefined) return false;
  if (v instanceof PyFloat) return v.value !== 0;
  if (v instanceof Markup) return v.s.length > 0;
  if (v instanceof PyDict) return v.m.size > 0;
  if (v instanceof Map) return v.size > 0;
  if (v instanceof PyRange) return v.length > 0;
  if (v instanceof DictView) return dictSize(v.dict) > 0;
  if (isPlainDict(v)) {
    for (const _ in v) return true;
    return false;
  }
  for (const i of extraInfo) {
    const s = i.typeName(v);
    if (s === "LoopContext") return (v as { length: number }).length > 0;
  }
  return true;
}

const FAKE_ADDR = "0x7f0000000000";

/**
 * Python str(v). Containers print as their repr, built under `g` (the render's budget) when
 * given, else under a fixed cap (error messages).
 */
export function pyStr(v: unknown, g?: SizeGuard): string {
  switch (typeof v) {
    case "string":
      return v;
    case "number":
      if (Number.isInteger(v)) return v === 0 ? "0" : Number.isSafeInteger(v) ? String(v) : BigInt(v).toString();
      return floatRepr(v);
    case "boolean":
      return v ? "True" : "False";
    case "bigint":
      return v.toString();
    case "undefined":
      return "";
    case "object":
      break;
    default:
      return String(v);
  }
  if (v === null) return "None";
  if (v instanceof Undefined) return "";
  if (v instanceof Markup) return v.s;
  if (v instanceof PyFloat) return floatRepr(v.value);
  return pyRepr(v, g);
}

/** A repr without a render budget at hand (error messages) is refused beyond this many units. */
const UNGUARDED_REPR = 1 << 24;

/**
 * A repr being built: its pieces go to one chunked builder (no rope node per piece), and the
 * size is checked as it grows, so a nested or shared structure cannot print itself into memory.
 * The charge is twice the length (the chunks, then the joined result).
 */
class ReprOut {
  readonly b = new StrBuilder();
  readonly stack: unknown[] = [];
  /** pprint.saferepr: dicts (reached through dicts and lists) print with their items sorted by key */
  sortDicts = false;
  /** largest length allowed for the whole repr */
  private readonly cap: number;
  constructor(readonly g: SizeGuard | undefined) {
    this.cap = g === undefined ? UNGUARDED_REPR : Math.min(g.maxChars, Math.floor(g.room() / 2));
  }
  add(s: string): void {
    const b = this.b;
    b.add(s);
    if (b.length > this.cap) this.fail(b.length);
  }
  /** Adds the repr of a str. */
  addStr(s: string): void {
    let r: string;
    try {
      r = pyStrRepr(s, this.cap - this.b.length);
    } catch (e) {
      if (e instanceof TooLarge) this.fail(this.b.length + e.size);
      throw e;
    }
    this.add(r);
  }
  fail(length: number): never {
    const g = this.g;
    if (g !== undefined) {
      g.checkSize(length);
      g.charge(2 * length);
    }
    throw new PyError("BudgetExceeded", `repr too large (over ${UNGUARDED_REPR} characters)`, "DT_TEMPLATE_BUDGET");
  }
  done(): string {
    this.g?.charge(2 * this.b.length);
    return this.b.toString();
  }
}

/** pprint.saferepr(v): repr with dict items sorted by key (unsorted when keys do not compare), built under `g`. */
export function saferepr(v: unknown, g: SizeGuard): string {
  if (!Array.isArray(v) && !isDict(v)) return pyRepr(v, g);
  const o = new ReprOut(g);
  o.sortDicts = true;
  reprTo(v, o);
  return o.done();
}

/** A dict's items sorted by key as pprint sorts them (left unsorted when keys do not compare). */
export function sortedItems(d: unknown): unknown[][] {
  const items = dictItems(d);
  try {
    return items.slice().sort((a, b) => (pyCompare(a[0], b[0], "lt") < 0 ? -1 : pyCompare(b[0], a[0], "lt") < 0 ? 1 : 0));
  } catch {
    return items;
  }
}

/** Python repr(v); strings and containers are built under `g` (see pyStr). */
export function pyRepr(v: unknown, g?: SizeGuard): string {
  switch (typeof v) {
    case "string": {
      if (g === undefined && v.length < UNGUARDED_REPR / 8) return pyStrRepr(v);
      const o = new ReprOut(g);
      o.addStr(v);
      return o.done();
    }
    case "number":
    case "boolean":
    case "bigint":
      return pyStr(v);
    case "undefined":
      return "Undefined";
    case "object":
      break;
    default:
      return String(v);
  }
  if (v === null) return "None";
  if (v instanceof PyFloat) return floatRepr(v.value);
  if (v instanceof Undefined) return "Undefined";
  if (v instanceof Markup) {
    const o = new ReprOut(g);
    o.add("Markup(");
    o.addStr(v.s);
    o.add(")");
    return o.done();
  }
  const o = new ReprOut(g);
  reprTo(v, o);
  return o.done();
}

function reprTo(v: unknown, o: ReprOut): void {
  if (typeof v === "string") {
    o.addStr(v);
    return;
  }
  if (v instanceof Markup) {
    o.add("Markup(");
    o.addStr(v.s);
    o.add(")");
    return;
  }
  if (typeof v !== "object" || v === null || v instanceof PyFloat || v instanceof Undefined) {
    o.add(pyRepr(v));
    return;
  }
  const st = o.stack;
  if (Array.isArray(v)) {
    const tup = isTuple(v);
    if (st.includes(v)) {
      o.add(tup ? "(...)" : "[...]");
      return;
    }
    st.push(v);
    o.add(tup ? "(" : "[");
    for (let i = 0; i < v.length; i++) {
      if (i > 0) o.add(", ");
      reprTo(v[i], o);
    }
    st.pop();
    o.add(tup ? (v.length === 1 ? ",)" : ")") : "]");
    return;
  }
  if (isDict(v)) {
    if (st.includes(v)) {
      o.add("{...}");
      return;
    }
    st.push(v);
    o.add("{");
    let first = true;
    if (o.sortDicts) {
      for (const [k, x] of sortedItems(v)) {
        if (!first) o.add(", ");
        first = false;
        reprTo(k, o);
        o.add(": ");
        reprTo(x, o);
      }
    } else if (v instanceof PyDict || v instanceof Map) {
      for (const [k, x] of dictItems(v) as unknown[][]) {
        if (!first) o.add(", ");
        first = false;
        reprTo(k, o);
        o.add(": ");
        reprTo(x, o);
      }
    } else {
      for (const k of keysOf(v)) {
        const x = dataValue((v as Record<string, unknown>)[k]);
        if (x === MISSING) continue;
        if (!first) o.add(", ");
        first = false;
        o.addStr(k);
        o.add(": ");
        reprTo(x, o);
      }
    }
    st.pop();
    o.add("}");
    return;
  }
  // (inside these, saferepr falls back to repr)
  const sorting = o.sortDicts;
  if (v instanceof DictView) {
    const inner = v.kind === "keys" ? dictKeys(v.dict) : v.kind === "values" ? dictValues(v.dict) : dictItems(v.dict);
    o.sortDicts = false;
    o.add(`dict_${v.kind}(`);
    reprTo(inner, o);
    o.add(")");
    o.sortDicts = sorting;
    return;
  }
  if (v instanceof Namespace) {
    o.sortDicts = false;
    o.add("<Namespace ");
    reprTo(v.attrs, o);
    o.add(">");
    o.sortDicts = sorting;
    return;
  }
  o.add(objectRepr(v));
}

/** repr of the objects that are neither data nor containers. */
function objectRepr(v: object): string {
  if (v instanceof PyRange) return v.step === 1 ? `range(${v.start}, ${v.stop})` : `range(${v.start}, ${v.stop}, ${v.step})`;
  if (v instanceof PyIter) return v.typeName === "generator" ? `<generator object ${v.qualname} at ${FAKE_ADDR}>` : `<${v.typeName} object at ${FAKE_ADDR}>`;
  if (v instanceof MissingType) return "missing";
  if (v instanceof Cycler) return `<jinja2.utils.Cycler object at ${FAKE_ADDR}>`;
  if (v instanceof Joiner) return `<jinja2.utils.Joiner object at ${FAKE_ADDR}>`;
  if (v instanceof PyFunction) {
    if (v.typeName === "type") return `<class '${v.name}'>`;
    if (v.self !== MISSING) return `<built-in method ${v.name} of ${typeName(v.self)} object at ${FAKE_ADDR}>`;
    return `<function ${v.name} at ${FAKE_ADDR}>`;
  }
  for (const i of extraInfo) {
    const s = i.str(v);
    if (s !== undefined) return s;
  }
  return `<object object at ${FAKE_ADDR}>`;
}

// ---- equality and ordering --------------------------------------------------------------

export function numLike(v: unknown): boolean {
  const t = typeof v;
  return t === "number" || t === "bigint" || t === "boolean" || v instanceof PyFloat;
}

function numEq(a: unknown, b: unknown): boolean {
  if (typeof a === "bigint" || typeof b === "bigint") {
    const x = typeof a === "bigint" ? a : fval(a);
    const y = typeof b === "bigint" ? b : fval(b);
    // eslint-disable-next-line eqeqeq
    return x == y;
  }
  return fval(a) === fval(b);
}

/** Python a == b */
export function pyEq(a: unknown, b: unknown): boolean {
  if (a === b) return typeof a !== "number" || a === a;
  const ta = typeof a;
  const tb = typeof b;
  if (ta === "string") {
    if (tb === "string") return false;
    return b instanceof Markup ? a === b.s : false;
  }
  if (numLike(a)) return numLike(b) ? numEq(a, b) : false;
  if (a === null || b === null) return false;
  if (ta !== "object" || tb !== "object") {
    if (a instanceof Markup && tb === "string") return a.s === b;
    return false;
  }
  if (a instanceof Undefined || b instanceof Undefined) return a instanceof Undefined && b instanceof Undefined;
  if (a instanceof Markup) return b instanceof Markup ? a.s === b.s : false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || isTuple(a) !== isTuple(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !pyEq(a[i], b[i])) return false;
    return true;
  }
  if (isDict(a)) {
    if (!isDict(b)) return false;
    if (dictSize(a) !== dictSize(b)) return false;
    for (const k of dictKeys(a)) {
      const y = dictGet(b, k);
      if (y === MISSING) return false;
      const x = dictGet(a, k);
      if (x !== y && !pyEq(x, y)) return false;
    }
    return true;
  }
  if (a instanceof PyRange && b instanceof PyRange) {
    if (a.length !== b.length) return false;
    if (a.length === 0) return true;
    return a.start === b.start && (a.length === 1 || a.step === b.step);
  }
  if (a instanceof DictView && b instanceof DictView) {
    if (a.kind === "values" || b.kind !== a.kind) return false;
    return pyEq(new Set(dictKeys(a.dict)).size, new Set(dictKeys(b.dict)).size) && dictKeys(a.dict).every((k) => dictGet(b.dict, k) !== MISSING);
  }
  return false;
}

const OP_SYMBOL: Record<string, string> = { lt: "<", lteq: "<=", gt: ">", gteq: ">=" };

/** Python ordering: returns negative/zero/positive, or throws TypeError like Python. */
export function pyCompare(a: unknown, b: unknown, op: string): number {
  if (typeof a === "number" && typeof b === "number") return a < b ? -1 : a > b ? 1 : a === b ? 0 : NaN;
  if (a instanceof Undefined) failUndefined(a);
  if (b instanceof Undefined) failUndefined(b);
  if (numLike(a) && numLike(b)) {
    const x = typeof a === "bigint" ? a : fval(a);
    const y = typeof b === "bigint" ? b : fval(b);
    return x < y ? -1 : x > y ? 1 : x == y ? 0 : NaN; // eslint-disable-line eqeqeq
  }
  if (isStr(a) && isStr(b)) return pyStrCompare(strOf(a), strOf(b));
  if (Array.isArray(a) && Array.isArray(b) && isTuple(a) === isTuple(b)) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      if (pyEq(a[i], b[i])) continue;
      return pyCompare(a[i], b[i], op);
    }
    return a.length - b.length;
  }
  throw typeError(`'${OP_SYMBOL[op] ?? op}' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
}

/** Python sort key comparison (used by sort/dictsort/min/max): like `<`. */
export function pyLess(a: unknown, b: unknown): boolean {
  const c = pyCompare(a, b, "lt");
  return c < 0;
}

// ---- length, iteration, membership -------------------------------------------------------

export function pyLen(v: unknown): number {
  if (typeof v === "string") return cpLen(v);
  if (Array.isArray(v)) return v.length;
  if (v instanceof Markup) return cpLen(v.s);
  if (isDict(v)) return dictSize(v);
  if (v instanceof Undefined) return 0;
  if (v instanceof PyRange) return v.length;
  if (v instanceof DictView) return dictSize(v.dict);
  if (v instanceof Namespace || v === null || typeof v !== "object") throw typeError(`object of type '${typeName(v)}' has no len()`);
  for (const i of extraInfo) {
    if (i.typeName(v) === "LoopContext") return (v as { length: number }).length;
  }
  throw typeError(`object of type '${typeName(v)}' has no len()`);
}

/**
 * A Python iterable as an array snapshot, or the one-shot iterator itself. Snapshots made here
 * (a string's characters, a dict's keys or items, a range) are charged to `g` first.
 */
export function pyIter(v: unknown, g: SizeGuard): unknown[] | PyIter {
  if (Array.isArray(v)) return v;
  if (typeof v === "string") {
    g.buildItems(v.length);
    return cpArray(v);
  }
  if (isDict(v)) {
    g.buildItems(dictSize(v));
    return dictKeys(v);
  }
  if (v instanceof PyIter) return v;
  if (v instanceof Undefined) return [];
  if (v instanceof Markup) {
    g.buildItems(v.s.length);
    return cpArray(v.s);
  }
  if (v instanceof PyRange) {
    // (its integers are unboxed: a slot each)
    if (v.length > g.maxChars / 16) g.buildItems(v.length);
    g.charge(v.length * SLOT_UNITS);
    const out = new Array<number>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = v.at(i);
    return out;
  }
  if (v instanceof DictView) {
    const n = dictSize(v.dict);
    g.buildItems(n);
    if (v.kind === "items") g.charge(n * TUPLE_UNITS);
    return v.kind === "keys" ? dictKeys(v.dict) : v.kind === "values" ? dictValues(v.dict) : dictItems(v.dict);
  }
  if (typeof v === "object" && v !== null) {
    for (const i of extraInfo) {
      if (i.typeName(v) === "LoopContext") return new PyIter("LoopContext", (v as { iterate(): Iterator<unknown> }).iterate());
    }
  }
  throw typeError(`'${typeName(v)}' object is not iterable`);
}

/** list(v), charged to `g` (its slots, and whatever pyIter snapshots). */
export function pyList(v: unknown, g: SizeGuard): unknown[] {
  const it = pyIter(v, g);
  if (Array.isArray(it)) {
    if (it !== v) return it;
    g.buildItems(it.length);
    return it.slice();
  }
  const out: unknown[] = [];
  for (let r = it.next(); !r.done; r = it.next()) {
    g.charge(ITEM_UNITS);
    out.push(r.value);
    if ((out.length & 1023) === 0 && out.length * 16 > g.maxChars) g.buildItems(out.length);
  }
  return out;
}

/** True when `v` is iterable in Python (nothing is built). */
export function isIterable(v: unknown): boolean {
  if (Array.isArray(v) || typeof v === "string" || isDict(v) || v instanceof PyIter || v instanceof Undefined || v instanceof Markup || v instanceof PyRange || v instanceof DictView) return true;
  if (typeof v === "object" && v !== null) {
    for (const i of extraInfo) if (i.typeName(v) === "LoopContext") return true;
  }
  return false;
}

/** Python `item in container`. */
export function pyContains(container: unknown, item: unknown): boolean {
  if (typeof container === "string" || container instanceof Markup) {
    if (!isStr(item)) throw typeError(`'in <string>' requires string as left operand, not ${typeName(item)}`);
    return strOf(container).indexOf(strOf(item)) >= 0;
  }
  if (Array.isArray(container)) {
    for (let i = 0; i < container.length; i++) if (container[i] === item || pyEq(container[i], item)) return true;
    return false;
  }
  if (isDict(container)) return dictGet(container, item) !== MISSING;
  if (container instanceof Undefined) return false;
  if (container instanceof PyRange) {
    if (!isInt(item) && typeof item !== "boolean" && !isFloat(item)) return false;
    const x = fval(item);
    if (container.length === 0) return false;
    const off = (x - container.start) / container.step;
    return Number.isInteger(off) && off >= 0 && off < container.length;
  }
  if (container instanceof DictView) {
    if (container.kind === "keys") return dictGet(container.dict, item) !== MISSING;
    if (container.kind === "items") {
      if (!Array.isArray(item) || !isTuple(item) || item.length !== 2) return false;
      const v = dictGet(container.dict, item[0]);
      return v !== MISSING && pyEq(v, item[1]);
    }
    return dictValues(container.dict).some((x) => pyEq(x, item));
  }
  if (container instanceof PyIter) {
    for (let r = container.next(); !r.done; r = container.next()) if (pyEq(r.value, item)) return true;
    return false;
  }
  throw typeError(`argument of type '${typeName(container)}' is not iterable`);
}

// ---- markup -------------------------------------------------------------------------------

/** markupsafe.escape(v) */
export function markupEscape(v: unknown): Markup {
  if (v instanceof Markup) return v;
  const s = pyStr(v);
  return new Markup(htmlEscapeStr(s));
}

function htmlEscapeStr(s: string): string {
  if (!/[&<>"']/.test(s)) return s;
  return s.replace(/[&<>"']/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&#34;" : "&#39;"));
}
