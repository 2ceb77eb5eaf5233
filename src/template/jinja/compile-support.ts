/**
 * The compiler's scaffolding, shared with instrumenting passes that subclass the compiler
 * (../incremental/tracked-*.ts): compile-time frames and slot allocation, control codes,
 * statement sequencing, unpacking, constant-folding limits, comparison operators, message marks.
 *
 * Layer: template/jinja.
 */
import type { CompareOp, Expr, FilterNode } from "./ast.js";
import { PyError, typeError, valueError } from "./pyerror.js";
import { dictItems, isDict, pyCompare, pyContains, pyEq, pyIter, typeName } from "./ops.js";
import { RenderState } from "./runtime.js";
import type { Act } from "./runtime.js";
import { Symbols } from "./symbols.js";
import { MISSING, Markup, PyRange } from "./values.js";
import { PyFloat } from "../../json/values.js";

export type Ev = (rs: RenderState, a: Act) => unknown;

/**
 * Message marks: before an iteration over a message object of `messages` that runs on the root
 * output, the offset it starts at (else -1); after it, the mark is kept if the iteration wrote
 * something and the message has none yet.
 */
export function markStart(rs: RenderState, item: unknown): number {
  if (typeof item !== "object" || item === null || rs.outStack.length !== 0) return -1;
  const i = (rs.marks as NonNullable<RenderState["marks"]>).index.get(item);
  return i === undefined || ((rs.marks as NonNullable<RenderState["marks"]>).starts[i] as number) >= 0 ? -1 : rs.out.length;
}

export function markEnd(rs: RenderState, item: unknown, start: number): void {
  const m = rs.marks as NonNullable<RenderState["marks"]>;
  const i = m.index.get(item as object) as number;
  if (rs.outStack.length === 0 && rs.out.length > start && (m.starts[i] as number) < 0) {
    m.starts[i] = start;
    m.ends[i] = rs.out.length;
  }
}

/** Jinja2's nodes.Impossible: the expression is not a compile-time constant. */
export class Impossible extends Error {}

/** In constant evaluation, what cannot be constant fails only when evaluated (as_const is lazy). */
export const impossible = (): never => {
  throw new Impossible();
};

/** Filters Jinja2 will not fold at compile time (they take the template context). */
export const PASS_ARG_FILTERS = new Set(["map", "random", "reject", "rejectattr", "select", "selectattr"]);
export const PASS_ARG_TESTS = new Set<string>();
export type Ex = (rs: RenderState, a: Act) => number;

export const OK = 0;
export const BREAK = 1;
export const CONTINUE = 2;

export const OBJECT_PROTO = Object.prototype;
export const hasOwn = Object.prototype.hasOwnProperty;
export const DICT_METHOD_NAMES = new Set(["items", "keys", "values", "get", "copy", "fromkeys", "clear", "pop", "popitem", "setdefault", "update"]);

export function mkSlots(n: number): unknown[] {
  const s: unknown[] = [];
  for (let i = 0; i < n; i++) s.push(MISSING);
  return s;
}

/** Slot allocation of one compiled function (Python function scope). */
export class FuncScope {
  readonly parent: FuncScope | null;
  readonly slots = new Map<string, number>();
  n = 0;
  constructor(parent: FuncScope | null) {
    this.parent = parent;
  }
  alloc(ident: string): number {
    let s = this.slots.get(ident);
    if (s === undefined) {
      s = this.n++;
      this.slots.set(ident, s);
    }
    return s;
  }
}

export class Frame {
  symbols: Symbols;
  readonly func: FuncScope;
  toplevel = false;
  loopFrame = false;
  softFrame = false;
  /** loops enclosing this frame within the same function (break/continue targets) */
  loopDepth = 0;
  /** compile-time eval context: autoescape flag, and whether it is only known at runtime (volatile) */
  autoescape = false;
  volatile = false;
  /** compiling an expression for Jinja2's compile-time constant evaluation (as_const) */
  constMode = false;
  /** parameters whose values are not bound yet (macro default expressions) */
  undeclaredParams: ReadonlySet<string> | null = null;
  /**
   * Instrumentation: this frame's code is compiled by the overrides of an instrumenting subclass
   * of the compiler (the incremental tracker's, ../incremental/tracked-*.ts); the engine's own
   * methods only pass the flag on to inner frames.
   */
  instrumented = false;

  constructor(symbols: Symbols, func: FuncScope) {
    this.symbols = symbols;
    this.func = func;
  }

  inner(func: FuncScope = this.func): Frame {
    const f = new Frame(new Symbols(this.symbols), func);
    f.loopDepth = func === this.func ? this.loopDepth : 0;
    f.autoescape = this.autoescape;
    f.volatile = this.volatile;
    f.instrumented = this.instrumented;
    return f;
  }

  soft(): Frame {
    const f = this.copy();
    f.softFrame = true;
    return f;
  }

