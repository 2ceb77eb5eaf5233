/**
 * The tracked compile pass, expressions: a subclass of the engine's compiler whose closures, in
 * frames marked instrumented, also report what they read to the incremental tracker (the path of
 * caller data a value came from in `tk.lp`, observations of truth, length, keys...); see
 * INCREMENTAL.md. Statements are in tracked-compiler.ts.
 *
 * Layer: template/incremental.
 */
import type { AnyNode, CompareOp, Expr, FilterNode, ForNode, TestNode } from "../jinja/ast.js";
import { FILTERS } from "../jinja/filters.js";
import { dictGet, isDict, isPlainDict, isStr, strOf, truthy } from "../jinja/ops.js";
import { STR_METHODS } from "../jinja/methods.js";
import { LoopContext, RenderState, callValue, pySlice } from "../jinja/runtime.js";
import { UNSAFE, getAttr, getItem, unsafeUndefined } from "../jinja/methods.js";
import type { Act } from "../jinja/runtime.js";
import { attrOf, loopAttr } from "../jinja/methods.js";
import { childNodes } from "../jinja/symbols.js";
import { Cycler, DictView, Joiner, MISSING, Namespace, PY_MISSING, PyFunction, PyIter, Undefined } from "../jinja/values.js";
import { TrackedLoop } from "./loop.js";
import { Path, dataGet } from "./paths.js";
import { isContainer } from "./observed.js";
import { type CondEv, type PosCond } from "./records.js";
import { type Tracker } from "./tracker.js";
import { DICT_METHOD_NAMES, FOLDABLE, Frame, NOT_CONST, OBJECT_PROTO, actAt, compareOp, filterChainOnBlock, hasOwn, locate } from "../jinja/compile-support.js";
import type { Ev } from "../jinja/compile-support.js";
import { Compiler } from "../jinja/compiler.js";

/** Node kinds whose tracked value may keep the path of caller data (texpr). */
export const PATHY = new Set(["Name", "Getattr", "Getitem", "Filter", "Call", "CondExpr", "And", "Or"]);
/** Tracked renders: the tracker (always set when tracked closures run). */
export function tkOf(rs: RenderState): Tracker {
  return rs.observer as Tracker;
}

/** Tracked slot write: value, path and (root activation) write serial. */
export function setSlotT(tk: Tracker, act: Act, slot: number, v: unknown, p: Path | null): void {
  act.s[slot] = v;
  (act.p as Array<Path | null>)[slot] = p;
  if (act === tk.root) tk.root.w[slot] = tk.serial++;
}

/** Tracked slot read: observes external root-activation state; the value's path goes to tk.lp. */
export function readSlotT(tk: Tracker, act: Act, slot: number, nsref = false): unknown {
  const v = act.s[slot];
  const p = (act.p as Array<Path | null>)[slot] ?? null;
  if (act === tk.root) tk.readRoot(slot, v, p, nsref);
  else if (tk.cur !== null) tk.taint = true;
  tk.lp = p;
  return v;
}

export function nulls(n: number): Array<Path | null> {
  return new Array<Path | null>(n).fill(null);
}

/** Filters whose use on a path value drops the elements' origin (observed whole, counted as fallbacks). */
export const DERIVING_FILTERS = new Set(["selectattr", "rejectattr", "select", "reject", "map", "groupby", "sort", "unique", "dictsort", "batch", "slice", "sum", "join", "min", "max"]);
/** Tests that only look at a value's type (observed already when a path value was obtained). */
export const TYPE_TESTS = new Set(["defined", "undefined", "none", "string", "mapping", "sequence", "iterable", "number", "integer", "float", "boolean", "true", "false", "callable", "escaped"]);

/** Contains a loop that may run in the root activation (not inside a macro or capture). */
export function hasRootLoop(node: AnyNode): boolean {
  if (node.kind === "For") return true;
  if (node.kind === "Macro" || node.kind === "CallBlock" || node.kind === "FilterBlock" || node.kind === "AssignBlock" || node.kind === "Block") return false;
  for (const c of childNodes(node)) if (hasRootLoop(c)) return true;
  return false;
}

