/**
 * The tracked compile pass, statements: top-level statements and loop iterations become units
 * (recorded, validated, replayed by track.ts), `set` and loop bookkeeping report to the tracker.
 * `compileTracked` is the pass's entry point.
 *
 * Layer: template/incremental.
 */
import type { Expr, ForNode, MacroNode, Stmt, TemplateNode, WithNode } from "../jinja/ast.js";
import { runtimeError, syntaxError, typeError } from "../jinja/pyerror.js";
import { OBJECT_UNITS, PIECE_UNITS, dictKeys, dictSize, isDict, pyIter } from "../jinja/ops.js";
import { Macro, RenderState, TemplateReference } from "../jinja/runtime.js";
import type { Act, RecurseFn } from "../jinja/runtime.js";
import { DictView, MISSING, Namespace, PyIter } from "../jinja/values.js";
import { UnitFrame as Unit, Rec, elemPaths, type CondEv, type LoopEntry, type PosCond } from "./records.js";
import { Path } from "./paths.js";
import { isContainer } from "./observed.js";
import { type Tracker } from "./tracker.js";
import { BREAK, CONTINUE, Frame, FuncScope, NOT_CONST, OK, actAt, locate, mkSlots, unpack } from "../jinja/compile-support.js";
import type { CompiledRoot, Ev, Ex } from "../jinja/compile-support.js";
import { TrackedLoop } from "./loop.js";
import { TrackedExprCompiler, type Items, hasRootLoop, isDataKey, isTotalIntExpr, nulls, readSlotT, setSlotT, tkOf } from "./tracked-expr.js";

export class TrackedCompiler extends TrackedExprCompiler {