  copy(): Frame {
    const f = new Frame(this.symbols, this.func);
    f.toplevel = this.toplevel;
    f.loopFrame = this.loopFrame;
    f.softFrame = this.softFrame;
    f.loopDepth = this.loopDepth;
    f.autoescape = this.autoescape;
    f.volatile = this.volatile;
    f.constMode = this.constMode;
    f.undeclaredParams = this.undeclaredParams;
    f.instrumented = this.instrumented;
    return f;
  }

  /** The same frame compiling plain (uninstrumented) closures. */
  plain(): Frame {
    const f = this.copy();
    f.instrumented = false;
    return f;
  }

  /** Registers this frame's own identifiers as slots of its function. */
  register(): void {
    for (const ident of this.symbols.refs.values()) this.func.alloc(ident);
  }
}

export interface Loc {
  hops: number;
  slot: number;
}

export function locate(func: FuncScope, ident: string): Loc {
  let f: FuncScope | null = func;
  let hops = 0;
  while (f !== null) {
    const s = f.slots.get(ident);
    if (s !== undefined) return { hops, slot: s };
    f = f.parent;
    hops++;
  }
  return { hops: 0, slot: func.alloc(ident) };
}

export function actAt(a: Act, hops: number): Act {
  let x = a;
  for (let i = 0; i < hops; i++) x = x.up as Act;
  return x;
}

export function seq(list: Ex[]): Ex {
  switch (list.length) {
    case 0:
      return () => OK;
    case 1:
      return list[0] as Ex;
    case 2: {
      const [x, y] = list as [Ex, Ex];
      return (rs, a) => {
        const r = x(rs, a);
        if (r !== OK) return r;
        return y(rs, a);
      };
    }
    default: {
      const arr = list.slice();
      const n = arr.length;
      return (rs, a) => {
        for (let i = 0; i < n; i++) {
          const r = (arr[i] as Ex)(rs, a);
          if (r !== OK) return r;
        }
        return OK;
      };
    }
  }
}

/** Python iterable unpacking into `n` targets. */
export function unpack(rs: RenderState, v: unknown, n: number): unknown[] {
  if (Array.isArray(v) && v.length === n) return v;
  let items: unknown[];
  try {
    const it = pyIter(v, rs);
    if (Array.isArray(it)) items = it;
    else {
      items = [];
      for (let r = it.next(); !r.done; r = it.next()) {
        items.push(r.value);
        if (items.length > n) break;
      }
    }
  } catch (e) {
    if (e instanceof PyError && e.pyType === "TypeError") throw typeError(`cannot unpack non-iterable ${typeName(v)} object`);
    throw e;
  }
  if (items.length > n) throw valueError(`too many values to unpack (expected ${n})`);
  if (items.length < n) throw valueError(`not enough values to unpack (expected ${n}, got ${items.length})`);
  return items;
}

export const CONST_GLOBALS: ReadonlyMap<string, unknown> = new Map();
export const NOT_CONST = Symbol("not-const");
/** Node kinds Jinja2's code generator passes through the optimizer (@optimizeconst). */
export const FOLDABLE = new Set(["Bin", "And", "Or", "Not", "Neg", "Pos", "Concat", "Compare", "Getattr", "Getitem", "Filter", "Test", "CondExpr"]);

/** True for the inner part of `{% filter a|b %}` chains: filters applied to the block body. */
export function filterChainOnBlock(node: FilterNode): boolean {
  let n: Expr | null = node;
  while (n !== null && n.kind === "Filter") n = n.node;
  return n === null;
}

/** jinja2.compiler.has_safe_repr: values Jinja2 may turn into constants. */
export function hasSafeRepr(v: unknown): boolean {
  if (v === null || typeof v === "boolean" || typeof v === "number" || typeof v === "bigint" || typeof v === "string") return true;
  if (v instanceof PyFloat || v instanceof Markup || v instanceof PyRange) return true;
  if (Array.isArray(v)) return v.every(hasSafeRepr);
  if (isDict(v)) return (dictItems(v) as unknown[][]).every(([k, x]) => hasSafeRepr(k) && hasSafeRepr(x));
  return false;
}
export const CONST_LIMITS = { maxSteps: 100_000, maxOutputChars: 1_000_000, maxDepth: 50, maxBuildUnits: 4_000_000 };

export interface CompiledRoot {
  nslots: number;
  run: (rs: RenderState) => void;
}


/** One comparison operator of a Jinja comparison chain, Python-exactly (`x op y`). */
export function compareOp(op: CompareOp, x: unknown, y: unknown): boolean {
  switch (op) {
    case "eq":
      return x === y ? x === x : pyEq(x, y);
    case "ne":
      return !(x === y ? x === x : pyEq(x, y));
    case "lt":
      return pyCompare(x, y, "lt") < 0;
    case "lteq":
      return pyCompare(x, y, "lteq") <= 0;
    case "gt":
      return pyCompare(x, y, "gt") > 0;
    case "gteq":
      return pyCompare(x, y, "gteq") >= 0;
    case "in":
      return pyContains(y, x);
    case "notin":
      return !pyContains(y, x);
  }
}
