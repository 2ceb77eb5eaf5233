/**
 * Compiles template expressions into closures (the lower half of the compiler; statements are in
 * compiler.ts): names, attribute and item access, calls, filters, tests, comparisons, arithmetic,
 * conditions, and Jinja2's compile-time constant folding (`as_const`).
 *
 * Methods are protected so that an instrumenting pass can override them (compiler.ts,
 * "Instrumentation").
 *
 * Layer: template/jinja.
 */
import type { CallArgs, CompareOp, Expr, FilterNode, TestNode } from "./ast.js";
import { FILTERS, TESTS } from "./filters.js";
import type { FilterFn, TestFn } from "./filters.js";
import { PyError, runtimeError, syntaxError, typeError } from "./pyerror.js";
import { ENTRY_UNITS, ITEM_UNITS, OBJECT_UNITS, TUPLE_UNITS, dictGet, dictKeys, dictSize, isDict, isPlainDict, dictSet, isStr, newDict, pyContains, pyEq, pyIter, pyStr, strOf, truthy, typeName } from "./ops.js";
import { pyAdd, pyFloorDiv, pyMod, pyMul, pyNeg, pyPos, pyPow, pySub, pyTrueDiv } from "./arith.js";
import { percentFormat } from "./format.js";
import { STR_METHODS } from "./methods.js";
import { LoopContext, RenderState, callValue, pySlice } from "./runtime.js";
import { getAttr, getItem } from "./methods.js";
import type { Act } from "./runtime.js";
import { loopAttr } from "./methods.js";
import { DictView, MISSING, Markup, Namespace, PY_MISSING, Undefined, mkTuple } from "./values.js";
import { markupEscape, objectTypeRepr, pyRepr } from "./ops.js";
import { CONST_GLOBALS, CONST_LIMITS, DICT_METHOD_NAMES, FOLDABLE, Frame, Impossible, NOT_CONST, OBJECT_PROTO, PASS_ARG_FILTERS, PASS_ARG_TESTS, actAt, compareOp, filterChainOnBlock, hasOwn, hasSafeRepr, impossible, locate } from "./compile-support.js";
import type { Ev } from "./compile-support.js";

export class ExprCompiler {

  /**
   * Jinja2 folds constant output expressions at compile time with `as_const`, which looks up
   * items through the sandbox's getitem even for slices (`{{ none[0:1] }}` prints "" instead of
   * raising). Returns the folded text, or null when the expression is not constant.
   */
  protected constOutput(node: Expr, frame: Frame): string | null {
    const v = this.constValue(node, frame);
    if (v === NOT_CONST) return null;
    try {
      return frame.autoescape ? markupEscape(v).s : pyStr(v);
    } catch {
      return null;
    }
  }

  /** Compile-time value of a constant expression (Jinja2's as_const), or NOT_CONST. */
  protected constValue(node: Expr, frame: Frame): unknown {
    const cf = frame.copy();
    cf.constMode = true;
    let ev: Ev;
    try {
      ev = this.expr(node, cf);
    } catch {
      return NOT_CONST;
    }
    const rs = new RenderState({}, CONST_GLOBALS, undefined, CONST_LIMITS);
    try {
      return ev(rs, { s: [], up: null });
    } catch {
      return NOT_CONST;
    }
  }

  protected tryFold(node: Expr, frame: Frame): unknown {
    const v = this.constValue(node, frame);
    return v !== NOT_CONST && hasSafeRepr(v) ? v : NOT_CONST;
  }

  /** An expression evaluated for its truth value (returns a JS boolean). */
  protected cond(node: Expr, frame: Frame): Ev {
    switch (node.kind) {
      case "Not": {
        const inner = this.cond(node.node, frame);
        return (rs, a) => inner(rs, a) !== true;
      }
      case "And": {
        const l = this.cond(node.left, frame);
        const r = this.cond(node.right, frame);
        return (rs, a) => l(rs, a) === true && r(rs, a) === true;
      }
      case "Or": {
        const l = this.cond(node.left, frame);
        const r = this.cond(node.right, frame);
        return (rs, a) => l(rs, a) === true || r(rs, a) === true;
      }
      case "Test":
      case "Compare": {
        const e = this.expr(node, frame);
        return (rs, a) => e(rs, a) === true;
      }
      default: {
        return this.truth(node, frame);
      }
    }
  }