  /**
   * Tracked loop. Run by a unit in the root activation over a list, each iteration is a unit of
   * its own: its record from the previous render (matched by the item's path, else by position)
   * is replayed when it validates, otherwise the body executes. Elsewhere (macros, captures,
   * filtered or recursive loops, iterators) the loop runs inside its unit.
   */
  protected tForStmt(node: ForNode, frame: Frame): Ex {
    const { loopFrame, elseFrame, extended, loopSlot } = this.loopFrames(node, frame);

    let filterFn: ((rs: RenderState, a: Act, src: unknown[] | PyIter) => PyIter) | null = null;
    if (node.test !== null) {
      const testScope = new FuncScope(frame.func);
      const testFrame = frame.inner(testScope);
      testFrame.symbols.analyzeNode(node, "test");
      testFrame.register();
      const testEnter = this.enterFrame(testFrame);
      const testTarget = this.tAssignTarget(node.target, testFrame);
      const repack = this.targetValue(node.target, testFrame);
      const test = this.cond(node.test, testFrame);
      filterFn = (rs, a, src) => {
        const gen = function* (): Generator<unknown> {
          const ta: Act = { s: mkSlots(testScope.n), up: a, p: nulls(testScope.n) };
          testEnter(rs, ta);
          if (Array.isArray(src)) {
            for (let i = 0; i < src.length; i++) {
              testTarget(rs, ta, src[i], null);
              if (test(rs, ta) === true) yield repack(rs, ta);
            }
          } else {
            for (let r = src.next(); !r.done; r = src.next()) {
              testTarget(rs, ta, r.value, null);
              if (test(rs, ta) === true) yield repack(rs, ta);
            }
          }
        };
        return new PyIter("generator", gen());
      };
    }

    const iterEv = this.texpr(node.iter, frame);
    const target = this.tAssignTarget(node.target, loopFrame);
    // untracked scope setup, for re-evaluating a previous iteration's tests
    const plainTarget = this.assignTarget(node.target, loopFrame.plain());
    const plainEnter = this.enterFrame(loopFrame.plain());
    const enter = this.enterFrame(loopFrame);
    const body = this.stmts(node.body, loopFrame);
    const leave = this.leaveFrame(loopFrame);
    const hasElse = node.else_.length > 0;
    let elseBody: Ex | null = null;
    let elseEnter: ((rs: RenderState, a: Act) => void) | null = null;
    let elseLeave: ((a: Act) => void) | null = null;
    if (hasElse) {
      elseEnter = this.enterFrame(elseFrame);
      elseBody = this.stmts(node.else_, elseFrame);
      elseLeave = this.leaveFrame(elseFrame);
    }
    const leaveLoop = node.recursive && !hasElse ? () => undefined : leave;
    const loopId = this.loopIds.size;
    this.loopIds.set(node, loopId);
    const memoStatic = !node.recursive && node.test === null && frame.func === this.rootScope;
    const tupleTarget = node.target.kind === "Tuple";

    /**
     * The items to iterate and their paths. Observes what the number and order of items depend
     * on (a list's length, a dict's keys) in the unit running the loop.
     */
    const itemsOf = (tk: Tracker, v: unknown, p: Path | null, normalize: boolean): Items => {
      if (p === null) return { src: pyIter(v, tk.rs), ip: null, pairs: false };
      if (node.test !== null || node.recursive) {
        tk.whole(p, v, true);
        return { src: pyIter(v, tk.rs), ip: null, pairs: false };
      }
      if (Array.isArray(v)) {
        const lenAt = tk.obsLen(p, v.length);
        return { src: v, ip: normalize ? elemPaths(p, tk) : (i) => p.item(i), pairs: false, lp: p, lenAt };
      }
      if (v instanceof PyIter && p.isReversed) {
        const arr: unknown[] = [];
        for (let r = v.next(); !r.done; r = v.next()) arr.push(r.value);
        tk.obsLen(p.parent as Path, arr.length);
        return { src: arr, ip: normalize ? elemPaths(p, tk) : (i) => p.item(i), pairs: false, fromIter: true };
      }
      if ((v instanceof DictView && p.isView) || (v instanceof PyIter && p.isItemsView)) {
        const dp = p.parent as Path;
        const kind = v instanceof DictView ? v.kind : "items";
        let items: unknown[];
        let keys: unknown[];
        const fromIter = !(v instanceof DictView);
        if (v instanceof DictView) {
          keys = dictKeys(v.dict);
          items = pyIter(v, tk.rs) as unknown[];
        } else {
          // (the plain loop charges its run, then the generator charges as it yields)
          tk.rs.charge(OBJECT_UNITS);
          items = [];
          for (let r = v.next(); !r.done; r = v.next()) items.push(r.value);
          keys = items.map((t) => (t as unknown[])[0]);
        }
        tk.obsKeys(dp, keys);
        if (kind === "keys" || !keys.every(isDataKey)) return { src: items, ip: null, pairs: false, fromIter, charged: fromIter };
        return { src: items, ip: (i) => dp.item(keys[i]), pairs: kind === "items", fromIter, charged: fromIter };
      }
      if (isDict(v)) {
        // (charged as the plain loop's pyIter charges the keys)
        tk.rs.buildItems(dictSize(v));
        const keys = dictKeys(v);
        tk.obsKeys(p, keys);
        return { src: keys, ip: null, pairs: false };
      }
      tk.whole(p, v, true);
      return { src: pyIter(v, tk.rs), ip: null, pairs: false };
    };

    /** Binds an item (with its path) to the target. */
    const bind = (rs: RenderState, a: Act, tk: Tracker, item: unknown, ip: Path | null, pairs: boolean): void => {
      if (pairs) {
        if (tupleTarget) target(rs, a, item, [null, ip]);
        else {
          if (ip !== null) tk.whole(ip, (item as unknown[])[1]);
          target(rs, a, item, null);
        }
      } else target(rs, a, item, isContainer(item) ? ip : null);
    };

    const runElse = (rs: RenderState, a: Act): number => {
      (elseEnter as (rs: RenderState, a: Act) => void)(rs, a);
      const c = (elseBody as Ex)(rs, a);
      (elseLeave as (a: Act) => void)(a);
      return c;
    };

    /** The loop inside its unit (no iteration records). */
    const runPlain = (rs: RenderState, a: Act, it: Items, recurse: RecurseFn | null, depth0: number): number => {
      const tk = tkOf(rs);
      if (it.charged !== true) rs.charge(OBJECT_UNITS);
      const src = filterFn !== null ? filterFn(rs, a, it.src) : it.src;
      const ip = it.ip;
      let iterated = false;
      let ctl = OK;
      const lc = new TrackedLoop(src, recurse, depth0, rs);
      if (it.fromIter === true && filterFn === null) lc.tkIterPeek = -2;
      lc.tkDepth = tk.cur === null ? -1 : tk.cur.depth;
      if (ip !== null) lc.tkItemPath = (i) => (i >= 0 && Array.isArray(src) && i < src.length ? ip(i) : null);
      if (extended) setSlotT(tk, a, loopSlot, MISSING, null);
      const step = (item: unknown, i: number): number => {
        if (++rs.steps > rs.maxSteps) rs.stepFail();
        const p = ip === null ? null : ip(i);
        if (p !== null) tk.obsVal(p, it.pairs ? (item as unknown[])[1] : item);
        bind(rs, a, tk, item, p, it.pairs);
        if (extended) setSlotT(tk, a, loopSlot, lc, null);
        enter(rs, a);
        return body(rs, a);
      };
      if (Array.isArray(src)) {
        const n = src.length;
        for (let i = 0; i < n; i++) {
          const item = src[i];
          lc.setIndex(i, item);
          const r = step(item, i);
          if (r === BREAK) break;
          if (r === CONTINUE) continue;
          iterated = true;
        }
      } else {
        for (let i = 0; ; i++) {
          const item = lc.nextItem();
          if (item === MISSING) break;
          const r = step(item, i);
          if (r === BREAK) break;
          if (r === CONTINUE) continue;
          iterated = true;
        }
      }
      leaveLoop(a);
      if (hasElse && !iterated) ctl = runElse(rs, a);
      return ctl;
    };

    /** The loop run by a unit in the root activation: each iteration is a unit. */
    const runMemo = (rs: RenderState, a: Act, it: Items): number => {
      const tk = tkOf(rs);
      if (it.charged !== true) rs.charge(OBJECT_UNITS);
      const src = it.src as unknown[];
      const ip = it.ip;
      const parent = tk.cur as Unit;
      const j = parent.depth;
      const ord = parent.loopOrd++;
      const prevLoop = tk.prevLoop(ord, loopId);
      // (sized for the iterations the previous render had, plus appended ones)
      const entry = tk.loopEntry(loopId, prevLoop === null ? 0 : Math.max(prevLoop.iters.length, src.length));
      const lc = new TrackedLoop(src, null, 0, rs);
      if (it.fromIter === true) lc.tkIterPeek = -2;
      lc.tkDepth = j;
      lc.tkMemo = true;
      if (ip !== null) lc.tkItemPath = (i) => (i >= 0 && i < src.length ? ip(i) : null);
      if (extended) setSlotT(tk, a, loopSlot, MISSING, null);
      const savedLoop = tk.loopStack[j];
      tk.loopStack[j] = lc;
      const delta = { d: 0 };
      let iterated = false;
      let broke = false;
      let ctl = OK;
      try {
        const n = src.length;
        let item: unknown = null;
        const scope = (): void => {
          plainTarget(rs, a, item);
          if (extended) a.s[loopSlot] = lc;
          plainEnter(rs, a);
        };
        const at = (t: number): void => {
          item = src[t];
          lc.seek(t);
        };
        // iterations over unchanged messages replayed as runs (Tracker.runReplay)
        const runs = j === 0 && parent.segmented && prevLoop !== null && ip !== null && tk.versions !== null;
        for (let i = 0; i < n; i++) {
          if (++rs.steps > rs.maxSteps) rs.stepFail();
          item = src[i];
          const p = ip === null ? null : ip(i);
          const key: unknown = p ?? i;
          // (seek: after a replayed run the loop context was last set up at another index)
          lc.seek(i);
          const prev = prevLoop === null ? null : tk.match(prevLoop, i, key, delta);
          if (runs && prev !== null) {
            const m = tk.runReplay(prevLoop as LoopEntry, i, delta.d, n, ip as (t: number) => Path, a, at, scope, entry);
            if (m > 0) {
              i += m - 1;
              iterated = true;
              continue;
            }
            // (the run may have set up another position)
            at(i);
          }
          let r: number;
          const reused = prev === null ? null : tk.reuseIter(prev, a, scope, ord);
          if (reused !== null) {
            r = reused.control;
            entry.add(reused);
            if (p !== null && j > 0) tk.registerVoid(loopId, p, reused);
          } else {
            const f = tk.beginIter(ord, key);
            const itemPath = p ?? (isContainer(item) ? tk.space.loopItem(j) : null);
            bind(rs, a, tk, item, itemPath, it.pairs);
            if (extended) setSlotT(tk, a, loopSlot, lc, null);
            enter(rs, a);
            tk.started(f);
            tk.obsVal(p ?? tk.space.loopItem(j), it.pairs ? (item as unknown[])[1] : item);
            f.prev = prev;
            r = body(rs, a);
            const rec = tk.endIter(f, null, r);
            entry.add(rec);
            if (p !== null && j > 0) tk.registerVoid(loopId, p, rec);
          }
          if (r === BREAK) broke = true;
          if (r === BREAK) break;
          if (r === CONTINUE) continue;
          iterated = true;
        }
      } finally {
        tk.loopStack[j] = savedLoop as TrackedLoop;
        entry.done();
      }
      // a loop over caller data may grow: its recorded iterations stay valid when no iteration
      // read the loop's length and it ran to the end (see Tracker.extend)
      if (!broke && !hasElse && !lc.tkLenRead && it.lp !== undefined && it.lenAt !== undefined && ip !== null && !it.pairs) tk.extensible(it.lenAt, entry, it.lp);
      leaveLoop(a);
      if (hasElse && !iterated) ctl = runElse(rs, a);
      return ctl;
    };

    if (!node.recursive) {
      return (rs, a) => {
        const tk = tkOf(rs);
        const v = iterEv(rs, a);
        const p = tk.lp;
        tk.lp = null;
        const memo = memoStatic && a === tk.root && tk.cur !== null && rs.outStack.length === 0 && rs.overlay === null;
        const it = itemsOf(tk, v, p, memo);
        if (memo && Array.isArray(it.src)) return runMemo(rs, a, it);
        return runPlain(rs, a, it, null, 0);
      };
    }
    const scope = loopFrame.func;
    return (rs, a) => {
      const recurse: RecurseFn = (rs2, iterable, depth) => {
        rs2.enterCall(true);
        rs2.beginCapture();
        try {
          const la: Act = { s: mkSlots(scope.n), up: a, p: nulls(scope.n) };
          runPlain(rs2, la, { src: pyIter(iterable, rs2), ip: null, pairs: false }, recurse, depth);
        } catch (e) {
          rs2.abortCapture();
          rs2.depth--;
          throw e;
        }
        rs2.depth--;
        return rs2.endCapture();
      };
      const tk = tkOf(rs);
      const v = iterEv(rs, a);
      const p = tk.lp;
      tk.lp = null;
      if (p !== null) tk.whole(p, v, true);
      const out = recurse(rs, v, 0);
      rs.charge(out.length + PIECE_UNITS);
      rs.out += out;
      rs.chunks++;
      return OK;
    };
  }

