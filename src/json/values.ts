/**
 * The value model shared by the JSON layer and the template evaluator: ordinary JS values that
 * keep the Python distinctions JS loses, in ways ordinary JS code can ignore.
 *
 * - A JS `number` that is an integer is a Python `int`; any other number is a Python `float`.
 * - `PyFloat` is a Python `float` whose value happens to be integral (`1.0`, `1e16`). It stands
 *   where a number stands; `valueOf`/`toJSON` make it behave as that number in ordinary code.
 * - A `bigint` is a Python `int` beyond 2^53 (values inside the safe range are always numbers).
 * - A plain object is a Python `dict`. When its key order differs from JS enumeration order
 *   (integer-like keys are enumerated first by JS), the true order rides on a non-enumerable
 *   symbol-keyed property `KEY_ORDER`; `keysOf` honours it while it still matches the object.
 *
 * Layer: json (imports nothing from the project but errors).
 */

/** A Python float with an integral value (or any float a caller wants to mark as float). */
export class PyFloat {
  readonly value: number;
  constructor(value: number) {
    this.value = value;
  }
  valueOf(): number {
    return this.value;
  }
  toJSON(): number {
    return this.value;
  }
  toString(): string {
    return String(this.value);
  }
}

/** Non-enumerable property holding an object's key order when JS would enumerate it differently. */
export const KEY_ORDER: unique symbol = Symbol.for("deltatok.keyOrder") as never;

/** Marks a Python float: integral values are boxed, others stay plain numbers. */
export function pyFloat(x: number): number | PyFloat {
  return Number.isInteger(x) ? new PyFloat(x) : x;
}

/** True for the keys JS enumerates first, in ascending numeric order ("0" .. "4294967294"). */
export function isArrayIndexKey(k: string): boolean {
  const n = k.length;
  if (n === 0 || n > 10) return false;
  const c0 = k.charCodeAt(0);
  if (c0 === 48) return n === 1; // "0"
  if (c0 < 49 || c0 > 57) return false;
  for (let i = 1; i < n; i++) {
    const c = k.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return n < 10 || Number(k) <= 4294967294;
}

/**
 * Records `keys` as the key order of `obj` (non-enumerable, so spreads and JSON.stringify ignore
 * it). Only needed when `keys` differs from `Object.keys(obj)`.
 */
export function setKeyOrder(obj: object, keys: string[]): void {
  Object.defineProperty(obj, KEY_ORDER, { value: keys, enumerable: false, configurable: true, writable: true });
}

/**
 * The keys of a plain object in Python dict order: the recorded `KEY_ORDER` when it still
 * describes exactly the object's own enumerable string keys, else JS enumeration order.
 */
export function keysOf(obj: object): string[] {
  const ks = Object.keys(obj);
  const order = (obj as { [KEY_ORDER]?: unknown })[KEY_ORDER];
  if (order === undefined || !Array.isArray(order) || order.length !== ks.length) return ks;
  for (let i = 0; i < order.length; i++) {
    const k = order[i];
    if (typeof k !== "string" || !Object.prototype.hasOwnProperty.call(obj, k)) return ks;
  }
  return order as string[];
}

/** Object.prototype (cached) for plain-object checks. */
const OBJECT_PROTO = Object.prototype;

/** A plain data object (literal, JSON.parse, Object.create(null)) — what counts as a dict. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null) return false;
  const p = Object.getPrototypeOf(v);
  return p === OBJECT_PROTO || p === null;
}