/**
 * An expression that cannot fail when its inputs have the types they had: integer constants,
 * names, loop positions and lengths of names, combined by + - and unary minus.
 */
export function isTotalIntExpr(e: Expr): boolean {
  switch (e.kind) {
    case "Const":
      return typeof e.value === "number" && Number.isInteger(e.value);
    case "Name":
      return true;
    case "Neg":
      return isTotalIntExpr(e.node);
    case "Bin":
      return (e.op === "add" || e.op === "sub") && isTotalIntExpr(e.left) && isTotalIntExpr(e.right);
    case "Getattr":
      return e.node.kind === "Name" && e.node.name === "loop" && ["index", "index0", "revindex", "revindex0", "length", "depth", "depth0"].includes(e.attr);
    case "Filter":
      return (e.name === "length" || e.name === "count") && e.node !== null && e.node.kind === "Name" && e.args.length === 0 && e.kwargs.length === 0 && e.dynArgs === null && e.dynKwargs === null;
    default:
      return false;
  }
}

/** What a tracked loop iterates: the items, their paths, and whether items are (key, value) pairs of caller data. */
export interface Items {
  src: unknown[] | PyIter;
  ip: ((i: number) => Path | null) | null;
  pairs: boolean;
  /** the list's path and the index of the length observation of the running unit (-1: none) */
  lp?: Path;
  lenAt?: number;
  /** `src` collects an iterator the plain render iterates (its loop context charges as that one does) */
  fromIter?: boolean;
  /** the loop run was charged already (before collecting an iterator that charges as it yields) */
  charged?: boolean;
}

/** What an expression can read of the template state (Compiler.exprDeps). */
export interface ExprDeps {
  slots: number[];
  attrs: Array<[number, string]>;
  deep: boolean;
}

/** Keys kept in paths (hashable primitives). */
export function isDataKey(k: unknown): k is string | number | boolean {
  return typeof k === "string" || (typeof k === "number" && Number.isInteger(k)) || typeof k === "boolean";
}

export function isSliceArg(v: unknown): boolean {
  return v === null || (typeof v === "number" && Number.isInteger(v)) || typeof v === "boolean";
}

/** getattr on caller data at path `p`: dict keys are observed, methods bound to the data observe it whole. */
export function tDataAttr(rs: RenderState, tk: Tracker, o: unknown, p: Path, attr: string, dataKey: boolean): unknown {
  if (isDict(o)) {
    if (!dataKey) {
      const m = attrOf(rs, o, attr);
      if (m === UNSAFE) return unsafeUndefined(o, attr);
      if (m !== MISSING) {
        tk.whole(p, o);
        return m;
      }
    }
    const cp = p.item(attr);
    const v = dataGet(o, attr);
    tk.obsVal(cp, v);
    if (v === MISSING) return new Undefined(null, o, attr);
    tk.lp = isContainer(v) ? cp : null;
    return v;
  }
  const r = getAttr(rs, o, attr);
  // list/tuple methods read the data; so do groupby tuples' .grouper / .list
  if (!(r instanceof Undefined)) tk.whole(p, o);
  return r;
}

