/**
 * Render-time state and the objects that need it: RenderState (output buffer, budgets, the
 * template context), LoopContext (`loop`), Macro, and the sandboxed attribute/item/call protocol
 * of Jinja2's ImmutableSandboxedEnvironment.
 *
 * Evaluation state lives in explicit objects (RenderState, Act) — no module globals — so an
 * instrumenting compile pass (../incremental) can observe a render through RenderObserver.
 *
 * Layer: template/jinja.
 */
import { PyError, budgetError, typeError, valueError } from "./pyerror.js";
import { dataValue, failUndefined, isDict, pyEq, pyRepr, registerObjectInfo, strOf, typeName } from "./ops.js";
import { ENTRY_UNITS, ITEM_UNITS, OBJECT_UNITS, PIECE_UNITS, TUPLE_UNITS, type SizeGuard } from "./ops.js";
import { StrBuilder, cpArray, cpLen, cpToUnit, hasSurrogates } from "./pystr.js";
import { Joiner, MISSING, Markup, PyFunction, PyIter, PyRange, Undefined, isTuple, mkTuple } from "./values.js";

/**
 * An activation record: the slots of one compiled function call and its defining activation.
 * Activations of instrumented code (compiled by a subclass of the compiler, see
 * compiler.ts "Instrumentation") carry a tag per slot in `p` and, at the root, a number per slot
 * in `w`; the engine only allocates them.
 */
export interface Act {
  s: unknown[];
  up: Act | null;
  p?: unknown[];
  w?: number[];
}

/**
 * What the engine tells the observer of an instrumented render (RenderState.observer; null in
 * plain renders). The incremental tracker (../incremental) is one.
 */
export interface RenderObserver {
  /** an instrumented macro is about to run (the observer may refuse by throwing) */
  macroCall(): void;
  /** a parameter default of an instrumented macro was just evaluated to `v` */
  macroDefault(v: unknown): void;
  /** a joiner (a stateful callable) is called */
  joinerCall(j: Joiner): void;
  /** a `{% generation %}` span [start, end) of the root output was written */
  genSpan(start: number, end: number): void;
}

export interface Limits {
  maxSteps: number;
  maxOutputChars: number;
  maxDepth: number;
  /** the build budget: units (see ops.ts ITEM_UNITS …) every string, list or dict built is charged */
  maxBuildUnits: number;
}

/** Where each message's rendering began: see RenderState.marks. */
export interface MessageMarks {
  readonly index: Map<object, number>;
  readonly starts: number[];
  /** Where that iteration's output ended. */
  readonly ends: number[];
}

export class RenderState implements SizeGuard {
  /** current output buffer (the root output, or a capture for a macro/block/filter) */
  out = "";
  /** saved outer buffers while capturing; [0] is the root output */
  readonly outStack: string[] = [];
  /** chunks Python would have yielded into the current buffer so far */
  chunks = 0;
  /** deferred "sequence item N: expected str instance" failure of the current buffer */
  badChunk: string | null = null;
  private readonly chunkStack: Array<number | string | null> = [];
  steps = 0;
  depth = 0;
  /** build units charged so far (the output, and every string, list or dict built) */
  built = 0;
  readonly maxSteps: number;
  readonly maxChars: number;
  readonly maxDepth: number;
  readonly maxBuilt: number;
  /** the caller's render variables */
  readonly vars: Record<string, unknown>;
  /** Jinja2 context.vars: names set at template top level */
  readonly ctxVars = new Map<string, unknown>();
  readonly globals: ReadonlyMap<string, unknown>;
  /** strftime_now's clock (undefined: the current local time) */
  readonly now: Date | undefined;
  readonly generation: Array<[number, number]> = [];
  /** the runtime eval context's autoescape flag ({% autoescape %} scopes) */
  autoescape = false;
  /** locals visible to a scoped block being rendered (derived context) */
  overlay: Map<string, unknown> | null = null;
  /** root offset of the start of the current root buffer (incremental renders emit segments) */
  base = 0;
  /** the observer of an instrumented render (null: plain render) */
  observer: RenderObserver | null = null;
  /**
   * Message marks (trajectory tokenization): for each object of `messages`, the root-output offset
   * where the first loop iteration over it that produced output began (-1: never). null: off.
   */
  marks: MessageMarks | null = null;

