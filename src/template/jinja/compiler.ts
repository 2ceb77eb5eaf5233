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
 * Layer: template.
 */
import type {
  AnyNode,
  AssignBlockNode,
  CallArgs,
  CallBlockNode,
  CompareOp,
  Expr,
  FilterBlockNode,
  FilterNode,
  ForNode,
  IfNode,
  MacroNode,
  OutputNode,
  Stmt,
  TemplateNode,
  TestNode,
  WithNode,
} from "./ast.js";
import { FILTERS, TESTS } from "./filters.js";
import type { FilterFn, TestFn } from "./filters.js";
import { PyError, runtimeError, syntaxError, typeError, valueError } from "./pyerror.js";
import {
  ENTRY_UNITS,
  ITEM_UNITS,
  OBJECT_UNITS,
  PIECE_UNITS,
  TUPLE_UNITS,
  dictGet,
  dictItems,
  dictKeys,
  dictSize,
  isDict,
  isPlainDict,
  dictSet,
  isStr,
  newDict,
  pyAdd,
  pyCompare,
  pyContains,
  pyEq,
  pyFloorDiv,
  pyIter,
  pyMod,
  pyMul,
  pyNeg,
  pyPos,
  pyPow,
  pyStr,
  pySub,
  pyTrueDiv,
  strOf,
  truthy,
  typeName,
} from "./ops.js";
import { percentFormat } from "./format.js";
import { STR_METHODS } from "./methods.js";
import { LoopContext, Macro, RenderState, TemplateReference, UNSAFE, callValue, getAttr, getItem, pySlice, unsafeUndefined } from "./runtime.js";
import type { Act, MacroDef, RecurseFn } from "./runtime.js";
import { attrOf, loopAttr } from "./methods.js";
import { Frame as Unit, Path, Rec, dataGet, elemPaths, isContainer, type CondEv, type LoopEntry, type PosCond, type Tracker } from "../incremental/track.js";
import { Symbols, childNodes, findAll, findUndeclared } from "./symbols.js";
import { Cycler, DictView, Joiner, MISSING, Markup, Namespace, PY_MISSING, PyFunction, PyIter, PyRange, Undefined, mkTuple } from "./values.js";
import { PyFloat } from "../../json/values.js";
import { markupEscape, objectTypeRepr, pyRepr } from "./ops.js";

export type Ev = (rs: RenderState, a: Act) => unknown;

/**
 * Message marks: before an iteration over a message object of `messages` that runs on the root
 * output, the offset it starts at (else -1); after it, the mark is kept if the iteration wrote
 * something and the message has none yet.
 */
function markStart(rs: RenderState, item: unknown): number {
  if (typeof item !== "object" || item === null || rs.outStack.length !== 0) return -1;
  const i = (rs.marks as NonNullable<RenderState["marks"]>).index.get(item);
  return i === undefined || ((rs.marks as NonNullable<RenderState["marks"]>).starts[i] as number) >= 0 ? -1 : rs.out.length;
}

function markEnd(rs: RenderState, item: unknown, start: number): void {
  const m = rs.marks as NonNullable<RenderState["marks"]>;
  const i = m.index.get(item as object) as number;
  if (rs.outStack.length === 0 && rs.out.length > start && (m.starts[i] as number) < 0) {
    m.starts[i] = start;
    m.ends[i] = rs.out.length;
  }
}

/** Jinja2's nodes.Impossible: the expression is not a compile-time constant. */
class Impossible extends Error {}

/** In constant evaluation, what cannot be constant fails only when evaluated (as_const is lazy). */
const impossible = (): never => {
  throw new Impossible();
};

/** Filters Jinja2 will not fold at compile time (they take the template context). */
const PASS_ARG_FILTERS = new Set(["map", "random", "reject", "rejectattr", "select", "selectattr"]);
const PASS_ARG_TESTS = new Set<string>();
export type Ex = (rs: RenderState, a: Act) => number;

const OK = 0;
const BREAK = 1;
const CONTINUE = 2;

const OBJECT_PROTO = Object.prototype;
const hasOwn = Object.prototype.hasOwnProperty;
const DICT_METHOD_NAMES = new Set(["items", "keys", "values", "get", "copy", "fromkeys", "clear", "pop", "popitem", "setdefault", "update"]);