  /** A condition's value made a bool (Python's truth of any value). */
  protected truth(node: Expr, frame: Frame): Ev {
    const e = this.expr(node, frame);
    return (rs, a) => {
      const v = e(rs, a);
      return typeof v === "boolean" ? v : truthy(v);
    };
  }

  // ---- expressions ----------------------------------------------------------------------------

  expr(node: Expr, frame: Frame): Ev {
    if (!frame.constMode && FOLDABLE.has(node.kind)) {
      // Jinja2's optimizer: a constant subtree whose value has a safe repr becomes a constant.
      const v = this.tryFold(node, frame);
      if (v !== NOT_CONST) return () => v;
    }
    switch (node.kind) {
      case "Const": {
        const v = node.value;
        return () => v;
      }
      case "TemplateData": {
        const v = node.data;
        return () => v;
      }
      case "Name":
        return this.nameLoad(node.name, frame);
      case "NSRef":
        throw syntaxError("namespace reference outside of an assignment", node.lineno);
      case "Tuple": {
        const items = node.items.map((x) => this.expr(x, frame));
        const cost = items.length * ITEM_UNITS + TUPLE_UNITS;
        return (rs, a) => {
          rs.charge(cost);
          return mkTuple(items.map((f) => f(rs, a)));
        };
      }
      case "List": {
        const items = node.items.map((x) => this.expr(x, frame));
        const cost = items.length * ITEM_UNITS;
        return (rs, a) => {
          rs.charge(cost);
          return items.map((f) => f(rs, a));
        };
      }
      case "Dict": {
        const items = node.items.map((p) => [this.expr(p.key, frame), this.expr(p.value, frame)] as const);
        return (rs, a) => {
          // (the dict; each entry is charged by dictSet)
          rs.charge(OBJECT_UNITS);
          const m = newDict();
          for (const [k, v] of items) {
            const key = k(rs, a);
            dictSet(m, key, v(rs, a), rs);
          }
          return m;
        };
      }
      case "CondExpr": {
        const soft = frame.soft();
        const test = this.cond(node.test, soft);
        const e1 = this.expr(node.expr1, soft);
        if (node.expr2 !== null) {
          const e2 = this.expr(node.expr2, soft);
          return (rs, a) => (test(rs, a) === true ? e1(rs, a) : e2(rs, a));
        }
        const hint = `the inline if-expression on line ${node.lineno} evaluated to false and no else section was defined.`;
        if (frame.constMode) {
          return (rs, a) => {
            if (test(rs, a) === true) return e1(rs, a);
            throw new Impossible();
          };
        }
        return (rs, a) => (test(rs, a) === true ? e1(rs, a) : new Undefined(hint));
      }
      case "And": {
        const l = this.expr(node.left, frame);
        const r = this.expr(node.right, frame);
        return (rs, a) => {
          const x = l(rs, a);
          return truthy(x) ? r(rs, a) : x;
        };
      }
      case "Or": {
        const l = this.expr(node.left, frame);
        const r = this.expr(node.right, frame);
        return (rs, a) => {
          const x = l(rs, a);
          return truthy(x) ? x : r(rs, a);
        };
      }
      case "Not": {
        const c = this.cond(node.node, frame);
        return (rs, a) => c(rs, a) !== true;
      }
      case "Neg": {
        const x = this.expr(node.node, frame);
        return (rs, a) => pyNeg(x(rs, a), rs);
      }
      case "Pos": {
        const x = this.expr(node.node, frame);
        return (rs, a) => pyPos(x(rs, a));
      }
      case "Bin":
        return this.binExpr(node, frame);
      case "Concat": {
        const parts = node.nodes.map((x) => this.expr(x, frame));
        const ae: boolean | null = frame.constMode ? false : frame.volatile ? null : frame.autoescape;
        if (ae !== false) {
          // markup_join: if any part is Markup, everything else is escaped
          return (rs, a) => {
            const vals = parts.map((p) => p(rs, a));
            if ((ae === true || rs.autoescape) && vals.some((v) => v instanceof Markup)) {
              const strs = vals.map((v) => markupEscape(v).s);
              rs.buildStr(strs.reduce((n, x) => n + x.length, 0));
              return new Markup(strs.join(""));
            }
            const strs = vals.map((v) => (typeof v === "string" ? v : pyStr(v, rs)));
            rs.buildStr(strs.reduce((n, x) => n + x.length, 0));
            return strs.join("");
          };
        }
        // (the result is charged whole, as Python's join allocates it)
        if (parts.length === 2) {
          const [p0, p1] = parts as [Ev, Ev];
          return (rs, a) => {
            const v0 = p0(rs, a);
            const t0 = typeof v0 === "string" ? v0 : pyStr(v0, rs);
            const v1 = p1(rs, a);
            const t1 = typeof v1 === "string" ? v1 : pyStr(v1, rs);
            const n = t0.length + t1.length;
            if (n > rs.maxChars) rs.checkSize(n);
            if ((rs.built += n) > rs.maxBuilt) rs.buildFail(rs.built);
            return t0 + t1;
          };
        }
        return (rs, a) => {
          let s = "";
          for (let i = 0; i < parts.length; i++) {
            const v = (parts[i] as Ev)(rs, a);
            const t = typeof v === "string" ? v : pyStr(v, rs);
            if (s.length + t.length > rs.maxChars) rs.checkSize(s.length + t.length);
            rs.charge(t.length);
            s += t;
          }
          return s;
        };
      }
      case "Compare":
        return this.compare(node.expr, node.ops, frame);
      case "Getattr":
        return this.getattr(node.node, node.attr, frame);
      case "Getitem": {
        const obj = this.expr(node.node, frame);
        if (node.arg.kind === "Slice") {
          const sl = node.arg;
          const st = sl.start !== null ? this.expr(sl.start, frame) : null;
          const sp = sl.stop !== null ? this.expr(sl.stop, frame) : null;
          const sq = sl.step !== null ? this.expr(sl.step, frame) : null;
          if (frame.constMode) {
            // as_const goes through the sandbox getitem: a failing slice is an undefined value
            return (rs, a) => {
              const o = obj(rs, a);
              const b0 = st === null ? null : st(rs, a);
              const b1 = sp === null ? null : sp(rs, a);
              const b2 = sq === null ? null : sq(rs, a);
              try {
                return pySlice(o, b0, b1, b2, rs);
              } catch (e) {
                if (e instanceof PyError && (e.pyType === "TypeError" || e.pyType === "IndexError" || e.pyType === "KeyError")) {
                  return new Undefined(`${objectTypeRepr(o)} has no element slice(${pyRepr(b0)}, ${pyRepr(b1)}, ${pyRepr(b2)})`);
                }
                throw e;
              }
            };
          }
          return (rs, a) => {
            const o = obj(rs, a);
            return pySlice(o, st === null ? null : st(rs, a), sp === null ? null : sp(rs, a), sq === null ? null : sq(rs, a), rs);
          };
        }
        const key = this.expr(node.arg, frame);
        return (rs, a) => {
          const o = obj(rs, a);
          const k = key(rs, a);
          if (Array.isArray(o) && typeof k === "number" && Number.isInteger(k)) {
            const i = k < 0 ? k + o.length : k;
            if (i >= 0 && i < o.length) {
              const v = o[i];
              return v === undefined ? null : v;
            }
          } else if (typeof k === "string" && isPlainDict(o) && hasOwn.call(o, k)) {
            const v = o[k];
            if (v !== undefined && typeof v !== "function") return v;
          }
          return getItem(rs, o, k);
        };
      }
      case "Slice":
        throw syntaxError("slice outside of a subscript", node.lineno);
      case "Call":
        return this.call(node, frame);
      case "Filter": {
        const f = this.filterCall(node, frame);
        return (rs, a) => f(rs, a, undefined);
      }
      case "Test":
        return this.test(node, frame);
    }
  }