  /**
   * Tracked `{% set %}`. A primitive value computed only from state outside the unit is recorded
   * as a set observation (the expression is re-evaluated at validation) instead of its inputs.
   */
  protected tAssign(node: Extract<Stmt, { kind: "Assign" }>, frame: Frame): Ex {
    const target = this.tAssignTarget(node.target, frame);
    const value = this.texpr(node.node, frame);
    if (node.target.kind !== "Name" || !this.inRootFunction(frame) || this.constValue(node.node, frame) !== NOT_CONST) {
      return (rs, a) => {
        if (++rs.steps > rs.maxSteps) rs.stepFail();
        const v = value(rs, a);
        target(rs, a, v, tkOf(rs).lp);
        return OK;
      };
    }
    const id = this.conds.length;
    this.conds.push(this.expr(node.node, frame.plain()));
    const deps = this.exprDeps(node.node, frame);
    const tl = locate(frame.func, frame.symbols.ref(node.target.name));
    const totalSlot = tl.hops === 0 && isTotalIntExpr(node.node) ? tl.slot : -1;
    return (rs, a) => {
      if (++rs.steps > rs.maxSteps) rs.stepFail();
      const tk = tkOf(rs);
      let v: unknown;
      if (a === tk.root && tk.cur !== null && tk.inCond === 0) {
        const taint0 = tk.taint;
        tk.taint = tk.depsWritten(deps);
        const saved = tk.condBegin();
        try {
          v = value(rs, a);
        } catch (e) {
          tk.taint = taint0 || tk.taint;
          tk.condAbort(saved);
          throw e;
        }
        const p = tk.lp;
        tk.condEnd(saved, taint0, id, p === null ? v : MISSING, "set", typeof v === "number" ? totalSlot : -1);
        tk.lp = p;
      } else v = value(rs, a);
      target(rs, a, v, tk.lp);
      return OK;
    };
  }

