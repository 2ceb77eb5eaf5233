/**
 * Observed values: shapes, snapshots of caller data (whole-value observations and replayable
 * copies) and their comparison, and state values (SV) standing for template objects.
 *
 * Layer: template/incremental.
 */
import { PyFloat, keysOf } from "../../json/values.js";
import { isDict, isPlainDict, undefinedMessage } from "../jinja/ops.js";
import { Markup, PyDict, PyRange, Undefined, isTuple, mkTuple } from "../jinja/values.js";
import { hasOwn, TrackBudget, TRACK_SNAP, SeqView } from "./paths.js";

// ---- shapes and values ---------------------------------------------------------------------

export const TAG_LIST: unique symbol = Symbol("list") as never;
export const TAG_TUPLE: unique symbol = Symbol("tuple") as never;
export const TAG_DICT: unique symbol = Symbol("dict") as never;

/** Never equal to anything (a value deltatok cannot compare or replay). */
export class Never {}
export const NEVER = new Never();

/** What an observation of a value records: primitives themselves, containers their type. */
export function shapeOf(v: unknown): unknown {
  if (typeof v !== "object" || v === null) return v;
  if (Array.isArray(v)) return isTuple(v) ? TAG_TUPLE : TAG_LIST;
  if (v instanceof SeqView) return v.tuple ? TAG_TUPLE : TAG_LIST;
  if (v instanceof PyFloat || v instanceof Markup) return v;
  if (isDict(v)) return TAG_DICT;
  return NEVER;
}

/** Python-exact sameness of a current value and a recorded shape/primitive. */
export function sameShape(cur: unknown, rec: unknown): boolean {
  if (cur === rec) return typeof rec === "number" ? Object.is(cur, rec) : rec !== NEVER;
  switch (typeof rec) {
    case "number":
      return typeof cur === "number" && Object.is(cur, rec);
    case "symbol":
      return shapeOf(cur) === rec;
    case "object":
      if (rec instanceof PyFloat) return cur instanceof PyFloat && Object.is(cur.value, rec.value);
      if (rec instanceof Markup) return cur instanceof Markup && cur.s === rec.s;
      return false;
    default:
      return false;
  }
}

export function isContainer(v: unknown): boolean {
  if (typeof v !== "object" || v === null) return false;
  return Array.isArray(v) || isDict(v);
}

// ---- snapshots (whole-value observations and replayable copies) ------------------------------

/** Thrown (one shared instance, no stack trace) by snapshot() for values that are not data. */
export const UNSNAPPABLE: unique symbol = Symbol("unsnappable") as never;
export const FN_MARK = Symbol("fn");

/**
 * A deep copy in the same value model (so it can be handed back to the template), exact in
 * every Python-observable respect: types (list/tuple, int/float, str/Markup), dict key order and
 * key objects. Strings are shared. Throws UNSNAPPABLE for values that are not plain data.
 */
export function snapshot(v: unknown, depth = 0): unknown {
  if (typeof v !== "object" || v === null) {
    if (typeof v === "function" || typeof v === "symbol") return FN_MARK;
    return v;
  }
  if (depth > 200) throw UNSNAPPABLE;
  if (v instanceof PyFloat || v instanceof Markup || v instanceof PyRange) return v;
  if (v instanceof SeqView) return snapshot(v.toArray(), depth);
  // (a tracked render's copies count against its tracking bound, before they are made)
  const sb = SNAP_BUDGET;
  if (Array.isArray(v)) {
    sb?.grow(TRACK_SNAP + 8 * v.length);
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = snapshot(v[i], depth + 1);
    return isTuple(v) ? mkTuple(out) : out;
  }
  if (v instanceof PyDict) {
    sb?.grow(TRACK_SNAP + 48 * v.m.size);
    const d = new PyDict();
    for (const [nk, e] of v.m) d.m.set(nk, [snapshot(e[0], depth + 1), snapshot(e[1], depth + 1)]);
    return d;
  }
  if (v instanceof Map) {
    sb?.grow(TRACK_SNAP + 48 * v.size);
    const d = new Map<unknown, unknown>();
    for (const [k, x] of v) d.set(snapshot(k, depth + 1), snapshot(x, depth + 1));
    return d;
  }
  if (isPlainDict(v)) {
    const ks = keysOf(v);
    sb?.grow(TRACK_SNAP + 48 * ks.length);
    const o: Record<string, unknown> = Object.create(Object.getPrototypeOf(v) as object | null) as Record<string, unknown>;
    for (const k of ks) {
      const x = v[k];
      o[k] = typeof x === "function" || typeof x === "symbol" ? undefined : snapshot(x, depth + 1);
    }
    const natural = Object.keys(o);
    let same = natural.length === ks.length;
    for (let i = 0; same && i < ks.length; i++) same = natural[i] === ks[i];
    if (!same) Object.defineProperty(o, KEY_ORDER_SYM, { value: ks.slice(), enumerable: false, configurable: true, writable: true });
    return o;
  }
  if (v instanceof Undefined) return v;
  throw UNSNAPPABLE;
}
export const KEY_ORDER_SYM: symbol = Symbol.for("deltatok.keyOrder");
/** the tracking bound of the render running (snapshots are made only by tracked renders), else null */
export let SNAP_BUDGET: TrackBudget | null = null;
/** The budget snapshots of the running tracked render charge (null between renders). */
export function setSnapBudget(b: TrackBudget | null): void {
  SNAP_BUDGET = b;
}