/** A loop-context attribute, observed when the loop belongs to an enclosing unit. */
export function tLoopAttr(rs: RenderState, tk: Tracker, lc: TrackedLoop, attr: string): unknown {
  let v = attr.charCodeAt(0) === 95 ? MISSING : loopAttr(lc, attr);
  if (v === MISSING) v = getAttr(rs, lc, attr);
  let p: Path | null = null;
  if ((attr === "previtem" || attr === "nextitem") && lc.tkItemPath !== null && !(v instanceof Undefined)) {
    p = lc.tkItemPath(lc.index0 + (attr === "previtem" ? -1 : 1), v, tk);
  }
  switch (attr) {
    case "revindex":
    case "revindex0":
    case "last":
    case "length":
      lc.tkLenRead = true;
      tk.loopRead(lc, attr, v, p);
      break;
    case "index0":
    case "index":
    case "first":
    case "depth":
    case "depth0":
    case "previtem":
    case "nextitem":
      tk.loopRead(lc, attr, v, p);
      if (attr === "nextitem") lc.tkLenRead = true;
      break;
    case "cycle":
      tk.loopRead(lc, "index0", lc.index0, null);
      break;
    case "changed":
      if (lc.tkMemo) tk.statefulCall(-1);
      break;
  }
  tk.lp = p;
  return v;
}

/** After a tracked call: namespaces get identities, the clock is observed, stateful objects get a creation serial. */
export function tPostCall(tk: Tracker, fn: unknown, pos: unknown[], kw: Map<string, unknown> | null, r: unknown): unknown {
  tk.lp = null;
  if (fn instanceof PyFunction) {
    if (r instanceof Namespace && fn.name === "Namespace" && fn.typeName === "type") tk.nsCreated(r);
    else if (fn.name === "strftime_now" && typeof r === "string") {
      const fmt = pos.length > 0 ? pos[0] : kw?.get("fmt");
      if (isStr(fmt)) tk.obsNow(strOf(fmt), r);
      else tk.markBad();
    }
    else if (r instanceof Cycler || r instanceof Joiner) r.born = tk.serial++;
    else if (fn.name === "generate_lorem_ipsum") tk.markBad();
  }
  return r;
}


export class TrackedExprCompiler extends Compiler {
  protected readonly loopIds = new Map<ForNode, number>();
  protected readonly conds: CondEv[] = [];
  protected readonly condPos: Array<PosCond | undefined> = [];


  /** Whether tracked code compiled in `frame` runs in the root activation (where units run). */
  protected inRootFunction(frame: Frame): boolean {
    return frame.func === this.rootScope;
  }

  /**
   * A tracked test (if / elif / ternary) with condition observations in the root function. The
   * whole test is a candidate; inside it each operand of `and` / `or` / `not` is one too (used
   * when the whole test reads state the unit set; a short-circuited operand is not evaluated, so
   * the operands recorded decide the result).
   */
  protected tCond(node: Expr, frame: Frame): Ev {
    if (!this.inRootFunction(frame)) return this.cond(node, frame);
    const parts = this.tCondParts(node, frame);
    if (node.kind !== "And" && node.kind !== "Or" && node.kind !== "Not") return parts;
    return this.condRecorder(parts, node, frame);
  }

  protected tCondParts(node: Expr, frame: Frame): Ev {
    switch (node.kind) {
      case "Not": {
        const inner = this.tCondParts(node.node, frame);
        return (rs, a) => inner(rs, a) !== true;
      }
      case "And": {
        const l = this.tCondParts(node.left, frame);
        const r = this.tCondParts(node.right, frame);
        return (rs, a) => l(rs, a) === true && r(rs, a) === true;
      }
      case "Or": {
        const l = this.tCondParts(node.left, frame);
        const r = this.tCondParts(node.right, frame);
        return (rs, a) => l(rs, a) === true || r(rs, a) === true;
      }
      default:
        return this.condRecorder(this.cond(node, frame), node, frame);
    }
  }

  /** Records the truth of test `node` (tracked `t`) as a condition observation when it qualifies. */
  protected condRecorder(t: Ev, node: Expr, frame: Frame): Ev {
    const id = this.conds.length;
    this.conds.push(this.cond(node, frame.plain()));
    this.condPos[id] = this.posCond(node, frame);
    const deps = this.exprDeps(node, frame);
    return (rs, a) => {
      const tk = tkOf(rs);
      if (a !== tk.root || tk.cur === null) return t(rs, a);
      const taint0 = tk.taint;
      // what the test could read on any path must not have been set by the unit so far
      tk.taint = tk.depsWritten(deps);
      const saved = tk.condBegin();
      let r: unknown;
      try {
        r = t(rs, a);
      } catch (e) {
        tk.taint = taint0 || tk.taint;
        tk.condAbort(saved);
        throw e;
      }
      tk.condEnd(saved, taint0, id, r, "cond");
      return r;
    };
  }