  protected nameLoad(name: string, frame: Frame): Ev {
    if (frame.constMode) return impossible;
    const ident = frame.symbols.ref(name);
    const { hops, slot } = locate(frame.func, ident);
    const load = frame.symbols.findLoad(ident);
    if (load !== null && load.kind === "param" && !(frame.undeclaredParams?.has(ident) ?? false)) {
      // Jinja2 reads declared parameters without the undefined check: an unset one is `missing`.
      return (_rs, a) => {
        const v = actAt(a, hops).s[slot];
        return v === MISSING ? PY_MISSING : v;
      };
    }
    if (hops === 0) {
      return (_rs, a) => {
        const v = a.s[slot];
        return v === MISSING ? new Undefined(null, MISSING, name) : v;
      };
    }
    if (hops === 1) {
      return (_rs, a) => {
        const v = (a.up as Act).s[slot];
        return v === MISSING ? new Undefined(null, MISSING, name) : v;
      };
    }
    return (_rs, a) => {
      const v = actAt(a, hops).s[slot];
      return v === MISSING ? new Undefined(null, MISSING, name) : v;
    };
  }

  protected binExpr(node: Extract<Expr, { kind: "Bin" }>, frame: Frame): Ev {
    const l = this.expr(node.left, frame);
    const r = this.expr(node.right, frame);
    switch (node.op) {
      case "add":
        return (rs, a) => {
          const x = l(rs, a);
          const y = r(rs, a);
          if (typeof x === "string" && typeof y === "string") {
            const n = x.length + y.length;
            if (n > rs.maxChars) rs.checkSize(n);
            if ((rs.built += n) > rs.maxBuilt) rs.buildFail(rs.built);
            return x + y;
          }
          return pyAdd(x, y, rs);
        };
      case "sub":
        return (rs, a) => pySub(l(rs, a), r(rs, a), rs);
      case "mul":
        return (rs, a) => pyMul(l(rs, a), r(rs, a), rs);
      case "div":
        return (rs, a) => pyTrueDiv(l(rs, a), r(rs, a));
      case "floordiv":
        return (rs, a) => pyFloorDiv(l(rs, a), r(rs, a), rs);
      case "mod":
        return (rs, a) => {
          const x = l(rs, a);
          const y = r(rs, a);
          return pyMod(x, y, rs, (s, args) => percentFormat(s as string, args, rs));
        };
      case "pow":
        return (rs, a) => pyPow(l(rs, a), r(rs, a), rs);
    }
  }