/**
 * Key lists of snapshot dicts, computed once: snapshots are never modified after snapshot()
 * made them (the template cannot mutate a dict, and deltatok's code does not), and a trace
 * compares the same snapshot against every later request.
 */
export const snapKeyMemo = new WeakMap<object, string[]>();
export function snapKeys(snap: object): string[] {
  let ks = snapKeyMemo.get(snap);
  if (ks === undefined) {
    ks = keysOf(snap);
    snapKeyMemo.set(snap, ks);
  }
  return ks;
}

/** Exact structural equality of a current value and a snapshot. */
export function deepEq(cur: unknown, snap: unknown, depth = 0): boolean {
  if (typeof snap !== "object" || snap === null) {
    if (snap === FN_MARK) return typeof cur === "function" || typeof cur === "symbol";
    if (typeof snap === "number") return typeof cur === "number" && Object.is(cur, snap);
    return cur === snap;
  }
  if (depth > 200) return false;
  if (snap instanceof PyFloat) return cur instanceof PyFloat && Object.is(cur.value, snap.value);
  if (snap instanceof Markup) return cur instanceof Markup && cur.s === snap.s;
  if (snap instanceof PyRange) return cur instanceof PyRange && cur.start === snap.start && cur.stop === snap.stop && cur.step === snap.step;
  if (snap instanceof Undefined) return cur instanceof Undefined && undefinedMessage(cur) === undefinedMessage(snap) && cur.exc === snap.exc;
  if (Array.isArray(snap)) {
    if (cur instanceof SeqView) cur = cur.toArray();
    if (!Array.isArray(cur) || cur.length !== snap.length || isTuple(cur) !== isTuple(snap)) return false;
    for (let i = 0; i < snap.length; i++) if (!deepEq(cur[i], snap[i], depth + 1)) return false;
    return true;
  }
  if (snap instanceof PyDict) {
    if (!(cur instanceof PyDict) || cur.m.size !== snap.m.size) return false;
    const a = [...cur.m.values()];
    let i = 0;
    for (const e of snap.m.values()) {
      const c = a[i++] as [unknown, unknown];
      if (!deepEq(c[0], e[0], depth + 1) || !deepEq(c[1], e[1], depth + 1)) return false;
    }
    return true;
  }
  if (snap instanceof Map) {
    if (!(cur instanceof Map) || cur.size !== snap.size) return false;
    const a = [...cur.entries()];
    let i = 0;
    for (const [k, x] of snap) {
      const c = a[i++] as [unknown, unknown];
      if (!deepEq(c[0], k, depth + 1) || !deepEq(c[1], x, depth + 1)) return false;
    }
    return true;
  }
  if (!isPlainDict(cur) || Object.getPrototypeOf(cur) !== Object.getPrototypeOf(snap)) return false;
  const sk = snapKeys(snap);
  if ((cur as Record<symbol, unknown>)[KEY_ORDER_SYM] === undefined) {
    // keysOf(cur) is Object.keys(cur) here: walk it with for-in (same order, own keys first)
    // instead of allocating it; an inherited enumerable key sends us to the general path.
    let i = 0;
    let own = true;
    for (const k in cur) {
      if (!hasOwn.call(cur, k)) {
        own = false;
        break;
      }
      if (i >= sk.length || k !== sk[i]) return false;
      const x = (snap as Record<string, unknown>)[k];
      const c = cur[k];
      if (x === undefined) {
        if (c !== undefined && typeof c !== "function" && typeof c !== "symbol") return false;
      } else if (!deepEq(c, x, depth + 1)) return false;
      i++;
    }
    if (own) return i === sk.length;
  }
  const ck = keysOf(cur);
  if (sk.length !== ck.length) return false;
  for (let i = 0; i < sk.length; i++) {
    const k = sk[i] as string;
    if (ck[i] !== k) return false;
    const x = (snap as Record<string, unknown>)[k];
    const c = cur[k];
    if (x === undefined) {
      if (c !== undefined && typeof c !== "function" && typeof c !== "symbol") return false;
    } else if (!deepEq(c, x, depth + 1)) return false;
  }
  return true;
}

// ---- state values ----------------------------------------------------------------------------

export const S_PATH = 1;
export const S_NS = 2;
export const S_MACRO = 3;
export const S_DEEP = 4;
export const S_IDENT = 5;
export const S_UNDEF = 6;
export const S_MISSING = 7;
export const S_NEVER = 8;

/** How a value held in template state (a variable, a namespace attribute) is recorded. */
export class SV {
  constructor(
    readonly tag: number,
    readonly a: unknown,
    readonly b: unknown,
  ) {}
}
export const SV_MISSING = new SV(S_MISSING, null, null);
export const SV_NEVER = new SV(S_NEVER, null, null);