  /**
   * A test of the form `loop.index0 <op> E` or `E <op> loop.index0` (also `loop.index`; op one of
   * < <= > >=), with E a name or `name.attr` other than `loop`: what Tracker.runReplay needs to
   * decide it from the position and one evaluation of E per run (see PosCond).
   */
  protected posCond(node: Expr, frame: Frame): PosCond | undefined {
    if (node.kind !== "Compare" || node.ops.length !== 1) return undefined;
    const { op, expr: right } = node.ops[0] as { op: CompareOp; expr: Expr };
    if (op !== "lt" && op !== "lteq" && op !== "gt" && op !== "gteq") return undefined;
    const position = (e: Expr): "index0" | "index" | null =>
      e.kind === "Getattr" && e.node.kind === "Name" && e.node.name === "loop" && (e.attr === "index0" || e.attr === "index") ? e.attr : null;
    const simple = (e: Expr): boolean => (e.kind === "Name" && e.name !== "loop") || (e.kind === "Getattr" && e.node.kind === "Name" && e.node.name !== "loop");
    const l = position(node.expr);
    const r = position(right);
    if (l !== null && r === null && simple(right)) return { attr: l, op, posLeft: true, other: this.expr(right, frame.plain()) };
    if (r !== null && l === null && simple(node.expr)) return { attr: r, op, posLeft: false, other: this.expr(node.expr, frame.plain()) };
    return undefined;
  }

  /**
   * What an expression in the root function can read of the template's state, on any path: the
   * root-activation slots of the names it reads, the `name.attr` pairs (namespace attributes),
   * and whether it reaches state some other way (deeper accesses, calls).
   */
  protected exprDeps(node: Expr, frame: Frame): ExprDeps {
    const slots = new Set<number>();
    const attrs: Array<[number, string]> = [];
    let deep = false;
    const slotOf = (name: string): number => {
      const loc = locate(frame.func, frame.symbols.ref(name));
      if (loc.hops !== 0) deep = true;
      return loc.slot;
    };
    const walk = (n: AnyNode): void => {
      switch (n.kind) {
        case "Name":
          if (n.ctx === "load") slots.add(slotOf(n.name));
          return;
        case "Getattr":
          if (n.node.kind === "Name") {
            const sl = slotOf(n.node.name);
            slots.add(sl);
            attrs.push([sl, n.attr]);
            return;
          }
          deep = true;
          break;
        case "Getitem":
        case "Call":
          deep = true;
          break;
        case "CondExpr":
        case "Filter":
        case "Test":
          // may reach state through values (a namespace in a list, a macro): conservative
          if (n.kind !== "CondExpr") deep = true;
          break;
      }
      for (const c of childNodes(n)) walk(c);
    };
    try {
      walk(node);
    } catch {
      deep = true;
    }
    return { slots: [...slots], attrs, deep };
  }

  // ---- tracked expressions ------------------------------------------------------------------

  /** A tracked value consumed whole: its path (if any) is observed whole. */
  protected whole(ev: Ev): Ev {
    return (rs, a) => {
      const v = ev(rs, a);
      const tk = tkOf(rs);
      const p = tk.lp;
      if (p !== null) {
        tk.lp = null;
        tk.whole(p, v);
      } else if (v instanceof LoopContext) tk.loopEscapes(v);
      return v;
    };
  }

  protected nopath(ev: Ev): Ev {
    return (rs, a) => {
      const v = ev(rs, a);
      tkOf(rs).lp = null;
      return v;
    };
  }