  constructor(vars: Record<string, unknown>, globals: ReadonlyMap<string, unknown>, now: Date | undefined, limits: Limits) {
    this.vars = vars;
    this.globals = globals;
    this.now = now;
    this.maxSteps = limits.maxSteps;
    this.maxChars = limits.maxOutputChars;
    this.maxDepth = limits.maxDepth;
    this.maxBuilt = limits.maxBuildUnits;
  }

  checkSize(n: number): void {
    if (n > this.maxChars) throw budgetError(`output-size budget exceeded (${n} > ${this.maxChars} characters)`);
  }

  charge(n: number): void {
    const b = this.built + n;
    if (b > this.maxBuilt) this.buildFail(b);
    this.built = b;
  }

  /** The build budget is spent (`total`: what the render would have built). */
  buildFail(total: number): never {
    throw budgetError(`output-size budget exceeded (the render would build ${total} > ${this.maxBuilt} units in all)`);
  }

  buildStr(n: number): void {
    if (n > this.maxChars) this.checkSize(n);
    this.charge(n);
  }

  buildItems(n: number): void {
    const max = Math.floor(this.maxChars / 16);
    if (n > max) throw budgetError(`collection-size budget exceeded (${n} > ${max} items)`);
    this.charge(n * ITEM_UNITS);
  }

  room(): number {
    return this.maxBuilt - this.built;
  }

  stepFail(): never {
    throw budgetError(`step budget exceeded (${this.maxSteps} steps)`);
  }

  addSteps(n: number): void {
    this.steps += n;
    if (this.steps > this.maxSteps) this.stepFail();
  }

  /** Jinja2 context.resolve_or_missing */
  resolve(name: string): unknown {
    const ov = this.overlay;
    if (ov !== null && ov.has(name)) return ov.get(name);
    const cv = this.ctxVars;
    if (cv.size > 0 && cv.has(name)) return cv.get(name);
    const vars = this.vars;
    if (Object.prototype.hasOwnProperty.call(vars, name)) {
      const v = dataValue(vars[name]);
      if (v !== MISSING) return v;
    }
    const g = this.globals.get(name);
    return g === undefined ? MISSING : g;
  }

  beginCapture(): void {
    this.outStack.push(this.out);
    this.chunkStack.push(this.chunks, this.badChunk);
    this.out = "";
    this.chunks = 0;
    this.badChunk = null;
  }

  /** Ends a capture and returns what it produced (raising a deferred join failure). */
  endCapture(): string {
    const s = this.out;
    const bad = this.badChunk;
    this.out = this.outStack.pop() as string;
    this.badChunk = this.chunkStack.pop() as string | null;
    this.chunks = this.chunkStack.pop() as number;
    if (bad !== null) throw typeError(bad);
    return s;
  }

  /** Ends a capture after a failure (no deferred error). */
  abortCapture(): void {
    this.out = this.outStack.pop() as string;
    this.badChunk = this.chunkStack.pop() as string | null;
    this.chunks = this.chunkStack.pop() as number;
  }

  /** Writes a raw yielded value: a str is output, anything else fails when the buffer is joined. */
  writeChunk(v: unknown): void {
    if (typeof v === "string") {
      this.charge(v.length + PIECE_UNITS);
      this.out += v;
    } else if (v instanceof Markup) {
      this.charge(v.s.length + PIECE_UNITS);
      this.out += v.s;
    }
    else if (this.badChunk === null) this.badChunk = `sequence item ${this.chunks}: expected str instance, ${typeName(v)} found`;
    this.chunks++;
  }

  /** Length of the root output so far (what HF's generation tracker measures). */
  rootLength(): number {
    return this.base + (this.outStack.length > 0 ? (this.outStack[0] as string).length : this.out.length);
  }

  /**
   * One more nested macro / block / recursive-loop call. The default limit mirrors where CPython's
   * recursion limit stops Jinja2 (198 nested macro calls; a recursive loop's first call is free).
   */
  enterCall(loop = false): void {
    if (++this.depth > this.maxDepth + (loop ? 1 : 0)) {
      throw new PyError("RecursionError", "maximum recursion depth exceeded", "DT_TEMPLATE_BUDGET");
    }
  }
}

// ---- loop ----------------------------------------------------------------------------------

export type RecurseFn = (rs: RenderState, iterable: unknown, depth: number) => string;

