/**
 * Compiles a template syntax tree into JS closures, mirroring the Python code Jinja2 generates:
 *
 * - Names resolve at compile time to activation slots (`l_<level>_<name>` identifiers, shared by
 *   sibling frames of one function, as Python locals are); each frame runs its entry loads
 *   (parameter / resolve from context / alias outer / undefined) exactly where Jinja2's
 *   generated code does — e.g. once per loop iteration.
 * - Functions (the template root, macros, call blocks, `{% generation %}`, loop-filter tests,
 *   recursive loops, blocks) get their own activation; nested ones see enclosing activations
 *   live, like Python closures.
 * - Statements return a control code (0, BREAK, CONTINUE) instead of throwing.
 *
 * Layer: template/jinja.
 */
import type { AssignBlockNode, CallBlockNode, Expr, FilterBlockNode, ForNode, IfNode, MacroNode, OutputNode, Stmt, TemplateNode, WithNode } from "./ast.js";
import { runtimeError, syntaxError, typeError } from "./pyerror.js";
import { ITEM_UNITS, OBJECT_UNITS, PIECE_UNITS, TUPLE_UNITS, pyIter, pyStr, strOf, truthy } from "./ops.js";
import { LoopContext, Macro, RenderState, TemplateReference, callValue } from "./runtime.js";
import type { Act, MacroDef, RecurseFn } from "./runtime.js";
import { Symbols, findAll, findUndeclared } from "./symbols.js";
import { MISSING, Markup, Namespace, PyIter, Undefined, mkTuple } from "./values.js";
import { markupEscape } from "./ops.js";
import { BREAK, CONTINUE, Frame, FuncScope, NOT_CONST, OK, actAt, locate, markEnd, markStart, mkSlots, seq, unpack } from "./compile-support.js";
import type { CompiledRoot, Ev, Ex, Loc } from "./compile-support.js";
import { ExprCompiler } from "./compile-expr.js";

export class Compiler extends ExprCompiler {
  protected readonly blocks = new Map<string, { scope: FuncScope; enter: (rs: RenderState, a: Act) => void; body: Ex }>();
  protected rootScope: FuncScope | null = null;


  compile(tpl: TemplateNode): CompiledRoot {
    // Blocks become separate functions with their own root frame (they read the context only).
    const blockNodes = findAll(tpl, "Block") as Array<Extract<Stmt, { kind: "Block" }>>;
    for (const b of blockNodes) {
      if (this.blocks.has(b.name)) throw syntaxError(`block '${b.name}' defined twice`, b.lineno, "TemplateAssertionError");
      this.blocks.set(b.name, null as never);
    }
    const selfRef = new TemplateReference(new Set(this.blocks.keys()), (rs, name) => this.renderBlock(rs, name));
    for (const b of blockNodes) {
      const scope = new FuncScope(null);
      const frame = new Frame(new Symbols(null, 0), scope);
      frame.instrumented = this.instrumenting();
      const und = findUndeclared(b.body, ["self", "super"]);
      if (und.has("self")) frame.symbols.declareParameter("self");
      if (und.has("super")) frame.symbols.declareParameter("super");
      frame.symbols.analyzeNode(b);
      frame.register();
      const selfSlot = und.has("self") ? locate(scope, frame.symbols.ref("self")).slot : -1;
      const superSlot = und.has("super") ? locate(scope, frame.symbols.ref("super")).slot : -1;
      const enterLoads = this.enterFrame(frame);
      const body = this.stmts(b.body, frame);
      const superHint = `there is no parent block called '${b.name}'.`;
      const enter = (rs: RenderState, a: Act): void => {
        if (selfSlot >= 0) a.s[selfSlot] = selfRef;
        if (superSlot >= 0) a.s[superSlot] = new Undefined(superHint, MISSING, "super");
        enterLoads(rs, a);
      };
      this.blocks.set(b.name, { scope, enter, body });
    }
    const scope = new FuncScope(null);
    this.rootScope = scope;
    const frame = new Frame(new Symbols(null, 0), scope);
    frame.instrumented = this.instrumenting();
    const usesSelf = findUndeclared(tpl.body, ["self"]).has("self");
    if (usesSelf) frame.symbols.declareParameter("self");
    frame.toplevel = true;
    frame.symbols.analyzeNode(tpl);
    frame.register();
    const selfSlot = usesSelf ? locate(scope, frame.symbols.ref("self")).slot : -1;
    const enter = this.enterFrame(frame);
    return this.root(tpl, frame, enter, selfRef, selfSlot);
  }