  /**
   * Tracked expression that keeps the path of caller data it returns in `tk.lp` (null for values
   * that are not containers reached from a context variable or loop item).
   */
  protected texpr(node: Expr, frame: Frame): Ev {
    if (!frame.instrumented || frame.constMode) return this.expr(node, frame);
    if (FOLDABLE.has(node.kind)) {
      const v = this.tryFold(node, frame);
      if (v !== NOT_CONST) {
        return (rs) => {
          tkOf(rs).lp = null;
          return v;
        };
      }
    }
    switch (node.kind) {
      case "Name":
        return this.tNameLoad(node.name, frame);
      case "Getattr":
        return this.tGetattr(node.node, node.attr, frame);
      case "Getitem":
        return this.tGetitem(node, frame);
      case "Filter":
        return this.tFilter(node, frame);
      case "Call":
        return this.tCall(node, frame);
      case "CondExpr": {
        const soft = frame.soft();
        const test = this.tCond(node.test, soft);
        const e1 = this.texpr(node.expr1, soft);
        if (node.expr2 !== null) {
          const e2 = this.texpr(node.expr2, soft);
          return (rs, a) => (test(rs, a) === true ? e1(rs, a) : e2(rs, a));
        }
        const hint = `the inline if-expression on line ${node.lineno} evaluated to false and no else section was defined.`;
        return (rs, a) => {
          if (test(rs, a) === true) return e1(rs, a);
          tkOf(rs).lp = null;
          return new Undefined(hint);
        };
      }
      case "And":
      case "Or": {
        const l = this.texpr(node.left, frame);
        const r = this.texpr(node.right, frame);
        const isOr = node.kind === "Or";
        return (rs, a) => {
          const x = l(rs, a);
          const tk = tkOf(rs);
          const p = tk.lp;
          const t = truthy(x);
          if (p !== null) tk.obsTruth(p, t);
          else if (x instanceof LoopContext) tk.loopEscapes(x);
          if (t === isOr) {
            tk.lp = p;
            return x;
          }
          return r(rs, a);
        };
      }
      default:
        return this.nopath(this.expr(node, frame));
    }
  }

  protected tNameLoad(name: string, frame: Frame): Ev {
    const ident = frame.symbols.ref(name);
    const { hops, slot } = locate(frame.func, ident);
    const load = frame.symbols.findLoad(ident);
    if (load !== null && load.kind === "param" && !(frame.undeclaredParams?.has(ident) ?? false)) {
      return (rs, a) => {
        const tk = tkOf(rs);
        const v = readSlotT(tk, actAt(a, hops), slot);
        if (v === MISSING) {
          tk.lp = null;
          return PY_MISSING;
        }
        return v;
      };
    }
    return (rs, a) => {
      const tk = tkOf(rs);
      const v = readSlotT(tk, actAt(a, hops), slot);
      if (v === MISSING) {
        tk.lp = null;
        return new Undefined(null, MISSING, name);
      }
      return v;
    };
  }

  protected tGetattr(objNode: Expr, attr: string, frame: Frame): Ev {
    const obj = this.texpr(objNode, frame);
    const dataKey = attr.charCodeAt(0) !== 95 && !DICT_METHOD_NAMES.has(attr);
    return (rs, a) => {
      const o = obj(rs, a);
      const tk = tkOf(rs);
      const p = tk.lp;
      tk.lp = null;
      if (p !== null) return tDataAttr(rs, tk, o, p, attr, dataKey);
      if (o instanceof Namespace && attr.charCodeAt(0) !== 95) {
        const v = o.attrs.has(attr) ? o.attrs.get(attr) : MISSING;
        tk.nsRead(o, attr, v);
        if (v === MISSING) {
          tk.lp = null;
          return new Undefined(null, o, attr);
        }
        return v;
      }
      if (o instanceof TrackedLoop) return tLoopAttr(rs, tk, o, attr);
      if (dataKey && typeof o === "object" && o !== null && !Array.isArray(o)) {
        const pr = Object.getPrototypeOf(o);
        if (pr === OBJECT_PROTO || pr === null) {
          if (hasOwn.call(o, attr)) {
            const v = (o as Record<string, unknown>)[attr];
            if (v !== undefined && typeof v !== "function" && typeof v !== "symbol") return v;
          }
          return new Undefined(null, o, attr);
        }
      }
      return getAttr(rs, o, attr);
    };
  }