/** jinja2.runtime.LoopContext */
export class LoopContext {
  index0 = -1;
  readonly depth0: number;
  /** sized iterables are snapshotted as arrays */
  protected readonly arr: unknown[] | null;
  private it: PyIter | null;
  private after: unknown = MISSING;
  private lengthCache = -1;
  private before: unknown = MISSING;
  private current: unknown = MISSING;
  private lastChanged: unknown = MISSING;
  readonly recurse: RecurseFn | null;

  /** what iterating an iterator's rest (for `length`) is charged to */
  protected readonly g: SizeGuard;

  constructor(src: unknown[] | PyIter, recurse: RecurseFn | null, depth0: number, g: SizeGuard) {
    this.g = g;
    if (Array.isArray(src)) {
      this.arr = src;
      this.it = null;
      this.lengthCache = src.length;
    } else {
      this.arr = null;
      this.it = src;
    }
    this.recurse = recurse;
    this.depth0 = depth0;
  }

  /** Advances (array mode): sets the current item. */
  setIndex(i: number, item: unknown): void {
    this.index0 = i;
    this.before = this.current;
    this.current = item;
  }

  /**
   * Array mode: moves to index `i` directly (the previous item is the array's, whatever index
   * was visited last) — for loops that skip over runs of replayed iterations.
   */
  seek(i: number): void {
    const arr = this.arr as unknown[];
    this.index0 = i;
    this.before = i > 0 ? arr[i - 1] : MISSING;
    this.current = arr[i];
  }

  /** The current item (the loop variable's value). */
  get currentItem(): unknown {
    return this.current;
  }

  /** Iterator mode: next item or MISSING. */
  nextItem(): unknown {
    let rv: unknown;
    if (this.after !== MISSING) {
      rv = this.after;
      this.after = MISSING;
    } else {
      const r = (this.it as PyIter).next();
      if (r.done) return MISSING;
      rv = r.value;
    }
    this.index0++;
    this.before = this.current;
    this.current = rv;
    return rv;
  }

  private peek(): unknown {
    if (this.arr !== null) return this.index0 + 1 < this.arr.length ? this.arr[this.index0 + 1] : MISSING;
    if (this.after !== MISSING) return this.after;
    const r = (this.it as PyIter).next();
    this.after = r.done ? MISSING : r.value;
    return this.after;
  }

  get length(): number {
    if (this.lengthCache >= 0) return this.lengthCache;
    const rest: unknown[] = [];
    const it = this.it as PyIter;
    for (let r = it.next(); !r.done; r = it.next()) {
      this.g.charge(ITEM_UNITS);
      rest.push(r.value);
    }
    this.it = new PyIter("list_iterator", rest[Symbol.iterator]());
    this.lengthCache = rest.length + this.index0 + 1 + (this.after !== MISSING ? 1 : 0);
    return this.lengthCache;
  }

  get index(): number {
    return this.index0 + 1;
  }
  get revindex0(): number {
    return this.length - this.index0 - 1;
  }
  get revindex(): number {
    return this.length - this.index0;
  }
  get first(): boolean {
    return this.index0 === 0;
  }
  get last(): boolean {
    if (this.arr !== null) return this.index0 + 1 >= this.arr.length;
    return this.peek() === MISSING;
  }
  get depth(): number {
    return this.depth0 + 1;
  }
  get previtem(): unknown {
    if (this.index0 === 0) return new Undefined("there is no previous item");
    return this.before;
  }
  get nextitem(): unknown {
    const rv = this.peek();
    if (rv === MISSING) return new Undefined("there is no next item");
    return rv;
  }

  cycle(args: unknown[]): unknown {
    if (args.length === 0) throw typeError("no items for cycling given");
    return args[this.index0 % args.length];
  }

  changed(args: unknown[]): boolean {
    const v = mkTuple(args.slice());
    if (this.lastChanged === MISSING || !pyEq(this.lastChanged, v)) {
      this.lastChanged = v;
      return true;
    }
    return false;
  }

  /** Python iteration over the loop object itself (rare). */
  *iterate(): Generator<unknown> {
    if (this.arr !== null) {
      for (let i = this.index0 + 1; i < this.arr.length; i++) {
        this.setIndex(i, this.arr[i]);
        this.g.charge(TUPLE_UNITS);
        yield mkTuple([this.arr[i], this]);
      }
      return;
    }
    for (;;) {
      const v = this.nextItem();
      if (v === MISSING) return;
      this.g.charge(TUPLE_UNITS);
      yield mkTuple([v, this]);
    }
  }
}