  /**
   * Tracked assignment: the value's path `p` goes with it (an array of element paths for
   * unpacking dict items in loops); top-level names are recorded as writes of the unit.
   */
  protected tAssignTarget(t: Expr, frame: Frame): (rs: RenderState, a: Act, v: unknown, p?: Path | null | Array<Path | null>) => void {
    switch (t.kind) {
      case "Name": {
        const ident = frame.symbols.ref(t.name);
        const { hops, slot } = locate(frame.func, ident);
        const name = t.name;
        if (frame.toplevel) {
          return (rs, a, v, p) => {
            const tk = tkOf(rs);
            if (actAt(a, hops) !== tk.root) throw new Error("internal: top-level assignment outside the root activation");
            tk.writeRoot(slot, name, v, p instanceof Path ? p : null);
          };
        }
        return (rs, a, v, p) => {
          setSlotT(tkOf(rs), actAt(a, hops), slot, v, p instanceof Path ? p : null);
        };
      }
      case "Tuple": {
        const subs = t.items.map((x) => this.tAssignTarget(x, frame));
        const n = subs.length;
        return (rs, a, v, p) => {
          const tk = tkOf(rs);
          let paths: Array<Path | null> | null = null;
          if (Array.isArray(p)) paths = p;
          else if (p instanceof Path) {
            if (Array.isArray(v) && v.length === n) {
              // unpacking reads the length and each element
              tk.obsLen(p, n);
              paths = [];
              for (let i = 0; i < n; i++) {
                const ep = p.item(i);
                tk.obsVal(ep, v[i]);
                paths.push(isContainer(v[i]) ? ep : null);
              }
            } else tk.whole(p, v);
          }
          const items = unpack(rs, v, n);
          for (let i = 0; i < n; i++) (subs[i] as (rs: RenderState, a: Act, v: unknown, p?: Path | null) => void)(rs, a, items[i], paths === null ? null : (paths[i] ?? null));
        };
      }
      case "NSRef": {
        const { hops, slot } = locate(frame.func, frame.symbols.ref(t.name));
        const attr = t.attr;
        return (rs, a, v, p) => {
          const tk = tkOf(rs);
          const ns = readSlotT(tk, actAt(a, hops), slot, true);
          tk.lp = null;
          if (!(ns instanceof Namespace)) throw runtimeError("cannot assign attribute on non-namespace object");
          tk.nsWrite(ns, attr, v, p instanceof Path ? p : null);
        };
      }
      default:
        throw syntaxError(`can't assign to ${t.kind.toLowerCase()}`, t.lineno);
    }
  }