function mkSlots(n: number): unknown[] {
  const s: unknown[] = [];
  for (let i = 0; i < n; i++) s.push(MISSING);
  return s;
}

/** Slot allocation of one compiled function (Python function scope). */
class FuncScope {
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

class Frame {
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
  /** compiling the tracked closures of an incremental render */
  tracking = false;

  constructor(symbols: Symbols, func: FuncScope) {
    this.symbols = symbols;
    this.func = func;
  }

  inner(func: FuncScope = this.func): Frame {
    const f = new Frame(new Symbols(this.symbols), func);
    f.loopDepth = func === this.func ? this.loopDepth : 0;
    f.autoescape = this.autoescape;
    f.volatile = this.volatile;
    f.tracking = this.tracking;
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
    f.tracking = this.tracking;
    return f;
  }

  /** The same frame compiling plain (untracked) closures. */
  plain(): Frame {
    const f = this.copy();
    f.tracking = false;
    return f;
  }

  /** Registers this frame's own identifiers as slots of its function. */
  register(): void {
    for (const ident of this.symbols.refs.values()) this.func.alloc(ident);
  }
}

interface Loc {
  hops: number;
  slot: number;
}

function locate(func: FuncScope, ident: string): Loc {
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

function actAt(a: Act, hops: number): Act {
  let x = a;
  for (let i = 0; i < hops; i++) x = x.up as Act;
  return x;
}

function seq(list: Ex[]): Ex {
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
function unpack(rs: RenderState, v: unknown, n: number): unknown[] {
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

const CONST_GLOBALS: ReadonlyMap<string, unknown> = new Map();
const NOT_CONST = Symbol("not-const");
/** Node kinds whose tracked value may keep the path of caller data (texpr). */
const PATHY = new Set(["Name", "Getattr", "Getitem", "Filter", "Call", "CondExpr", "And", "Or"]);
/** Node kinds Jinja2's code generator passes through the optimizer (@optimizeconst). */
const FOLDABLE = new Set(["Bin", "And", "Or", "Not", "Neg", "Pos", "Concat", "Compare", "Getattr", "Getitem", "Filter", "Test", "CondExpr"]);

/** True for the inner part of `{% filter a|b %}` chains: filters applied to the block body. */
function filterChainOnBlock(node: FilterNode): boolean {
  let n: Expr | null = node;
  while (n !== null && n.kind === "Filter") n = n.node;
  return n === null;
}

/** jinja2.compiler.has_safe_repr: values Jinja2 may turn into constants. */
function hasSafeRepr(v: unknown): boolean {
  if (v === null || typeof v === "boolean" || typeof v === "number" || typeof v === "bigint" || typeof v === "string") return true;
  if (v instanceof PyFloat || v instanceof Markup || v instanceof PyRange) return true;
  if (Array.isArray(v)) return v.every(hasSafeRepr);
  if (isDict(v)) return (dictItems(v) as unknown[][]).every(([k, x]) => hasSafeRepr(k) && hasSafeRepr(x));
  return false;
}
const CONST_LIMITS = { maxSteps: 100_000, maxOutputChars: 1_000_000, maxDepth: 50, maxBuildUnits: 4_000_000 };

export interface CompiledRoot {
  nslots: number;
  run: (rs: RenderState) => void;
  /** tracked compiles: plain evaluators of condition/set observations, by id */
  conds: CondEv[];
  /** tracked compiles: by condition id, the form `loop.index0 <op> E` when the test has it */
  condPos: Array<PosCond | undefined>;
}

/** Tracked renders: the tracker (always set when tracked closures run). */
function tkOf(rs: RenderState): Tracker {
  return rs.tk as Tracker;
}

/** Tracked slot write: value, path and (root activation) write serial. */
function setSlotT(tk: Tracker, act: Act, slot: number, v: unknown, p: Path | null): void {
  act.s[slot] = v;
  (act.p as Array<Path | null>)[slot] = p;
  if (act === tk.root) tk.root.w[slot] = tk.serial++;
}

/** Tracked slot read: observes external root-activation state; the value's path goes to tk.lp. */
function readSlotT(tk: Tracker, act: Act, slot: number, nsref = false): unknown {
  const v = act.s[slot];
  const p = (act.p as Array<Path | null>)[slot] ?? null;
  if (act === tk.root) tk.readRoot(slot, v, p, nsref);
  else if (tk.cur !== null) tk.taint = true;
  tk.lp = p;
  return v;
}

function nulls(n: number): Array<Path | null> {
  return new Array<Path | null>(n).fill(null);
}

/** Filters whose use on a path value drops the elements' origin (observed whole, counted as fallbacks). */
const DERIVING_FILTERS = new Set(["selectattr", "rejectattr", "select", "reject", "map", "groupby", "sort", "unique", "dictsort", "batch", "slice", "sum", "join", "min", "max"]);
/** Tests that only look at a value's type (observed already when a path value was obtained). */
const TYPE_TESTS = new Set(["defined", "undefined", "none", "string", "mapping", "sequence", "iterable", "number", "integer", "float", "boolean", "true", "false", "callable", "escaped"]);

/** Contains a loop that may run in the root activation (not inside a macro or capture). */
function hasRootLoop(node: AnyNode): boolean {
  if (node.kind === "For") return true;
  if (node.kind === "Macro" || node.kind === "CallBlock" || node.kind === "FilterBlock" || node.kind === "AssignBlock" || node.kind === "Block") return false;
  for (const c of childNodes(node)) if (hasRootLoop(c)) return true;
  return false;
}

/**
 * An expression that cannot fail when its inputs have the types they had: integer constants,
 * names, loop positions and lengths of names, combined by + - and unary minus.
 */
function isTotalIntExpr(e: Expr): boolean {
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
interface Items {
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
function isDataKey(k: unknown): k is string | number | boolean {
  return typeof k === "string" || (typeof k === "number" && Number.isInteger(k)) || typeof k === "boolean";
}

function isSliceArg(v: unknown): boolean {
  return v === null || (typeof v === "number" && Number.isInteger(v)) || typeof v === "boolean";
}

/** getattr on caller data at path `p`: dict keys are observed, methods bound to the data observe it whole. */
function tDataAttr(rs: RenderState, tk: Tracker, o: unknown, p: Path, attr: string, dataKey: boolean): unknown {
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
function tLoopAttr(rs: RenderState, tk: Tracker, lc: LoopContext, attr: string): unknown {
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
function tPostCall(tk: Tracker, fn: unknown, pos: unknown[], kw: Map<string, unknown> | null, r: unknown): unknown {
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

/** One comparison operator of a Jinja comparison chain, Python-exactly (`x op y`). */
function compareOp(op: CompareOp, x: unknown, y: unknown): boolean {
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

export class Compiler {
  private readonly blocks = new Map<string, { scope: FuncScope; enter: (rs: RenderState, a: Act) => void; body: Ex }>();
  private readonly tracking: boolean;
  private rootScope: FuncScope | null = null;
  private readonly loopIds = new Map<ForNode, number>();
  private readonly conds: CondEv[] = [];
  private readonly condPos: Array<PosCond | undefined> = [];

  constructor(tracking = false) {
    this.tracking = tracking;
  }

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
      frame.tracking = this.tracking;
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
    frame.tracking = this.tracking;
    const usesSelf = findUndeclared(tpl.body, ["self"]).has("self");
    if (usesSelf) frame.symbols.declareParameter("self");
    frame.toplevel = true;
    frame.symbols.analyzeNode(tpl);
    frame.register();
    const selfSlot = usesSelf ? locate(scope, frame.symbols.ref("self")).slot : -1;
    const enter = this.enterFrame(frame);
    if (this.tracking) {
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
    const body = this.stmts(tpl.body, frame);
    return {
      nslots: scope.n,
      conds: [],
      condPos: [],
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
  private runBlock(rs: RenderState, name: string, overlay: Map<string, unknown> | null): void {
    const b = this.blocks.get(name) as { scope: FuncScope; enter: (rs: RenderState, a: Act) => void; body: Ex };
    const act: Act = { s: mkSlots(b.scope.n), up: null };
    if (this.tracking) {
      act.p = nulls(b.scope.n);
      // locals a scoped block sees are read without observation: its unit cannot be reused
      if (overlay !== null) tkOf(rs).markBad();
    }
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

  /** self.<block>(): the block's output as a string. */
  private renderBlock(rs: RenderState, name: string): string {
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

  private enterFrame(frame: Frame): (rs: RenderState, a: Act) => void {
    frame.register();
    const ops: Array<(rs: RenderState, a: Act) => void> = [];
    const tracking = frame.tracking;
    for (const [ident, load] of frame.symbols.loads) {
      const loc = locate(frame.func, ident);
      if (loc.hops !== 0) throw new Error("internal: frame load outside its function");
      const slot = loc.slot;
      switch (load.kind) {
        case "param":
          break;
        case "resolve": {
          const name = load.name;
          if (tracking) {
            ops.push((rs, a) => {
              const tk = tkOf(rs);
              const v = tk.resolveT(name);
              setSlotT(tk, a, slot, v, tk.lp);
            });
            break;
          }
          ops.push((rs, a) => {
            a.s[slot] = rs.resolve(name);
          });
          break;
        }
        case "alias": {
          const src = locate(frame.func, load.ident);
          const h = src.hops;
          const ss = src.slot;
          if (tracking) {
            ops.push((rs, a) => {
              const tk = tkOf(rs);
              const v = readSlotT(tk, actAt(a, h), ss);
              setSlotT(tk, a, slot, v, tk.lp);
            });
            break;
          }
          ops.push((_rs, a) => {
            a.s[slot] = actAt(a, h).s[ss];
          });
          break;
        }
        case "undefined":
          if (tracking) {
            ops.push((rs, a) => setSlotT(tkOf(rs), a, slot, MISSING, null));
            break;
          }
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

  private leaveFrame(frame: Frame): (a: Act) => void {
    const slots: number[] = [];
    for (const ident of frame.symbols.loads.keys()) slots.push(locate(frame.func, ident).slot);
    if (slots.length === 0) return () => undefined;
    if (frame.tracking) {
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
    return (a) => {
      for (let i = 0; i < slots.length; i++) a.s[slots[i] as number] = MISSING;
    };
  }

  // ---- statements ---------------------------------------------------------------------------

  private stmts(list: Stmt[], frame: Frame): Ex {
    return seq(list.map((s) => this.stmt(s, frame)));
  }

  private stmt(node: Stmt, frame: Frame): Ex {
    switch (node.kind) {
      case "Output":
        return this.output(node, frame);
      case "If":
        return this.ifStmt(node, frame);
      case "For":
        return frame.tracking ? this.tForStmt(node, frame) : this.forStmt(node, frame);
      case "Assign": {
        if (frame.tracking) return this.tAssign(node, frame);
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

  /**
   * Jinja2 folds constant output expressions at compile time with `as_const`, which looks up
   * items through the sandbox's getitem even for slices (`{{ none[0:1] }}` prints "" instead of
   * raising). Returns the folded text, or null when the expression is not constant.
   */
  private constOutput(node: Expr, frame: Frame): string | null {
    const v = this.constValue(node, frame);
    if (v === NOT_CONST) return null;
    try {
      return frame.autoescape ? markupEscape(v).s : pyStr(v);
    } catch {
      return null;
    }
  }

  /** Compile-time value of a constant expression (Jinja2's as_const), or NOT_CONST. */
  private constValue(node: Expr, frame: Frame): unknown {
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

  private tryFold(node: Expr, frame: Frame): unknown {
    const v = this.constValue(node, frame);
    return v !== NOT_CONST && hasSafeRepr(v) ? v : NOT_CONST;
  }

  private output(node: OutputNode, frame: Frame): Ex {
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

  private ifStmt(node: IfNode, frame: Frame): Ex {
    const soft = frame.soft();
    const test = (t: Expr): Ev => (frame.tracking ? this.tCond(t, soft) : this.cond(t, soft));
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

  /** An expression evaluated for its truth value (returns a JS boolean). */
  private cond(node: Expr, frame: Frame): Ev {
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
        if (frame.tracking && !frame.constMode) {
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
        const e = this.expr(node, frame);
        return (rs, a) => {
          const v = e(rs, a);
          return typeof v === "boolean" ? v : truthy(v);
        };
      }
    }
  }

  /**
   * The frames of a for loop (body and else) with their symbols analyzed, as Jinja2's
   * CodeGenerator sets them up; whether the body uses the `loop` variable (`extended`) and its
   * slot (-1 when not). Shared by the plain and the tracked loop.
   */
  private loopFrames(node: ForNode, frame: Frame): { loopFrame: Frame; elseFrame: Frame; extended: boolean; loopSlot: number } {
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

  private forStmt(node: ForNode, frame: Frame): Ex {
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

  /**
   * Tracked loop. Run by a unit in the root activation over a list, each iteration is a unit of
   * its own: its record from the previous render (matched by the item's path, else by position)
   * is replayed when it validates, otherwise the body executes. Elsewhere (macros, captures,
   * filtered or recursive loops, iterators) the loop runs inside its unit.
   */
  private tForStmt(node: ForNode, frame: Frame): Ex {
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
      const lc = new LoopContext(src, recurse, depth0, rs);
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
      const lc = new LoopContext(src, null, 0, rs);
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
            r = reused.ctl;
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
        tk.loopStack[j] = savedLoop as LoopContext;
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

  /** Value of an assignment target read back (used to re-pack filtered loop items). */
  private targetValue(t: Expr, frame: Frame): Ev {
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

  private assignTarget(t: Expr, frame: Frame): (rs: RenderState, a: Act, v: unknown, p?: Path | null | Array<Path | null>) => void {
    if (frame.tracking) return this.tAssignTarget(t, frame);
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

  /** Whether tracked code compiled in `frame` runs in the root activation (where units run). */
  private inRootFunction(frame: Frame): boolean {
    return frame.func === this.rootScope;
  }

  /**
   * Tracked `{% set %}`. A primitive value computed only from state outside the unit is recorded
   * as a set observation (the expression is re-evaluated at validation) instead of its inputs.
   */
  private tAssign(node: Extract<Stmt, { kind: "Assign" }>, frame: Frame): Ex {
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
   * A tracked test (if / elif / ternary) with condition observations in the root function. The
   * whole test is a candidate; inside it each operand of `and` / `or` / `not` is one too (used
   * when the whole test reads state the unit set; a short-circuited operand is not evaluated, so
   * the operands recorded decide the result).
   */
  private tCond(node: Expr, frame: Frame): Ev {
    if (!this.inRootFunction(frame)) return this.cond(node, frame);
    const parts = this.tCondParts(node, frame);
    if (node.kind !== "And" && node.kind !== "Or" && node.kind !== "Not") return parts;
    return this.condRecorder(parts, node, frame);
  }

  private tCondParts(node: Expr, frame: Frame): Ev {
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
  private condRecorder(t: Ev, node: Expr, frame: Frame): Ev {
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
  private posCond(node: Expr, frame: Frame): PosCond | undefined {
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
  private exprDeps(node: Expr, frame: Frame): ExprDeps {
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

  /**
   * Tracked assignment: the value's path `p` goes with it (an array of element paths for
   * unpacking dict items in loops); top-level names are recorded as writes of the unit.
   */
  private tAssignTarget(t: Expr, frame: Frame): (rs: RenderState, a: Act, v: unknown, p?: Path | null | Array<Path | null>) => void {
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

  private assignBlock(node: AssignBlockNode, frame: Frame): Ex {
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

  private filterBlock(node: FilterBlockNode, frame: Frame): Ex {
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

  private withStmt(node: WithNode, frame: Frame): Ex {
    const withFrame = frame.inner();
    withFrame.symbols.analyzeNode(node);
    const enter = this.enterFrame(withFrame);
    const tracking = frame.tracking;
    const pairs = node.targets.map((t, i) => [this.assignTarget(t, withFrame), tracking ? this.texpr(node.values[i] as Expr, frame) : this.expr(node.values[i] as Expr, frame)] as const);
    const body = this.stmts(node.body, withFrame);
    const leave = this.leaveFrame(withFrame);
    return (rs, a) => {
      if (++rs.steps > rs.maxSteps) rs.stepFail();
      enter(rs, a);
      if (tracking) {
        for (const [t, v] of pairs) {
          const x = v(rs, a);
          t(rs, a, x, tkOf(rs).lp);
        }
      } else for (const [t, v] of pairs) t(rs, a, v(rs, a));
      const r = body(rs, a);
      leave(a);
      return r;
    };
  }

  /** Jinja2 macro_body: the macro function of a `{% macro %}` or a call block's caller. */
  private macroDef(node: MacroNode | CallBlockNode, frame: Frame): MacroDef {
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
      tracked: frame.tracking,
    };
  }

  private macroStmt(node: MacroNode, frame: Frame): Ex {
    const def = this.macroDef(node, frame);
    const ident = frame.symbols.ref(node.name);
    const { hops, slot } = locate(frame.func, ident);
    const name = node.name;
    const top = frame.toplevel;
    if (frame.tracking) {
      return (rs, a) => {
        const tk = tkOf(rs);
        rs.charge(OBJECT_UNITS);
        const m = new Macro(def, a);
        if (top) tk.writeRoot(slot, name, m, null);
        else setSlotT(tk, actAt(a, hops), slot, m, null);
        return OK;
      };
    }
    return (rs, a) => {
      rs.charge(OBJECT_UNITS);
      const m = new Macro(def, a);
      if (top) rs.ctxVars.set(name, m);
      actAt(a, hops).s[slot] = m;
      return OK;
    };
  }

  private callBlock(node: CallBlockNode, frame: Frame): Ex {
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
        if (rs.tk !== null) rs.tk.genSpan(start, start + text.length);
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

  // ---- expressions ----------------------------------------------------------------------------

  expr(node: Expr, frame: Frame): Ev {
    if (frame.tracking && !frame.constMode && PATHY.has(node.kind)) return this.whole(this.texpr(node, frame));
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

  // ---- tracked expressions ------------------------------------------------------------------

  /** A tracked value consumed whole: its path (if any) is observed whole. */
  private whole(ev: Ev): Ev {
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

  private nopath(ev: Ev): Ev {
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
  private texpr(node: Expr, frame: Frame): Ev {
    if (!frame.tracking || frame.constMode) return this.expr(node, frame);
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

  private tNameLoad(name: string, frame: Frame): Ev {
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

  private tGetattr(objNode: Expr, attr: string, frame: Frame): Ev {
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
      if (o instanceof LoopContext) return tLoopAttr(rs, tk, o, attr);
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

  private tGetitem(node: Extract<Expr, { kind: "Getitem" }>, frame: Frame): Ev {
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
  private tFilter(node: FilterNode, frame: Frame): Ev {
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
  private tCall(node: Extract<Expr, { kind: "Call" }>, frame: Frame): Ev {
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
        if (o instanceof LoopContext) {
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

  private nameLoad(name: string, frame: Frame): Ev {
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

  private binExpr(node: Extract<Expr, { kind: "Bin" }>, frame: Frame): Ev {
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

  private compare(first: Expr, ops: Array<{ op: CompareOp; expr: Expr }>, frame: Frame): Ev {
    if (frame.tracking && !frame.constMode) return this.tCompare(first, ops, frame);
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

  /** Tracked comparisons: `key in data_dict` observes the key; other operands on caller data are seen whole. */
  private tCompare(first: Expr, ops: Array<{ op: CompareOp; expr: Expr }>, frame: Frame): Ev {
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

  private getattr(objNode: Expr, attr: string, frame: Frame): Ev {
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
  private callArgs(node: CallArgs, frame: Frame): (rs: RenderState, a: Act) => [unknown[], Map<string, unknown> | null] {
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

  private call(node: Extract<Expr, { kind: "Call" }>, frame: Frame): Ev {
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
  private filterCall(node: FilterNode, frame: Frame): (rs: RenderState, a: Act, blockValue: unknown) => unknown {
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

  private test(node: TestNode, frame: Frame): Ev {
    const fn = TESTS.get(node.name);
    if (frame.constMode && (fn === undefined || frame.volatile || PASS_ARG_TESTS.has(node.name))) return impossible;
    let value: Ev;
    if (frame.tracking && !frame.constMode) {
      // a type test on caller data reads only its type, observed when the value was reached
      const tv = this.texpr(node.node, frame);
      value = TYPE_TESTS.has(node.name)
        ? (rs, a) => {
            const v = tv(rs, a);
            tkOf(rs).lp = null;
            return v;
          }
        : this.whole(tv);
    } else value = this.expr(node.node, frame);
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
}

/** Internal: compile a parsed template (tracked: the closures of incremental renders). */
export function compileTree(tpl: TemplateNode, tracking = false): CompiledRoot {
  return new Compiler(tracking).compile(tpl);
}