  protected tGetitem(node: Extract<Expr, { kind: "Getitem" }>, frame: Frame): Ev {
    const obj = this.texpr(node.node, frame);
    if (node.arg.kind === "Slice") {
      const sl = node.arg;
      const st = sl.start !== null ? this.expr(sl.start, frame) : null;
      const sp = sl.stop !== null ? this.expr(sl.stop, frame) : null;
      const sq = sl.step !== null ? this.expr(sl.step, frame) : null;
      return (rs, a) => {
        const o = obj(rs, a);
        const tk = tkOf(rs);
        const p = tk.lp;
        tk.lp = null;
        const b0 = st === null ? null : st(rs, a);
        const b1 = sp === null ? null : sp(rs, a);
        const b2 = sq === null ? null : sq(rs, a);
        if (o instanceof LoopContext) tk.loopEscapes(o);
        const r = pySlice(o, b0, b1, b2, rs);
        if (p !== null) {
          if (Array.isArray(o) && isSliceArg(b0) && isSliceArg(b1) && isSliceArg(b2)) tk.lp = p.slice(b0, b1, b2);
          else tk.whole(p, o);
        }
        return r;
      };
    }
    const key = this.expr(node.arg, frame);
    return (rs, a) => {
      const o = obj(rs, a);
      const tk = tkOf(rs);
      const p = tk.lp;
      tk.lp = null;
      const k = key(rs, a);
      if (o instanceof LoopContext) tk.loopEscapes(o);
      if (p !== null) {
        if ((Array.isArray(o) || isDict(o)) && isDataKey(k)) {
          const cp = p.item(k);
          const v = dataGet(o, k);
          tk.obsVal(cp, v);
          if (v !== MISSING) {
            tk.lp = isContainer(v) ? cp : null;
            return v;
          }
          // missing item: the sandbox's attribute fallback depends only on the type
          return getItem(rs, o, k);
        }
        tk.whole(p, o);
        return getItem(rs, o, k);
      }
      if (Array.isArray(o) && typeof k === "number" && Number.isInteger(k)) {
        const i = k < 0 ? k + o.length : k;
        if (i >= 0 && i < o.length) {
          const v = o[i];
          return v === undefined ? null : v;
        }
      }
      return getItem(rs, o, k);
    };
  }