  protected compare(first: Expr, ops: Array<{ op: CompareOp; expr: Expr }>, frame: Frame): Ev {
    const head = this.expr(first, frame);
    const rest = ops.map((o) => [o.op, this.expr(o.expr, frame)] as const);
    if (rest.length === 1) {
      const [op, ev] = rest[0] as readonly [CompareOp, Ev];
      if (op === "eq") {
        return (rs, a) => {
          const x = head(rs, a);
          const y = ev(rs, a);
          if (x === y) return x === x;
          if (typeof x === "string" && typeof y === "string") return false;
          return pyEq(x, y);
        };
      }
      if (op === "ne") {
        return (rs, a) => {
          const x = head(rs, a);
          const y = ev(rs, a);
          if (x === y) return x !== x;
          if (typeof x === "string" && typeof y === "string") return true;
          return !pyEq(x, y);
        };
      }
      if (op === "in" || op === "notin") {
        const neg = op === "notin";
        return (rs, a) => {
          const x = head(rs, a);
          const y = ev(rs, a);
          if (typeof x === "string" && typeof y === "string") return (y.indexOf(x) >= 0) !== neg;
          return pyContains(y, x) !== neg;
        };
      }
      return (rs, a) => {
        const x = head(rs, a);
        const y = ev(rs, a);
        if (typeof x === "number" && typeof y === "number") {
          switch (op) {
            case "lt":
              return x < y;
            case "lteq":
              return x <= y;
            case "gt":
              return x > y;
            default:
              return x >= y;
          }
        }
        return compareOp(op, x, y);
      };
    }
    return (rs, a) => {
      let x = head(rs, a);
      for (const [op, ev] of rest) {
        const y = ev(rs, a);
        if (!compareOp(op, x, y)) return false;
        x = y;
      }
      return true;
    };
  }