// ---- self ----------------------------------------------------------------------------------

export type BlockRenderer = (rs: RenderState, name: string) => string;

/** jinja2.runtime.TemplateReference: `self`, whose items are the template's blocks. */
export class TemplateReference {
  readonly names: ReadonlySet<string>;
  readonly render: BlockRenderer;
  constructor(names: ReadonlySet<string>, render: BlockRenderer) {
    this.names = names;
    this.render = render;
  }
  /** self[name]: a callable BlockReference, or MISSING */
  block(name: string): unknown {
    if (!this.names.has(name)) return MISSING;
    const render = this.render;
    return new PyFunction(name, "BlockReference", (rs) => render(rs, name));
  }
}

// ---- macros --------------------------------------------------------------------------------

export type MacroBody = (rs: RenderState, act: Act) => void;

export interface MacroDef {
  name: string | null;
  /** declared argument names */
  args: string[];
  /** slot of each declared argument in the macro's activation */
  argSlots: number[];
  /** default-value evaluators, aligned to the last arguments; evaluated in the macro's activation */
  defaults: Array<(rs: RenderState, act: Act) => unknown>;
  catchKwargs: boolean;
  catchVarargs: boolean;
  accessesCaller: boolean;
  callerSlot: number;
  kwargsSlot: number;
  varargsSlot: number;
  nslots: number;
  /** frame-entry loads run before the defaults */
  enter: (rs: RenderState, act: Act) => void;
  body: MacroBody;
  /** compiled by an instrumenting pass: activations carry slot tags, the observer is told of calls */
  instrumented: boolean;
}

/** jinja2.runtime.Macro */
export class Macro {
  readonly def: MacroDef;
  readonly defAct: Act;
  constructor(def: MacroDef, defAct: Act) {
    this.def = def;
    this.defAct = defAct;
  }

  get name(): string | null {
    return this.def.name;
  }

  invoke(rs: RenderState, args: unknown[], kwargsIn: Map<string, unknown> | null): string {
    const d = this.def;
    const nargs = d.args.length;
    const kwargs = kwargsIn === null ? new Map<string, unknown>() : new Map(kwargsIn);
    const slots = new Array<unknown>(d.nslots).fill(MISSING);
    const act: Act = { s: slots, up: this.defAct };
    const obs = rs.observer;
    if (d.instrumented) {
      if (obs !== null) obs.macroCall();
      act.p = new Array<unknown>(d.nslots).fill(null);
    }
    const explicitCaller = d.args.includes("caller");
    let foundCaller = false;
    const npos = Math.min(args.length, nargs);
    for (let i = 0; i < npos; i++) slots[d.argSlots[i] as number] = args[i];
    if (npos !== nargs) {
      for (let i = npos; i < nargs; i++) {
        const name = d.args[i] as string;
        if (kwargs.has(name)) {
          slots[d.argSlots[i] as number] = kwargs.get(name);
          kwargs.delete(name);
        }
        if (name === "caller") foundCaller = true;
      }
    } else foundCaller = explicitCaller;
    if (d.accessesCaller && !foundCaller) {
      let caller = kwargs.get("caller");
      kwargs.delete("caller");
      if (caller === undefined || caller === null) caller = new Undefined("No caller defined", MISSING, "caller");
      slots[d.callerSlot] = caller;
    }
    if (d.catchKwargs) {
      rs.charge(OBJECT_UNITS + kwargs.size * ENTRY_UNITS);
      slots[d.kwargsSlot] = kwargs;
    } else if (kwargs.size > 0) {
      if (kwargs.has("caller")) {
        throw typeError(`macro ${pyRepr(d.name)} was invoked with two values for the special caller argument. This is most likely a bug.`);
      }
      throw typeError(`macro ${pyRepr(d.name)} takes no keyword argument ${pyRepr(kwargs.keys().next().value)}`);
    }
    if (d.catchVarargs) {
      rs.charge(TUPLE_UNITS + Math.max(0, args.length - nargs) * ITEM_UNITS);
      slots[d.varargsSlot] = mkTuple(args.slice(nargs));
    }
    else if (args.length > nargs) {
      throw typeError(`macro ${pyRepr(d.name)} takes not more than ${nargs} argument(s)`);
    }
    rs.enterCall();
    rs.beginCapture();
    try {
      d.enter(rs, act);
      const ndef = d.defaults.length;
      for (let i = 0; i < nargs; i++) {
        const slot = d.argSlots[i] as number;
        if (slots[slot] !== MISSING) continue;
        const di = i - (nargs - ndef);
        if (di >= 0) {
          slots[slot] = (d.defaults[di] as (rs: RenderState, act: Act) => unknown)(rs, act);
          if (obs !== null && d.instrumented) obs.macroDefault(slots[slot]);
        }
        else slots[slot] = new Undefined(`parameter ${pyRepr(d.args[i])} was not provided`, MISSING, d.args[i]);
      }
      d.body(rs, act);
    } catch (e) {
      rs.abortCapture();
      rs.depth--;
      throw e;
    }
    rs.depth--;
    return rs.endCapture();
  }