  /** Whether frames are instrumented (compiled by the overrides of an instrumenting subclass). */
  protected instrumenting(): boolean {
    return false;
  }

  /** The root function: the template body run in a fresh root activation. */
  protected root(tpl: TemplateNode, frame: Frame, enter: (rs: RenderState, a: Act) => void, selfRef: TemplateReference, selfSlot: number): CompiledRoot {
    const scope = frame.func;
    const body = this.stmts(tpl.body, frame);
    return {
      nslots: scope.n,
      run: (rs) => {
        const a: Act = { s: mkSlots(scope.n), up: null };
        if (selfSlot >= 0) a.s[selfSlot] = selfRef;
        enter(rs, a);
        body(rs, a);
        if (rs.badChunk !== null) throw typeError(rs.badChunk);
      },
    };
  }

  /** Renders a block into the current output (non-scoped blocks see only the context). */
  protected runBlock(rs: RenderState, name: string, overlay: Map<string, unknown> | null): void {
    const b = this.blocks.get(name) as { scope: FuncScope; enter: (rs: RenderState, a: Act) => void; body: Ex };
    const act: Act = { s: mkSlots(b.scope.n), up: null };
    this.blockAct(rs, act, overlay);
    const saved = rs.overlay;
    rs.enterCall();
    try {
      if (overlay !== null) rs.overlay = overlay;
      b.enter(rs, act);
      b.body(rs, act);
    } finally {
      rs.overlay = saved;
      rs.depth--;
    }
  }

  /** A block's fresh activation, before its frame is entered (instrumenting passes add tags). */
  protected blockAct(_rs: RenderState, _act: Act, _overlay: Map<string, unknown> | null): void {}

  /** self.<block>(): the block's output as a string. */
  protected renderBlock(rs: RenderState, name: string): string {
    rs.beginCapture();
    try {
      this.runBlock(rs, name, null);
    } catch (e) {
      rs.abortCapture();
      throw e;
    }
    return rs.endCapture();
  }

  // ---- frames -------------------------------------------------------------------------

