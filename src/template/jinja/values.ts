/**
 * Runtime value types of the evaluator (the Python objects a template can hold besides the
 * plain data of the value model in ../json/values.ts):
 *
 * | Python                     | here                                              |
 * |----------------------------|---------------------------------------------------|
 * | None / bool / str          | null / boolean / string                           |
 * | int                        | integral number (safe range) or bigint            |
 * | float                      | non-integral number, or PyFloat                   |
 * | list / tuple               | Array / Array marked with `TUPLE`                 |
 * | dict                       | plain object (input data) or Map (made by a template) |
 * | jinja2 Undefined           | Undefined                                         |
 * | markupsafe.Markup          | Markup                                            |
 * | range, dict views, generators, Namespace, Cycler, Joiner, Macro, functions | classes below |
 *
 * Layer: template/jinja.
 */
import type { RenderState } from "./runtime.js";

/** Marker for arrays that are Python tuples. */
export const TUPLE: unique symbol = Symbol("tuple") as never;

export function mkTuple<T>(arr: T[]): T[] {
  (arr as unknown as { [TUPLE]: boolean })[TUPLE] = true;
  return arr;
}

/** Marker for groupby results (a namedtuple with .grouper and .list). */
export const GROUP: unique symbol = Symbol("group") as never;

export function isTuple(v: unknown): boolean {
  return Array.isArray(v) && (v as unknown as { [TUPLE]?: boolean })[TUPLE] === true;
}

/** "No value here" in activation slots and lookups (Jinja2's `missing`). */
export const MISSING: unique symbol = Symbol("missing") as never;
export type Missing = typeof MISSING;

/** jinja2.runtime.Undefined (default flavour): prints as "", iterates empty, falsy; else raises. */
export class Undefined {
  readonly hint: string | null;
  /** the object the attribute/item was looked up on; MISSING for a plain undefined name */
  readonly obj: unknown;
  readonly name: unknown;
  /** exception raised on use: UndefinedError, or SecurityError for blocked attributes */
  readonly exc: "UndefinedError" | "SecurityError";
  constructor(hint: string | null, obj: unknown = MISSING, name: unknown = null, exc: "UndefinedError" | "SecurityError" = "UndefinedError") {
    this.hint = hint;
    this.obj = obj;
    this.name = name;
    this.exc = exc;
  }
}

/** markupsafe.Markup: a str subclass marking text as HTML-safe. */
export class Markup {
  readonly s: string;
  constructor(s: string) {
    this.s = s;
  }
}

/** Python range object. */
export class PyRange {
  readonly start: number;
  readonly stop: number;
  readonly step: number;
  readonly length: number;
  constructor(start: number, stop: number, step: number) {
    this.start = start;
    this.stop = stop;
    this.step = step;
    const n = step > 0 ? Math.ceil((stop - start) / step) : Math.ceil((start - stop) / -step);
    this.length = n > 0 ? n : 0;
  }
  at(i: number): number {
    return this.start + i * this.step;
  }
}

/** dict.keys() / values() / items() views: re-iterable, sized, live. */
export class DictView {
  readonly kind: "keys" | "values" | "items";
  readonly dict: object;
  constructor(kind: "keys" | "values" | "items", dict: object) {
    this.kind = kind;
    this.dict = dict;
  }
}

/** A one-shot Python iterator (generator, reversed(), map/select results...). */
export class PyIter {
  readonly typeName: string;
  /** function name shown in a generator's repr */
  readonly qualname: string;
  private readonly it: Iterator<unknown>;
  constructor(typeName: string, it: Iterator<unknown>, qualname = "") {
    this.typeName = typeName;
    this.it = it;
    this.qualname = qualname;
  }
  next(): IteratorResult<unknown> {
    return this.it.next();
  }
}

/**
 * A dict made by the template (literal, dict(), copy, ...). Python dict semantics: keys that
 * compare equal share an entry (1 == 1.0 == True), the first key object inserted is kept.
 * Entries are stored under a normalized key as [original key, value].
 */
export class PyDict {
  readonly m = new Map<unknown, [unknown, unknown]>();
}

/** jinja2.utils.missing: what a template sees in an unset parameter slot (prints "missing"). */
export class MissingType {}
export const PY_MISSING = new MissingType();

/** jinja2.utils.Namespace */
export class Namespace {
  readonly attrs: Map<string, unknown>;
  /**
   * Slots of an instrumented render's observer (the engine never reads them): the incremental
   * tracker keeps a stable identity, a creation serial, attribute tags and write serials here.
   */
  key: string | null = null;
  born = 0;
  paths: Map<string, unknown> | null = null;
  wseq: Map<string, number> | null = null;
  constructor(attrs: Map<string, unknown>) {
    this.attrs = attrs;
  }
}

/** jinja2.utils.Cycler */
export class Cycler {
  readonly items: unknown[];
  pos = 0;
  /** an instrumented render's observer: creation serial (the engine never reads it) */
  born = 0;
  constructor(items: unknown[]) {
    this.items = items;
  }
}

/** jinja2.utils.Joiner */
export class Joiner {
  readonly sep: unknown;
  used = false;
  /** an instrumented render's observer: creation serial (the engine never reads it) */
  born = 0;
  constructor(sep: unknown) {
    this.sep = sep;
  }
}

/** Calling convention of every callable the template can reach. */
export type CallFn = (rs: RenderState, args: unknown[], kwargs: Map<string, unknown> | null) => unknown;

/**
 * A Python callable: a global function (`range`, `raise_exception`...), a bound method of a
 * data value (`'x'.strip`, `d.items`), or a class (`namespace`, `dict`, `cycler`, `joiner`).
 */
export class PyFunction {
  readonly name: string;
  /** "function", "builtin_function_or_method", "method", "type" */
  readonly typeName: string;
  readonly call: CallFn;
  /** Bound object, for methods (repr shows it). */
  readonly self: unknown;
  constructor(name: string, typeName: string, call: CallFn, self: unknown = MISSING) {
    this.name = name;
    this.typeName = typeName;
    this.call = call;
    this.self = self;
  }
}