  /** Macro.__call__: the result is Markup when called while autoescaping. */
  call(rs: RenderState, args: unknown[], kwargs: Map<string, unknown> | null): unknown {
    const s = this.invoke(rs, args, kwargs);
    return rs.autoescape ? new Markup(s) : s;
  }
}

registerObjectInfo({
  typeName(v: object) {
    if (v instanceof LoopContext) return "LoopContext";
    if (v instanceof Macro) return "Macro";
    if (v instanceof TemplateReference) return "TemplateReference";
    return undefined;
  },
  objectTypeRepr(v: object) {
    if (v instanceof LoopContext) return "jinja2.runtime.LoopContext object";
    if (v instanceof Macro) return "jinja2.runtime.Macro object";
    if (v instanceof TemplateReference) return "jinja2.runtime.TemplateReference object";
    return undefined;
  },
  str(v: object) {
    if (v instanceof LoopContext) return `<LoopContext ${v.index}/${v.length}>`;
    if (v instanceof Macro) return `<Macro ${v.name === null ? "anonymous" : pyRepr(v.name)}>`;
    if (v instanceof TemplateReference) return "<TemplateReference None>";
    return undefined;
  },
});

// ---- slicing -----------------------------------------------------------------------------

function sliceIndex(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "number" && Number.isInteger(v)) return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "bigint") return v > 0n ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER;
  if (v instanceof Undefined) failUndefined(v);
  throw typeError("slice indices must be integers or None or have an __index__ method");
}

/**
 * [start, step, count] of a Python slice over a sequence of `len` items: its first index, its
 * step and how many items it selects (slice.indices, then the count), in O(1).
 */
export function sliceBounds(len: number, startV: unknown, stopV: unknown, stepV: unknown): [number, number, number] {
  const stepN = sliceIndex(stepV);
  const step = stepN === null ? 1 : stepN;
  if (step === 0) throw valueError("slice step cannot be zero");
  let start = sliceIndex(startV);
  let stop = sliceIndex(stopV);
  if (step > 0) {
    if (start === null) start = 0;
    else if (start < 0) start = Math.max(0, start + len);
    else if (start > len) start = len;
    if (stop === null) stop = len;
    else if (stop < 0) stop = Math.max(0, stop + len);
    else if (stop > len) stop = len;
    return [start, step, stop > start ? Math.floor((stop - start + step - 1) / step) : 0];
  }
  if (start === null) start = len - 1;
  else if (start < 0) start = Math.max(-1, start + len);
  else if (start >= len) start = len - 1;
  if (stop === null) stop = -1;
  else if (stop < 0) stop = Math.max(-1, stop + len);
  else if (stop >= len) stop = len - 1;
  return [start, step, start > stop ? Math.floor((start - stop - step - 1) / -step) : 0];
}

/** Element indices selected by a Python slice over a sequence of `len` items. */
export function sliceIndices(len: number, startV: unknown, stopV: unknown, stepV: unknown): number[] {
  const [start, step, count] = sliceBounds(len, startV, stopV, stepV);
  const out = new Array<number>(count);
  for (let k = 0; k < count; k++) out[k] = start + k * step;
  return out;
}

/**
 * Python obj[start:stop:step] (no sandbox fallback, errors propagate as in Jinja2); the result
 * is charged to `g` before it is built.
 */