  protected getattr(objNode: Expr, attr: string, frame: Frame): Ev {
    const obj = this.expr(objNode, frame);
    const dataKey = attr.charCodeAt(0) !== 95 && !DICT_METHOD_NAMES.has(attr);
    if (dataKey) {
      return (rs, a) => {
        const o = obj(rs, a);
        if (typeof o === "object" && o !== null && !Array.isArray(o)) {
          const p = Object.getPrototypeOf(o);
          if (p === OBJECT_PROTO || p === null) {
            if (hasOwn.call(o, attr)) {
              const v = (o as Record<string, unknown>)[attr];
              if (v !== undefined && typeof v !== "function" && typeof v !== "symbol") return v;
            }
            return new Undefined(null, o, attr);
          }
          // what getAttr gives for these (attrOf's answer for names not starting with "_")
          if (o instanceof Namespace) return o.attrs.has(attr) ? o.attrs.get(attr) : new Undefined(null, o, attr);
          if (o instanceof LoopContext) {
            const v = loopAttr(o, attr);
            if (v !== MISSING) return v;
          }
        }
        return getAttr(rs, o, attr);
      };
    }
    return (rs, a) => getAttr(rs, obj(rs, a), attr);
  }

  /** Positional and keyword argument evaluation of a call (returns [args, kwargs|null]). */
  protected callArgs(node: CallArgs, frame: Frame): (rs: RenderState, a: Act) => [unknown[], Map<string, unknown> | null] {
    const pos = node.args.map((x) => this.expr(x, frame));
    const kws = node.kwargs.map((k) => [k.key, this.expr(k.value, frame)] as const);
    const seen = new Set<string>();
    for (const [k] of kws) {
      if (seen.has(k)) throw syntaxError(`keyword argument repeated: ${k}`, node.args[0]?.lineno ?? 1, "SyntaxError");
      seen.add(k);
    }
    const dynArgs = node.dynArgs !== null ? this.expr(node.dynArgs, frame) : null;
    const dynKwargs = node.dynKwargs !== null ? this.expr(node.dynKwargs, frame) : null;
    if (kws.length === 0 && dynArgs === null && dynKwargs === null) {
      if (pos.length === 0) return () => [[], null];
      if (pos.length === 1) {
        const p0 = pos[0] as Ev;
        return (rs, a) => [[p0(rs, a)], null];
      }
      return (rs, a) => [pos.map((f) => f(rs, a)), null];
    }
    return (rs, a) => {
      const args = pos.map((f) => f(rs, a));
      let kwargs: Map<string, unknown> | null = null;
      if (kws.length > 0) {
        kwargs = new Map();
        for (const [k, f] of kws) kwargs.set(k, f(rs, a));
      }
      if (dynArgs !== null) {
        const extra = dynArgs(rs, a);
        const it = pyIter(extra, rs);
        if (Array.isArray(it)) {
          rs.buildItems(args.length + it.length);
          for (let i = 0; i < it.length; i++) args.push(it[i]);
        } else {
          for (let r = it.next(); !r.done; r = it.next()) {
            rs.charge(ITEM_UNITS);
            args.push(r.value);
          }
        }
      }
      if (dynKwargs !== null) {
        const m = dynKwargs(rs, a);
        if (!isDict(m)) throw typeError(`argument after ** must be a mapping, not ${typeName(m)}`);
        if (kwargs === null) kwargs = new Map();
        rs.charge(dictSize(m) * ENTRY_UNITS);
        for (const k of dictKeys(m)) {
          if (!isStr(k)) throw typeError("keywords must be strings");
          const ks = strOf(k);
          if (kwargs.has(ks)) throw typeError(`got multiple values for keyword argument '${ks}'`);
          kwargs.set(ks, dictGet(m, k));
        }
      }
      return [args, kwargs];
    };
  }