  // ---- overrides of the engine compiler ---------------------------------------------------

  protected override instrumenting(): boolean {
    return true;
  }

  protected override root(tpl: TemplateNode, frame: Frame, enter: (rs: RenderState, a: Act) => void, selfRef: TemplateReference, selfSlot: number): TrackedRoot {
    const scope = frame.func;
    // each top-level statement is a unit; statements holding a loop always run (their
    // iterations are the units worth reusing), the others are reused whole when they validate
    const units = tpl.body.map((st) => ({ ex: this.stmt(st, frame), always: hasRootLoop(st) }));
    const conds = this.conds;
    return {
      nslots: scope.n,
      conds,
      condPos: this.condPos,
      run: (rs) => {
        const tk = tkOf(rs);
        const n = scope.n;
        const w = new Array<number>(n).fill(0);
        const a = { s: mkSlots(n), up: null, p: nulls(n), w };
        tk.root = a;
        if (selfSlot >= 0) a.s[selfSlot] = selfRef;
        enter(rs, a);
        const prevTop = tk.prev === null ? null : tk.prev.top;
        const top: Array<Rec | null> = [];
        for (let k = 0; k < units.length; k++) {
          const u = units[k] as { ex: Ex; always: boolean };
          const prev = prevTop === null ? null : (prevTop[k] ?? null);
          const f = tk.beginTop(k, prev, u.always);
          let replayed: Rec | null = null;
          if (!u.always && prev !== null && tk.validate(prev, a)) {
            tk.replay(prev);
            replayed = prev;
            tk.stats.unitsReused++;
          } else {
            u.ex(rs, a);
            tk.stats.unitsExecuted++;
          }
          top.push(tk.endTop(f, replayed));
        }
        if (rs.badChunk !== null) throw typeError(rs.badChunk);
        tk.top = top;
      },
    };
  }