  protected enterFrame(frame: Frame): (rs: RenderState, a: Act) => void {
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
            a.s[slot] = rs.resolve(name);
          });
          break;
        }
        case "alias": {
          const src = locate(frame.func, load.ident);
          const h = src.hops;
          const ss = src.slot;
          ops.push((_rs, a) => {
            a.s[slot] = actAt(a, h).s[ss];
          });
          break;
        }
        case "undefined":
          ops.push((_rs, a) => {
            a.s[slot] = MISSING;
          });
          break;
      }
    }
    if (ops.length === 0) return () => undefined;
    if (ops.length === 1) return ops[0] as (rs: RenderState, a: Act) => void;
    return (rs, a) => {
      for (let i = 0; i < ops.length; i++) (ops[i] as (rs: RenderState, a: Act) => void)(rs, a);
    };
  }

  protected leaveFrame(frame: Frame): (a: Act) => void {
    const slots: number[] = [];
    for (const ident of frame.symbols.loads.keys()) slots.push(locate(frame.func, ident).slot);
    if (slots.length === 0) return () => undefined;
    return (a) => {
      for (let i = 0; i < slots.length; i++) a.s[slots[i] as number] = MISSING;
    };
  }

  // ---- statements ---------------------------------------------------------------------------

  protected stmts(list: Stmt[], frame: Frame): Ex {
    return seq(list.map((s) => this.stmt(s, frame)));
  }

  protected stmt(node: Stmt, frame: Frame): Ex {
    switch (node.kind) {
      case "Output":
        return this.output(node, frame);
      case "If":
        return this.ifStmt(node, frame);
      case "For":
        return this.forStmt(node, frame);
      case "Assign": {
        const target = this.assignTarget(node.target, frame);
        const value = this.expr(node.node, frame);
        return (rs, a) => {
          if (++rs.steps > rs.maxSteps) rs.stepFail();
          target(rs, a, value(rs, a));
          return OK;
        };
      }
      case "AssignBlock":
        return this.assignBlock(node, frame);
      case "Macro":
        return this.macroStmt(node, frame);
      case "CallBlock":
        return this.callBlock(node, frame);
      case "FilterBlock":
        return this.filterBlock(node, frame);
      case "With":
        return this.withStmt(node, frame);
      case "Scope": {
        const inner = frame.inner();
        inner.symbols.analyzeNode(node);
        const enter = this.enterFrame(inner);
        const value = this.expr(node.autoescape, inner);
        const c = this.constValue(node.autoescape, inner);
        if (c === NOT_CONST) inner.volatile = true;
        else inner.autoescape = truthy(c);
        const body = this.stmts(node.body, inner);
        const leave = this.leaveFrame(inner);
        return (rs, a) => {
          enter(rs, a);
          const prev = rs.autoescape;
          rs.autoescape = truthy(value(rs, a));
          let r: number;
          try {
            r = body(rs, a);
          } finally {
            rs.autoescape = prev;
          }
          leave(a);
          return r;
        };
      }
      case "Break":
      case "Continue": {
        if (frame.loopDepth === 0) {
          throw syntaxError(node.kind === "Break" ? "'break' outside loop" : "'continue' not properly in loop", node.lineno, "SyntaxError");
        }
        const code = node.kind === "Break" ? BREAK : CONTINUE;
        return () => code;
      }
      case "Block": {
        const name = node.name;
        if (node.required) {
          const msg = `Required block '${name}' not found`;
          return () => {
            throw runtimeError(msg);
          };
        }
        if (!node.scoped) {
          return (rs) => {
            if (++rs.steps > rs.maxSteps) rs.stepFail();
            this.runBlock(rs, name, null);
            return OK;
          };
        }
        // scoped: the block also sees the locals stored so far (Jinja2's derived context)
        const locals: Array<[string, Loc]> = [];
        const seen = new Set<string>();
        for (let sym: Symbols | null = frame.symbols; sym !== null; sym = sym.parent) {
          for (const n of [...sym.stores].sort()) {
            if (seen.has(n)) continue;
            seen.add(n);
            locals.push([n, locate(frame.func, frame.symbols.ref(n))]);
          }
        }
        return (rs, a) => {
          if (++rs.steps > rs.maxSteps) rs.stepFail();
          const ov = new Map<string, unknown>();
          for (const [n, loc] of locals) {
            const v = actAt(a, loc.hops).s[loc.slot];
            if (v !== MISSING) ov.set(n, v);
          }
          this.runBlock(rs, name, ov);
          return OK;
        };
      }
      case "Extends":
      case "Include":
      case "Import":
      case "FromImport": {
        const tplExpr = this.expr(node.template, frame);
        return (rs, a) => {
          tplExpr(rs, a);
          throw typeError("no loader for this environment specified");
        };
      }
    }
  }

  protected output(node: OutputNode, frame: Frame): Ex {
    const parts: Array<string | Ev> = [];
    let chunks = 0;
    for (const n of node.nodes) {
      const c = n.kind === "TemplateData" ? n.data : this.constOutput(n, frame);
      if (c !== null) {
        const last = parts[parts.length - 1];
        if (typeof last === "string") parts[parts.length - 1] = last + c;
        else {
          parts.push(c);
          chunks++;
        }
      } else {
        parts.push(this.expr(n, frame));
        chunks++;
      }
    }
    const ae: boolean | null = frame.volatile ? null : frame.autoescape;
    const toText = (rs: RenderState, v: unknown): string => {
      if (ae === true || (ae === null && rs.autoescape)) return markupEscape(v).s;
      return typeof v === "string" ? v : pyStr(v, rs);
    };
    // every piece written is charged to the build budget: its length and its rope node
    if (parts.length === 1) {
      const p = parts[0] as string | Ev;
      if (typeof p === "string") {
        const cost = p.length + PIECE_UNITS;
        return (rs) => {
          if (++rs.steps > rs.maxSteps) rs.stepFail();
          if ((rs.built += cost) > rs.maxBuilt) rs.buildFail(rs.built);
          rs.out += p;
          rs.chunks++;
          if (rs.out.length > rs.maxChars) rs.checkSize(rs.out.length);
          return OK;
        };
      }
      if (ae === false) {
        return (rs, a) => {
          if (++rs.steps > rs.maxSteps) rs.stepFail();
          const v = p(rs, a);
          const t = typeof v === "string" ? v : pyStr(v, rs);
          if ((rs.built += t.length + PIECE_UNITS) > rs.maxBuilt) rs.buildFail(rs.built);
          rs.out += t;
          rs.chunks++;
          if (rs.out.length > rs.maxChars) rs.checkSize(rs.out.length);
          return OK;
        };
      }
    }
    const arr = parts;
    const n = arr.length;
    const pieces = n * PIECE_UNITS;
    return (rs, a) => {
      if (++rs.steps > rs.maxSteps) rs.stepFail();
      // (the pieces exist already; what appending them adds is charged once, for the statement)
      const n0 = rs.out.length;
      for (let i = 0; i < n; i++) {
        const p = arr[i] as string | Ev;
        if (typeof p === "string") rs.out += p;
        else rs.out += toText(rs, p(rs, a));
      }
      rs.chunks += chunks;
      if ((rs.built += rs.out.length - n0 + pieces) > rs.maxBuilt) rs.buildFail(rs.built);
      if (rs.out.length > rs.maxChars) rs.checkSize(rs.out.length);
      return OK;
    };
  }

  protected ifStmt(node: IfNode, frame: Frame): Ex {
    const soft = frame.soft();
    const test = (t: Expr): Ev => this.ifTest(t, soft);
    const branches: Array<[Ev, Ex]> = [[test(node.test), this.stmts(node.body, soft)]];
    for (const e of node.elif_) branches.push([test(e.test), this.stmts(e.body, soft)]);
    const orelse = node.else_.length > 0 ? this.stmts(node.else_, soft) : null;
    if (branches.length === 1) {
      const [t, b] = branches[0] as [Ev, Ex];
      if (orelse === null) {
        return (rs, a) => {
          if (++rs.steps > rs.maxSteps) rs.stepFail();
          return t(rs, a) === true ? b(rs, a) : OK;
        };
      }
      return (rs, a) => {
        if (++rs.steps > rs.maxSteps) rs.stepFail();
        return t(rs, a) === true ? b(rs, a) : orelse(rs, a);
      };
    }
    return (rs, a) => {
      if (++rs.steps > rs.maxSteps) rs.stepFail();
      for (let i = 0; i < branches.length; i++) {
        const br = branches[i] as [Ev, Ex];
        if (br[0](rs, a) === true) return br[1](rs, a);
      }
      return orelse === null ? OK : orelse(rs, a);
    };
  }

  /**
   * The frames of a for loop (body and else) with their symbols analyzed, as Jinja2's
   * CodeGenerator sets them up; whether the body uses the `loop` variable (`extended`) and its
   * slot (-1 when not). Shared by the plain and the tracked loop.
   */
  /** The test of an `if` / `elif` branch. */
  protected ifTest(t: Expr, frame: Frame): Ev {
    return this.cond(t, frame);
  }

  protected loopFrames(node: ForNode, frame: Frame): { loopFrame: Frame; elseFrame: Frame; extended: boolean; loopSlot: number } {
    const loopFrame = frame.inner(node.recursive ? new FuncScope(frame.func) : frame.func);
    loopFrame.loopFrame = true;
    const elseFrame = frame.inner(loopFrame.func);
    if (node.recursive) elseFrame.loopDepth = 0;
    loopFrame.loopDepth = (node.recursive ? 0 : frame.loopDepth) + 1;

    const extended =
      node.recursive || findUndeclared(node.body, ["loop"]).has("loop") || findAll(node, "Block").some((b) => (b as { scoped: boolean }).scoped);
    for (const n of findAll(node, "Name")) {
      const nn = n as { name: string; ctx: string; lineno: number };
      if (nn.ctx === "store" && nn.name === "loop") {
        throw syntaxError("Can't assign to special loop variable in for-loop target", nn.lineno, "TemplateAssertionError");
      }
    }
    let loopSlot = -1;
    if (extended) loopFrame.symbols.declareParameter("loop");
    loopFrame.symbols.analyzeNode(node, "body");
    if (node.else_.length > 0) elseFrame.symbols.analyzeNode(node, "else");
    loopFrame.register();
    if (extended) loopSlot = locate(loopFrame.func, loopFrame.symbols.ref("loop")).slot;
    return { loopFrame, elseFrame, extended, loopSlot };
  }

  protected forStmt(node: ForNode, frame: Frame): Ex {
    const { loopFrame, elseFrame, extended, loopSlot } = this.loopFrames(node, frame);

    // the optional `if` filter: a nested generator function with the test frame
    let filterFn: ((rs: RenderState, a: Act, src: unknown[] | PyIter) => PyIter) | null = null;
    if (node.test !== null) {
      const testScope = new FuncScope(frame.func);
      const testFrame = frame.inner(testScope);
      testFrame.symbols.analyzeNode(node, "test");
      testFrame.register();
      const testEnter = this.enterFrame(testFrame);
      const testTarget = this.assignTarget(node.target, testFrame);
      const repack = this.targetValue(node.target, testFrame);
      const test = this.cond(node.test, testFrame);
      filterFn = (rs, a, src) => {
        const gen = function* (): Generator<unknown> {
          const ta: Act = { s: mkSlots(testScope.n), up: a };
          testEnter(rs, ta);
          if (Array.isArray(src)) {
            for (let i = 0; i < src.length; i++) {
              testTarget(rs, ta, src[i]);
              if (test(rs, ta) === true) yield repack(rs, ta);
            }
          } else {
            for (let r = src.next(); !r.done; r = src.next()) {
              testTarget(rs, ta, r.value);
              if (test(rs, ta) === true) yield repack(rs, ta);
            }
          }
        };
        return new PyIter("generator", gen());
      };
    }

    const iterEv = this.expr(node.iter, frame);
    const target = this.assignTarget(node.target, loopFrame);
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

    /** Runs the loop over `src` in activation `a`; returns a control code for the enclosing loop. */
    const runLoop = (rs: RenderState, a: Act, srcIn: unknown[] | PyIter, recurse: RecurseFn | null, depth0: number): number => {
      // (a loop run: its loop context and iteration state; the tracked loop charges the same)
      rs.charge(OBJECT_UNITS);
      const src = filterFn !== null ? filterFn(rs, a, srcIn) : srcIn;
      let iterated = false;
      let ctl = OK;
      if (extended) {
        a.s[loopSlot] = MISSING;
        const lc = new LoopContext(src, recurse, depth0, rs);
        if (Array.isArray(src)) {
          const n = src.length;
          for (let i = 0; i < n; i++) {
            if (++rs.steps > rs.maxSteps) rs.stepFail();
            const item = src[i];
            lc.setIndex(i, item);
            target(rs, a, item);
            a.s[loopSlot] = lc;
            enter(rs, a);
            const mark = rs.marks === null ? -1 : markStart(rs, item);
            const r = body(rs, a);
            if (mark >= 0) markEnd(rs, item, mark);
            if (r === BREAK) break;
            if (r === CONTINUE) continue;
            iterated = true;
          }
        } else {
          for (;;) {
            const item = lc.nextItem();
            if (item === MISSING) break;
            if (++rs.steps > rs.maxSteps) rs.stepFail();
            target(rs, a, item);
            a.s[loopSlot] = lc;
            enter(rs, a);
            const r = body(rs, a);
            if (r === BREAK) break;
            if (r === CONTINUE) continue;
            iterated = true;
          }
        }
      } else if (Array.isArray(src)) {
        const n = src.length;
        for (let i = 0; i < n; i++) {
          if (++rs.steps > rs.maxSteps) rs.stepFail();
          target(rs, a, src[i]);
          enter(rs, a);
          const mark = rs.marks === null ? -1 : markStart(rs, src[i]);
          const r = body(rs, a);
          if (mark >= 0) markEnd(rs, src[i], mark);
          if (r === BREAK) break;
          if (r === CONTINUE) continue;
          iterated = true;
        }
      } else {
        for (let it = src.next(); !it.done; it = src.next()) {
          if (++rs.steps > rs.maxSteps) rs.stepFail();
          target(rs, a, it.value);
          enter(rs, a);
          const r = body(rs, a);
          if (r === BREAK) break;
          if (r === CONTINUE) continue;
          iterated = true;
        }
      }
      leaveLoop(a);
      if (hasElse && !iterated) {
        (elseEnter as (rs: RenderState, a: Act) => void)(rs, a);
        ctl = (elseBody as Ex)(rs, a);
        (elseLeave as (a: Act) => void)(a);
      }
      return ctl;
    };

    if (!node.recursive) {
      return (rs, a) => runLoop(rs, a, pyIter(iterEv(rs, a), rs), null, 0);
    }
    const scope = loopFrame.func;
    return (rs, a) => {
      const recurse: RecurseFn = (rs2, iterable, depth) => {
        rs2.enterCall(true);
        rs2.beginCapture();
        try {
          const la: Act = { s: mkSlots(scope.n), up: a };
          runLoop(rs2, la, pyIter(iterable, rs2), recurse, depth);
        } catch (e) {
          rs2.abortCapture();
          rs2.depth--;
          throw e;
        }
        rs2.depth--;
        return rs2.endCapture();
      };
      const out = recurse(rs, iterEv(rs, a), 0);
      rs.charge(out.length + PIECE_UNITS);
      rs.out += out;
      rs.chunks++;
      return OK;
    };
  }

  /** Value of an assignment target read back (used to re-pack filtered loop items). */
  protected targetValue(t: Expr, frame: Frame): Ev {
    if (t.kind === "Tuple") {
      const items = t.items.map((x) => this.targetValue(x, frame));
      const cost = items.length * ITEM_UNITS + TUPLE_UNITS;
      return (rs, a) => {
        rs.charge(cost);
        return mkTuple(items.map((f) => f(rs, a)));
      };
    }
    if (t.kind === "Name") {
      const loc = locate(frame.func, frame.symbols.ref(t.name));
      return (_rs, a) => actAt(a, loc.hops).s[loc.slot];
    }
    return () => null;
  }

  protected assignTarget(t: Expr, frame: Frame): (rs: RenderState, a: Act, v: unknown, p?: unknown) => void {
    switch (t.kind) {
      case "Name": {
        const ident = frame.symbols.ref(t.name);
        const { hops, slot } = locate(frame.func, ident);
        const name = t.name;
        if (frame.toplevel) {
          return (rs, a, v) => {
            actAt(a, hops).s[slot] = v;
            rs.ctxVars.set(name, v);
          };
        }
        if (hops === 0) {
          return (_rs, a, v) => {
            a.s[slot] = v;
          };
        }
        return (_rs, a, v) => {
          actAt(a, hops).s[slot] = v;
        };
      }
      case "Tuple": {
        const subs = t.items.map((x) => this.assignTarget(x, frame));
        const n = subs.length;
        return (rs, a, v) => {
          const items = unpack(rs, v, n);
          for (let i = 0; i < n; i++) (subs[i] as (rs: RenderState, a: Act, v: unknown) => void)(rs, a, items[i]);
        };
      }
      case "NSRef": {
        const { hops, slot } = locate(frame.func, frame.symbols.ref(t.name));
        const attr = t.attr;
        return (_rs, a, v) => {
          const ns = actAt(a, hops).s[slot];
          if (!(ns instanceof Namespace)) throw runtimeError("cannot assign attribute on non-namespace object");
          ns.attrs.set(attr, v);
        };
      }
      default:
        throw syntaxError(`can't assign to ${t.kind.toLowerCase()}`, t.lineno);
    }
  }

  protected assignBlock(node: AssignBlockNode, frame: Frame): Ex {
    const blockFrame = frame.inner();
    blockFrame.symbols.analyzeNode(node);
    const enter = this.enterFrame(blockFrame);
    const body = this.stmts(node.body, blockFrame);
    const filter = node.filter !== null ? this.filterCall(node.filter, blockFrame) : null;
    const target = this.assignTarget(node.target, frame);
    const leave = this.leaveFrame(blockFrame);
    return (rs, a) => {
      if (++rs.steps > rs.maxSteps) rs.stepFail();
      enter(rs, a);
      rs.beginCapture();
      let r: number;
      try {
        r = body(rs, a);
      } catch (e) {
        rs.abortCapture();
        throw e;
      }
      if (r !== OK) {
        rs.abortCapture();
        return r;
      }
      const text = rs.endCapture();
      // Jinja2 decides this at runtime: (Markup if context.eval_ctx.autoescape else identity)
      const markup = rs.autoescape;
      const captured = markup ? new Markup(text) : text;
      const value = filter !== null ? filter(rs, a, captured) : captured;
      target(rs, a, markup ? new Markup(strOf(value as string)) : value);
      leave(a);
      return OK;
    };
  }

  protected filterBlock(node: FilterBlockNode, frame: Frame): Ex {
    const filterFrame = frame.inner();
    filterFrame.symbols.analyzeNode(node);
    const enter = this.enterFrame(filterFrame);
    const body = this.stmts(node.body, filterFrame);
    const filter = this.filterCall(node.filter, filterFrame);
    const leave = this.leaveFrame(filterFrame);
    const ae: boolean | null = frame.volatile ? null : frame.autoescape;
    return (rs, a) => {
      if (++rs.steps > rs.maxSteps) rs.stepFail();
      enter(rs, a);
      rs.beginCapture();
      let r: number;
      try {
        r = body(rs, a);
      } catch (e) {
        rs.abortCapture();
        throw e;
      }
      if (r !== OK) {
        rs.abortCapture();
        return r;
      }
      const text = rs.endCapture();
      const v = filter(rs, a, ae === true || (ae === null && rs.autoescape) ? new Markup(text) : text);
      rs.writeChunk(v);
      if (rs.out.length > rs.maxChars) rs.checkSize(rs.out.length);
      leave(a);
      return OK;
    };
  }

  protected withStmt(node: WithNode, frame: Frame): Ex {
    const withFrame = frame.inner();
    withFrame.symbols.analyzeNode(node);
    const enter = this.enterFrame(withFrame);
    const pairs = node.targets.map((t, i) => [this.assignTarget(t, withFrame), this.expr(node.values[i] as Expr, frame)] as const);
    const body = this.stmts(node.body, withFrame);
    const leave = this.leaveFrame(withFrame);
    return (rs, a) => {
      if (++rs.steps > rs.maxSteps) rs.stepFail();
      enter(rs, a);
      for (const [t, v] of pairs) t(rs, a, v(rs, a));
      const r = body(rs, a);
      leave(a);
      return r;
    };
  }

  /** Jinja2 macro_body: the macro function of a `{% macro %}` or a call block's caller. */
  protected macroDef(node: MacroNode | CallBlockNode, frame: Frame): MacroDef {
    const scope = new FuncScope(frame.func);
    const mframe = frame.inner(scope);
    const seenArgs = new Set<string>();
    for (const arg of node.args) {
      if (seenArgs.has(arg.name)) {
        throw syntaxError(`duplicate argument 'l_${mframe.symbols.level}_${arg.name}' in function definition`, node.lineno, "SyntaxError");
      }
      seenArgs.add(arg.name);
    }
    mframe.symbols.analyzeNode(node);
    let explicitCaller = -1;
    const skipSpecial = new Set<string>();
    node.args.forEach((arg, idx) => {
      if (arg.name === "caller") explicitCaller = idx;
      if (arg.name === "kwargs" || arg.name === "varargs") skipSpecial.add(arg.name);
    });
    const undeclared = findUndeclared(node.body, ["caller", "kwargs", "varargs"]);
    let accessesCaller = false;
    let accessesKwargs = false;
    let accessesVarargs = false;
    if (undeclared.has("caller")) {
      if (explicitCaller >= 0) {
        if (node.defaults[explicitCaller - node.args.length + node.defaults.length] === undefined || explicitCaller - node.args.length + node.defaults.length < 0) {
          throw syntaxError('When defining macros or call blocks the special "caller" argument must be omitted or be given a default.', node.lineno, "TemplateAssertionError");
        }
      } else mframe.symbols.declareParameter("caller");
      accessesCaller = true;
    }
    if (undeclared.has("kwargs") && !skipSpecial.has("kwargs")) {
      mframe.symbols.declareParameter("kwargs");
      accessesKwargs = true;
    }
    if (undeclared.has("varargs") && !skipSpecial.has("varargs")) {
      mframe.symbols.declareParameter("varargs");
      accessesVarargs = true;
    }
    mframe.symbols.analyzeNode(node);
    mframe.register();
    const argSlots = node.args.map((arg) => locate(scope, mframe.symbols.ref(arg.name)).slot);
    const slotOf = (name: string, on: boolean): number => (on ? locate(scope, mframe.symbols.ref(name)).slot : -1);
    const enter = this.enterFrame(mframe);
    // Default expressions see parameters not bound yet as undefined (Jinja2's parameter tracking).
    const paramIdents: string[] = [];
    for (const [ident, load] of mframe.symbols.loads) if (load.kind === "param") paramIdents.push(ident);
    const argIdents = node.args.map((arg) => mframe.symbols.ref(arg.name));
    const nd = node.defaults.length;
    const defaults = node.defaults.map((d, j) => {
      const idx = node.args.length - nd + j;
      const df = mframe.copy();
      df.undeclaredParams = new Set(paramIdents.filter((p) => !argIdents.slice(0, idx).includes(p)));
      return this.expr(d, df);
    });
    const body = this.stmts(node.body, mframe);
    return {
      name: node.kind === "Macro" ? node.name : null,
      args: node.args.map((x) => x.name),
      argSlots,
      defaults,
      catchKwargs: accessesKwargs,
      catchVarargs: accessesVarargs,
      accessesCaller,
      callerSlot: slotOf("caller", accessesCaller && explicitCaller < 0),
      kwargsSlot: slotOf("kwargs", accessesKwargs),
      varargsSlot: slotOf("varargs", accessesVarargs),
      get nslots() {
        return scope.n;
      },
      enter,
      body: (rs, a) => {
        body(rs, a);
      },
      instrumented: frame.instrumented,
    };
  }

  protected macroStmt(node: MacroNode, frame: Frame): Ex {
    const def = this.macroDef(node, frame);
    const ident = frame.symbols.ref(node.name);
    const { hops, slot } = locate(frame.func, ident);
    const name = node.name;
    const top = frame.toplevel;
    return (rs, a) => {
      rs.charge(OBJECT_UNITS);
      const m = new Macro(def, a);
      if (top) rs.ctxVars.set(name, m);
      actAt(a, hops).s[slot] = m;
      return OK;
    };
  }

  protected callBlock(node: CallBlockNode, frame: Frame): Ex {
    const def = this.macroDef(node, frame);
    if (node.generation) {
      return (rs, a) => {
        if (++rs.steps > rs.maxSteps) rs.stepFail();
        rs.charge(OBJECT_UNITS);
        const caller = new Macro(def, a);
        const rv = caller.call(rs, [], null);
        const text = typeof rv === "string" ? rv : strOf(rv as Markup);
        // the text written, and the span kept
        rs.charge(text.length + PIECE_UNITS + TUPLE_UNITS);
        const start = rs.rootLength();
        rs.generation.push([start, start + text.length]);
        if (rs.observer !== null) rs.observer.genSpan(start, start + text.length);
        rs.out += text;
        rs.chunks++;
        if (rs.out.length > rs.maxChars) rs.checkSize(rs.out.length);
        return OK;
      };
    }
    const call = node.call as Extract<Expr, { kind: "Call" }>;
    const callee = this.expr(call.node, frame);
    const args = this.callArgs(call, frame);
    return (rs, a) => {
      if (++rs.steps > rs.maxSteps) rs.stepFail();
      rs.charge(OBJECT_UNITS);
      const caller = new Macro(def, a);
      const fn = callee(rs, a);
      const [pos, kw] = args(rs, a);
      const kwargs = kw === null ? new Map<string, unknown>() : kw;
      kwargs.set("caller", caller);
      const v = callValue(rs, fn, pos, kwargs);
      rs.writeChunk(v);
      if (rs.out.length > rs.maxChars) rs.checkSize(rs.out.length);
      return OK;
    };
  }
}

/** Internal: compile a parsed template into its plain closures. */
export function compileTree(tpl: TemplateNode): CompiledRoot {
  return new Compiler().compile(tpl);
}