  protected call(node: Extract<Expr, { kind: "Call" }>, frame: Frame): Ev {
    if (frame.constMode) return impossible;
    const args = this.callArgs(node, frame);
    // Method calls on values: avoid allocating bound methods for str and dict methods.
    if (node.node.kind === "Getattr") {
      const name = node.node.attr;
      const obj = this.expr(node.node.node, frame);
      const strMethod = STR_METHODS[name];
      const isDictGet = name === "get";
      const isDictView = name === "items" || name === "keys" || name === "values";
      return (rs, a) => {
        const o = obj(rs, a);
        if (typeof o === "string" && strMethod !== undefined) {
          const [pos, kw] = args(rs, a);
          return strMethod(rs, o, pos, kw, o);
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
        const [pos, kw] = args(rs, a);
        return callValue(rs, fn, pos, kw);
      };
    }
    const callee = this.expr(node.node, frame);
    return (rs, a) => {
      const fn = callee(rs, a);
      const [pos, kw] = args(rs, a);
      return callValue(rs, fn, pos, kw);
    };
  }

  /**
   * Compiles a filter application. In `{% filter %}` / `{% set x | f %}` blocks the innermost
   * filter of the chain has no node: it is applied to `blockValue`.
   */
  protected filterCall(node: FilterNode, frame: Frame): (rs: RenderState, a: Act, blockValue: unknown) => unknown {
    const fn = FILTERS.get(node.name);
    if (frame.constMode && (fn === undefined || node.node === null || frame.volatile || PASS_ARG_FILTERS.has(node.name))) return impossible;
    const args = this.callArgs(node, frame);
    let valueEv: ((rs: RenderState, a: Act, bv: unknown) => unknown) | null = null;
    if (node.node !== null) {
      if (node.node.kind === "Filter" && filterChainOnBlock(node.node)) valueEv = this.filterCall(node.node, frame);
      else {
        const e = this.expr(node.node, frame);
        valueEv = (rs, a) => e(rs, a);
      }
    }
    if (fn === undefined) {
      if (!frame.softFrame) throw syntaxError(`No filter named '${node.name}'.`, node.lineno, "TemplateAssertionError");
      const msg = `No filter named '${node.name}' found.`;
      return () => {
        throw runtimeError(msg);
      };
    }
    const f: FilterFn = fn;
    if (valueEv === null) {
      return (rs, a, bv) => {
        const [pos, kw] = args(rs, a);
        return f(rs, bv, pos, kw);
      };
    }
    const ve = valueEv;
    return (rs, a, bv) => {
      const v = ve(rs, a, bv);
      const [pos, kw] = args(rs, a);
      return f(rs, v, pos, kw);
    };
  }

  protected test(node: TestNode, frame: Frame): Ev {
    const fn = TESTS.get(node.name);
    if (frame.constMode && (fn === undefined || frame.volatile || PASS_ARG_TESTS.has(node.name))) return impossible;
    const value = this.testOperand(node, frame);
    if (fn === undefined) {
      if (!frame.softFrame) throw syntaxError(`No test named '${node.name}'.`, node.lineno, "TemplateAssertionError");
      const msg = `No test named '${node.name}' found.`;
      const argsEv = this.callArgs(node, frame);
      return (rs, a) => {
        value(rs, a);
        argsEv(rs, a);
        throw runtimeError(msg);
      };
    }
    const plain = node.args.length === 0 && node.kwargs.length === 0 && node.dynArgs === null && node.dynKwargs === null;
    if (plain) {
      switch (node.name) {
        case "defined":
          return (rs, a) => !(value(rs, a) instanceof Undefined);
        case "undefined":
          return (rs, a) => value(rs, a) instanceof Undefined;
        case "none":
          return (rs, a) => value(rs, a) === null;
        case "string":
          return (rs, a) => isStr(value(rs, a));
        case "mapping":
          return (rs, a) => isDict(value(rs, a));
        case "true":
          return (rs, a) => value(rs, a) === true;
        case "false":
          return (rs, a) => value(rs, a) === false;
        case "boolean":
          return (rs, a) => typeof value(rs, a) === "boolean";
      }
    }
    const args = this.callArgs(node, frame);
    const t: TestFn = fn;
    return (rs, a) => {
      const v = value(rs, a);
      const [pos, kw] = args(rs, a);
      return t(rs, v, pos, kw);
    };
  }

  /** The value a test looks at. */
  protected testOperand(node: TestNode, frame: Frame): Ev {
    return this.expr(node.node, frame);
  }
}