  /** Tracked filters: length/first/last/list/reverse/items/default keep or observe paths; others see the value whole. */
  protected tFilter(node: FilterNode, frame: Frame): Ev {
    const fn = FILTERS.get(node.name);
    if (fn === undefined || node.node === null || (node.node.kind === "Filter" && filterChainOnBlock(node.node))) {
      const f = this.filterCall(node, frame);
      return (rs, a) => {
        const v = f(rs, a, undefined);
        tkOf(rs).lp = null;
        return v;
      };
    }
    const name = node.name;
    const valueEv = this.texpr(node.node, frame);
    const args = this.callArgs(node, frame);
    const deriving = DERIVING_FILTERS.has(name);
    const random = name === "random";
    return (rs, a) => {
      const v = valueEv(rs, a);
      const tk = tkOf(rs);
      const p = tk.lp;
      tk.lp = null;
      if (random) tk.markBad();
      if (v instanceof LoopContext) tk.loopEscapes(v);
      const [pos, kw] = args(rs, a);
      if (p === null) {
        const r = fn(rs, v, pos, kw);
        tk.lp = null;
        return r;
      }
      const noArgs = pos.length === 0 && (kw === null || kw.size === 0);
      switch (name) {
        case "length":
        case "count": {
          const r = fn(rs, v, pos, kw);
          tk.obsLen(p, r as number);
          return r;
        }
        case "list":
          if (Array.isArray(v)) {
            const r = fn(rs, v, pos, kw);
            tk.lp = p;
            return r;
          }
          break;
        case "reverse":
          if (Array.isArray(v) && noArgs) {
            const r = fn(rs, v, pos, kw);
            tk.lp = p.reversed();
            return r;
          }
          break;
        case "first":
        case "last":
          if (Array.isArray(v) && noArgs) {
            const cp = p.item(name === "first" ? 0 : -1);
            const x = dataGet(v, name === "first" ? 0 : -1);
            tk.obsVal(cp, x);
            if (x === MISSING) return new Undefined(name === "first" ? "No first item, sequence was empty." : "No last item, sequence was empty.");
            tk.lp = isContainer(x) ? cp : null;
            return x;
          }
          break;
        case "items":
          if (isDict(v) && noArgs) {
            const r = fn(rs, v, pos, kw);
            tk.lp = p.view("items");
            return r;
          }
          break;
        case "default":
        case "d": {
          const r = fn(rs, v, pos, kw);
          if (r === v) {
            const b = pos.length > 1 ? pos[1] : kw !== null && kw.has("boolean") ? kw.get("boolean") : false;
            if (truthy(b)) tk.obsTruth(p, truthy(v));
            tk.lp = p;
            return r;
          }
          tk.whole(p, v);
          return r;
        }
      }
      tk.whole(p, v, deriving);
      const r = fn(rs, v, pos, kw);
      tk.lp = null;
      return r;
    };
  }

  /** Tracked calls: dict .get/.items/.keys/.values on caller data keep paths; namespaces, the clock and stateful objects are recorded. */
  protected tCall(node: Extract<Expr, { kind: "Call" }>, frame: Frame): Ev {
    const args = this.callArgs(node, frame);
    if (node.node.kind === "Getattr") {
      const name = node.node.attr;
      const obj = this.texpr(node.node.node, frame);
      const strMethod = STR_METHODS[name];
      const isDictGet = name === "get";
      const isDictView = name === "items" || name === "keys" || name === "values";
      return (rs, a) => {
        const o = obj(rs, a);
        const tk = tkOf(rs);
        const p = tk.lp;
        tk.lp = null;
        if (typeof o === "string" && strMethod !== undefined) {
          const [pos, kw] = args(rs, a);
          return strMethod(rs, o, pos, kw, o);
        }
        if (p !== null && isDict(o) && (isDictGet || isDictView)) {
          const [pos, kw] = args(rs, a);
          if (kw === null) {
            if (isDictView && pos.length === 0) {
              tk.lp = p.view(name as "items" | "keys" | "values");
              return new DictView(name as "items" | "keys" | "values", o as object);
            }
            if (isDictGet && (pos.length === 1 || pos.length === 2) && isDataKey(pos[0])) {
              const cp = p.item(pos[0]);
              const v = dataGet(o, pos[0]);
              tk.obsVal(cp, v);
              if (v === MISSING) return pos.length === 2 ? pos[1] : null;
              tk.lp = isContainer(v) ? cp : null;
              return v;
            }
          }
          tk.whole(p, o);
          return callValue(rs, getAttr(rs, o, name), pos, kw);
        }
        if (p !== null) tk.whole(p, o);
        if (o instanceof TrackedLoop) {
          if (name === "cycle") tLoopAttr(rs, tk, o, "index0");
          else if (name === "changed" && o.tkMemo) tk.statefulCall(-1);
          tk.lp = null;
        }
        if ((isDictGet || isDictView) && isPlainDict(o)) {
          const [pos, kw] = args(rs, a);
          if (kw === null) {
            if (isDictView && pos.length === 0) return new DictView(name as "items" | "keys" | "values", o);
            if (isDictGet && (pos.length === 1 || pos.length === 2)) {
              const v = dictGet(o, pos[0]);
              return v === MISSING ? (pos.length === 2 ? pos[1] : null) : v;
            }
          }
          return callValue(rs, getAttr(rs, o, name), pos, kw);
        }
        const fn = getAttr(rs, o, name);
        if (fn instanceof PyFunction && fn.self instanceof Cycler) tk.statefulCall(fn.self.born);
        const [pos, kw] = args(rs, a);
        return tPostCall(tk, fn, pos, kw, callValue(rs, fn, pos, kw));
      };
    }
    const callee = this.expr(node.node, frame);
    return (rs, a) => {
      const fn = callee(rs, a);
      const [pos, kw] = args(rs, a);
      const tk = tkOf(rs);
      return tPostCall(tk, fn, pos, kw, callValue(rs, fn, pos, kw));
    };
  }