  protected override blockAct(rs: RenderState, act: Act, overlay: Map<string, unknown> | null): void {
    act.p = nulls(act.s.length);
    // locals a scoped block sees are read without observation: its unit cannot be reused
    if (overlay !== null) tkOf(rs).markBad();
  }

  protected override enterFrame(frame: Frame): (rs: RenderState, a: Act) => void {
    if (!frame.instrumented) return super.enterFrame(frame);
    frame.register();
    const ops: Array<(rs: RenderState, a: Act) => void> = [];
    for (const [ident, load] of frame.symbols.loads) {
      const loc = locate(frame.func, ident);
      if (loc.hops !== 0) throw new Error("internal: frame load outside its function");
      const slot = loc.slot;
      switch (load.kind) {
        case "param":
          break;
        case "resolve": {
          const name = load.name;
          ops.push((rs, a) => {
            const tk = tkOf(rs);
            const v = tk.resolveT(name);
            setSlotT(tk, a, slot, v, tk.lp);
          });
          break;
        }
        case "alias": {
          const src = locate(frame.func, load.ident);
          const h = src.hops;
          const ss = src.slot;
          ops.push((rs, a) => {
            const tk = tkOf(rs);
            const v = readSlotT(tk, actAt(a, h), ss);
            setSlotT(tk, a, slot, v, tk.lp);
          });
          break;
        }
        case "undefined":
          ops.push((rs, a) => setSlotT(tkOf(rs), a, slot, MISSING, null));
          break;
      }
    }
    if (ops.length === 0) return () => undefined;
    if (ops.length === 1) return ops[0] as (rs: RenderState, a: Act) => void;
    return (rs, a) => {
      for (let i = 0; i < ops.length; i++) (ops[i] as (rs: RenderState, a: Act) => void)(rs, a);
    };
  }