export function pySlice(obj: unknown, start: unknown, stop: unknown, step: unknown, g: SizeGuard): unknown {
  if (obj instanceof Undefined) failUndefined(obj);
  if (Array.isArray(obj)) {
    if (step === null && (start === null || (typeof start === "number" && start >= 0)) && (stop === null || (typeof stop === "number" && stop >= 0))) {
      const a = Math.min(sliceIndex(start) ?? 0, obj.length);
      const b = stop === null ? obj.length : Math.min(sliceIndex(stop) as number, obj.length);
      g.buildItems(Math.max(0, b - a));
      const r = obj.slice(a, b);
      return isTuple(obj) ? mkTuple(r) : r;
    }
    // (filled directly: no list of indices first — `messages[::-1]` runs on every render)
    const [first, by, count] = sliceBounds(obj.length, start, stop, step);
    g.buildItems(count);
    const r = new Array<unknown>(count);
    for (let k = 0; k < count; k++) r[k] = obj[first + k * by];
    return isTuple(obj) ? mkTuple(r) : r;
  }
  if (typeof obj === "string" || obj instanceof Markup) {
    const s = strOf(obj);
    let r: string;
    const surr = hasSurrogates(s);
    if (step === null || step === 1) {
      const idx0 = sliceIndex(start);
      const idx1 = sliceIndex(stop);
      const len = surr ? cpLen(s) : s.length;
      const a = idx0 === null ? 0 : idx0 < 0 ? Math.max(0, idx0 + len) : Math.min(idx0, len);
      let b = idx1 === null ? len : idx1 < 0 ? Math.max(0, idx1 + len) : Math.min(idx1, len);
      if (b < a) b = a;
      // (by code point: a surrogate pair is one)
      const ua = surr ? cpToUnit(s, a) : a;
      const ub = surr ? cpToUnit(s, b) : b;
      g.buildStr(ub - ua);
      r = s.slice(ua, ub);
    } else {
      // code points one by one; the chunked builder holds few pieces at a time
      const cps = surr ? (g.buildItems(s.length), cpArray(s)) : null;
      const [first, by, count] = sliceBounds(cps === null ? s.length : cps.length, start, stop, step);
      g.checkSize(count);
      g.charge(4 * count);
      const out = new StrBuilder();
      for (let k = 0; k < count; k++) out.add(cps === null ? (s[first + k * by] as string) : (cps[first + k * by] as string));
      if (out.length > count) g.checkSize(out.length);
      r = out.toString();
    }
    return obj instanceof Markup ? new Markup(r) : r;
  }
  if (obj instanceof PyRange) {
    const idx = sliceIndices(obj.length, start, stop, step);
    if (idx.length === 0) return new PyRange(0, 0, 1);
    const st = idx.length > 1 ? (idx[1] as number) - (idx[0] as number) : 1;
    const first = obj.at(idx[0] as number);
    return new PyRange(first, first + idx.length * st * obj.step, st * obj.step);
  }
  if (isDict(obj)) throw typeError("unhashable type: 'slice'");
  throw typeError(`'${typeName(obj)}' object is not subscriptable`);
}

// ---- calls ----------------------------------------------------------------------------------

/** Sandboxed environment.call(obj, *args, **kwargs) */
export function callValue(rs: RenderState, fn: unknown, args: unknown[], kwargs: Map<string, unknown> | null): unknown {
  if (fn instanceof PyFunction) return fn.call(rs, args, kwargs);
  if (fn instanceof Macro) return fn.call(rs, args, kwargs);
  if (fn instanceof Undefined) failUndefined(fn);
  if (fn instanceof Joiner) {
    if (args.length > 0 || (kwargs !== null && kwargs.size > 0)) throw typeError("Joiner.__call__() takes 1 positional argument but 2 were given");
    if (rs.observer !== null) rs.observer.joinerCall(fn);
    if (!fn.used) {
      fn.used = true;
      return "";
    }
    return fn.sep;
  }
  if (fn instanceof LoopContext) {
    if (fn.recurse === null) throw typeError("The loop must have the 'recursive' marker to be called recursively.");
    if (args.length !== 1) throw typeError(`LoopContext.__call__() takes 2 positional arguments but ${args.length + 1} were given`);
    return fn.recurse(rs, args[0], fn.depth);
  }
  throw typeError(`'${typeName(fn)}' object is not callable`);
}

/** Python callable(v) */
export function isCallable(v: unknown): boolean {
  if (v instanceof PyFunction) return true;
  return v instanceof Macro || v instanceof Undefined || v instanceof Joiner || v instanceof LoopContext;
}