  /** Tracked comparisons: `key in data_dict` observes the key; other operands on caller data are seen whole. */
  protected tCompare(first: Expr, ops: Array<{ op: CompareOp; expr: Expr }>, frame: Frame): Ev {
    const head = this.texpr(first, frame);
    const rest = ops.map((o) => [o.op, this.texpr(o.expr, frame)] as const);
    return (rs, a) => {
      const tk = tkOf(rs);
      let x = head(rs, a);
      let px = tk.lp;
      tk.lp = null;
      if (x instanceof LoopContext) tk.loopEscapes(x);
      for (let i = 0; i < rest.length; i++) {
        const [op, ev] = rest[i] as readonly [CompareOp, Ev];
        const y = ev(rs, a);
        const py = tk.lp as Path | null;
        tk.lp = null;
        if (y instanceof LoopContext) tk.loopEscapes(y);
        if (px !== null) {
          tk.whole(px, x);
          px = null;
        }
        let r: boolean;
        if (py !== null && (op === "in" || op === "notin") && isDict(y) && isDataKey(x)) {
          r = compareOp(op, x, y);
          tk.obsVal(py.item(x), dataGet(y, x));
        } else {
          if (py !== null) tk.whole(py, y);
          r = compareOp(op, x, y);
        }
        if (!r) return false;
        x = y;
        px = null;
      }
      return true;
    };
  }

  // ---- overrides of the engine compiler ---------------------------------------------------

  protected override truth(node: Expr, frame: Frame): Ev {
    if (!frame.instrumented || frame.constMode) return super.truth(node, frame);
      const te = this.texpr(node, frame);
      return (rs, a) => {
        const v = te(rs, a);
        const tk = tkOf(rs);
        const p = tk.lp;
        if (p !== null) {
          tk.lp = null;
          const t = truthy(v);
          tk.obsTruth(p, t);
          return t;
        }
        if (v instanceof LoopContext) tk.loopEscapes(v);
        return typeof v === "boolean" ? v : truthy(v);
      };
  }

  override expr(node: Expr, frame: Frame): Ev {
    if (frame.instrumented && !frame.constMode && PATHY.has(node.kind)) return this.whole(this.texpr(node, frame));
    return super.expr(node, frame);
  }

  protected override compare(first: Expr, ops: Array<{ op: CompareOp; expr: Expr }>, frame: Frame): Ev {
    if (frame.instrumented && !frame.constMode) return this.tCompare(first, ops, frame);
    return super.compare(first, ops, frame);
  }

  protected override testOperand(node: TestNode, frame: Frame): Ev {
    if (!frame.instrumented || frame.constMode) return super.testOperand(node, frame);
    // a type test on caller data reads only its type, observed when the value was reached
    const tv = this.texpr(node.node, frame);
    return TYPE_TESTS.has(node.name)
      ? (rs, a) => {
          const v = tv(rs, a);
          tkOf(rs).lp = null;
          return v;
        }
      : this.whole(tv);
  }
}