  protected override leaveFrame(frame: Frame): (a: Act) => void {
    if (!frame.instrumented) return super.leaveFrame(frame);
    const slots: number[] = [];
    for (const ident of frame.symbols.loads.keys()) slots.push(locate(frame.func, ident).slot);
    if (slots.length === 0) return () => undefined;
    // no render state at hand: a cleared slot's path is cleared too (no write serial needed:
    // Jinja2's scoping never reads these slots before the next frame entry writes them)
    return (a) => {
      const p = a.p as Array<Path | null>;
      for (let i = 0; i < slots.length; i++) {
        a.s[slots[i] as number] = MISSING;
        p[slots[i] as number] = null;
      }
    };
  }

  protected override stmt(node: Stmt, frame: Frame): Ex {
    if (frame.instrumented) {
      if (node.kind === "For") return this.tForStmt(node, frame);
      if (node.kind === "Assign") return this.tAssign(node, frame);
    }
    return super.stmt(node, frame);
  }

  protected override ifTest(t: Expr, frame: Frame): Ev {
    return frame.instrumented ? this.tCond(t, frame) : super.ifTest(t, frame);
  }

  protected override assignTarget(t: Expr, frame: Frame): (rs: RenderState, a: Act, v: unknown, p?: unknown) => void {
    if (frame.instrumented) return this.tAssignTarget(t, frame) as (rs: RenderState, a: Act, v: unknown, p?: unknown) => void;
    return super.assignTarget(t, frame);
  }

  protected override withStmt(node: WithNode, frame: Frame): Ex {
    if (!frame.instrumented) return super.withStmt(node, frame);
    const withFrame = frame.inner();
    withFrame.symbols.analyzeNode(node);
    const enter = this.enterFrame(withFrame);
    const pairs = node.targets.map((t, i) => [this.assignTarget(t, withFrame), this.texpr(node.values[i] as Expr, frame)] as const);
    const body = this.stmts(node.body, withFrame);
    const leave = this.leaveFrame(withFrame);
    return (rs, a) => {
      if (++rs.steps > rs.maxSteps) rs.stepFail();
      enter(rs, a);
      for (const [t, v] of pairs) {
        const x = v(rs, a);
        t(rs, a, x, tkOf(rs).lp);
      }
      const r = body(rs, a);
      leave(a);
      return r;
    };
  }


  protected override macroStmt(node: MacroNode, frame: Frame): Ex {
    if (!frame.instrumented) return super.macroStmt(node, frame);
    const def = this.macroDef(node, frame);
    const ident = frame.symbols.ref(node.name);
    const { hops, slot } = locate(frame.func, ident);
    const name = node.name;
    const top = frame.toplevel;
    return (rs, a) => {
      const tk = tkOf(rs);
      rs.charge(OBJECT_UNITS);
      const m = new Macro(def, a);
      if (top) tk.writeRoot(slot, name, m, null);
      else setSlotT(tk, actAt(a, hops), slot, m, null);
      return OK;
    };
  }
}

/** The root of a tracked compile: also the plain evaluators of its condition / set observations. */
export interface TrackedRoot extends CompiledRoot {
  /** plain evaluators of condition/set observations, by id */
  conds: CondEv[];
  /** by condition id, the form `loop.index0 <op> E` when the test has it */
  condPos: Array<PosCond | undefined>;
}

/** Compiles a parsed template into the closures of incremental renders. */
export function compileTracked(tpl: TemplateNode): TrackedRoot {
  return new TrackedCompiler().compile(tpl) as TrackedRoot;
}
