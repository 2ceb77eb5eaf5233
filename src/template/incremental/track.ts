/**
 * Incremental rendering: dependency tracking, traces, validation and replay (src/template/
 * INCREMENTAL.md has the design and the proof of exactness).
 *
 * A tracked render runs the template's *tracked* closures (compiled from the same tree with
 * `tracking` on). Each top-level statement and each iteration of a memoizable loop is a *unit*.
 * While a unit executes it records, in a `Rec`:
 *  - observations: everything it read from outside itself, as (path or location, kind, value):
 *    caller data reached by a path from a context variable (`messages[3].content`), root-level
 *    variables, context lookups, namespace attributes, loop-context attributes, the clock;
 *  - condition / set observations: a test (or primitive `set` value) whose inputs all come from
 *    outside the unit, re-evaluated at validation instead of checking its inputs;
 *  - writes that outlive it (root-level `set`s, namespace creations and attribute writes),
 *    generation spans, output, steps;
 *  - the records of the loop iterations it ran (matched again by position or item path).
 * On the next render a unit whose previous record validates against the current state (every
 * observation equal, by value) is replayed: its output appended and its writes applied; other
 * units execute, reusing their iterations' records that still validate.
 *
 * Layer: template.
 */
import { PyFloat, keysOf } from "../../json/values.js";
import { dataValue, dictGet, dictKeys, isDict, isPlainDict, pyLen, truthy, undefinedMessage } from "../jinja/ops.js";
import { Macro, TemplateReference, sliceBounds, type Act, type RenderObserver, type RenderState } from "../jinja/runtime.js";
import { TrackedLoop } from "./loop.js";
import type { Joiner } from "../jinja/values.js";
import { loopAttr } from "../jinja/methods.js";
import { naiveFrom, strftime } from "../jinja/strftime.js";
import { MISSING, Markup, MissingType, Namespace, PyDict, PyFunction, PyRange, Undefined, isTuple, mkTuple } from "../jinja/values.js";

const hasOwn = Object.prototype.hasOwnProperty;

// ---- paths ------------------------------------------------------------------------------------

const P_CTX = 0;
const P_ITEM = 1;
const P_SLICE = 2;
const P_REV = 3;
const P_VIEW = 4;
const P_LOOPITEM = 5;

/**
 * The tracking state of one render (its records, observations, snapshots, new paths) would
 * exceed its bound (RenderBudget.maxTrackBytes): the render is redone whole, untracked.
 */
export class TrackingBudgetError extends Error {}

/** A re-evaluated test would call a macro or change state: the validation fails. */
export class ValidationAbortError extends Error {}
const TRACK_OVER = new TrackingBudgetError("tracking budget exceeded");

/** Estimated bytes of tracking state one render has added (see TRACK_* below). */
export class TrackBudget {
  held = 0;
  over = false;
  constructor(readonly max: number) {}
  grow(n: number): void {
    if ((this.held += n) > this.max) {
      this.over = true;
      throw TRACK_OVER;
    }
  }
}

/** estimated bytes of: a path, an observation (5 slots), a record, a snapshot node, a loop entry */
const TRACK_PATH = 160;
const TRACK_OBS = 40;
const TRACK_REC = 160;
const TRACK_SNAP = 64;
const TRACK_LOOP = 96;

/** Resolution failed: the parent was not a container (never equal to any recorded value). */
const NOTFOUND: unique symbol = Symbol("notfound") as never;

/** Global render epoch: path resolutions are cached per render. */
let EPOCH = 0;
/**
 * Global write/unit serials: strictly increasing across renders, so markers left on shared
 * paths by an earlier render never equal a serial of a later one.
 */
let SERIAL = 1;
const FRAME_POOL: Frame[] = [];
/** runs replayed (Tracker.runReplay): numbers them across renders */
let RUNS = 0;

/**
 * A path from a root (a context variable, or the current item of the loop whose iterations run
 * at some depth) to a value reached from it. Interned in a PathSpace, so equal paths are the
 * same object and survive from one render of a conversation to the next.
 */
export class Path {
  readonly id: number;
  readonly parent: Path | null;
  readonly op: number;
  readonly key: unknown;
  /** slice arguments (P_SLICE) */
  readonly sargs: readonly unknown[] | null;
  /** depth of the unit whose state the root belongs to: -1 for context data (never internal) */
  readonly m: number;
  /** rooted at a loop item: resolved live, never cached */
  readonly vol: boolean;
  readonly space: PathSpace;
  items: Map<unknown, Path> | null = null;
  /** children at non-negative integer indices */
  byIndex: Array<Path | undefined> | null = null;
  slices: Map<string, Path> | null = null;
  rev: Path | null = null;
  views: Map<string, Path> | null = null;
  epoch = -1;
  val: unknown = undefined;
  /** VAL-observation dedupe marker (setup serial of the unit that last recorded one) */
  seen = -1;
  snapEpoch = -1;
  snap: unknown = undefined;

  constructor(space: PathSpace, parent: Path | null, op: number, key: unknown, sargs: readonly unknown[] | null, m: number, vol: boolean) {
    space.budget?.grow(TRACK_PATH);
    this.id = space.nextId++;
    this.space = space;
    this.parent = parent;
    this.op = op;
    this.key = key;
    this.sargs = sargs;
    this.m = m;
    this.vol = vol;
  }

  item(k: unknown): Path {
    if (typeof k === "number" && k >= 0 && k < 1 << 20 && Number.isInteger(k)) {
      let arr = this.byIndex;
      if (arr === null) arr = this.byIndex = [];
      let p = arr[k];
      if (p === undefined) {
        p = new Path(this.space, this, P_ITEM, k, null, this.m, this.vol);
        arr[k] = p;
      }
      return p;
    }
    let mp = this.items;
    if (mp === null) mp = this.items = new Map();
    let p = mp.get(k);
    if (p === undefined) {
      p = new Path(this.space, this, P_ITEM, k, null, this.m, this.vol);
      mp.set(k, p);
    }
    return p;
  }

  slice(start: unknown, stop: unknown, step: unknown): Path {
    const key = `${sliceKey(start)}:${sliceKey(stop)}:${sliceKey(step)}`;
    let mp = this.slices;
    if (mp === null) mp = this.slices = new Map();
    let p = mp.get(key);
    if (p === undefined) {
      p = new Path(this.space, this, P_SLICE, key, [start, stop, step], this.m, this.vol);
      mp.set(key, p);
    }
    return p;
  }

  reversed(): Path {
    if (this.rev === null) this.rev = new Path(this.space, this, P_REV, null, null, this.m, this.vol);
    return this.rev;
  }

  view(kind: "items" | "keys" | "values"): Path {
    let mp = this.views;
    if (mp === null) mp = this.views = new Map();
    let p = mp.get(kind);
    if (p === undefined) {
      p = new Path(this.space, this, P_VIEW, kind, null, this.m, this.vol);
      mp.set(kind, p);
    }
    return p;
  }

  get isReversed(): boolean {
    return this.op === P_REV;
  }
  /** A dict-items path: the path of the dict (for observing it whole) */
  get isItemsView(): boolean {
    return this.op === P_VIEW && this.key === "items";
  }
  get isView(): boolean {
    return this.op === P_VIEW;
  }

  /** The current value at this path (total: NOTFOUND/MISSING instead of errors). */
  resolve(tk: Tracker): unknown {
    if (!this.vol && this.epoch === EPOCH) return this.val;
    let v: unknown;
    switch (this.op) {
      case P_CTX: {
        const vars = tk.rs.vars;
        v = hasOwn.call(vars, this.key as string) ? dataValue(vars[this.key as string]) : MISSING;
        break;
      }
      case P_ITEM:
        v = dataGet((this.parent as Path).resolve(tk), this.key);
        break;
      case P_SLICE: {
        const b = (this.parent as Path).resolve(tk);
        v = sliceView(b, this.sargs as unknown[]);
        break;
      }
      case P_REV: {
        const b = (this.parent as Path).resolve(tk);
        const n = seqLen(b);
        v = n < 0 ? NOTFOUND : new SeqView(b, n - 1, -1, n);
        break;
      }
      case P_VIEW: {
        const b = (this.parent as Path).resolve(tk);
        v = isDict(b) ? new DictViewOf(this.key as string, b as object) : NOTFOUND;
        break;
      }
      case P_LOOPITEM: {
        const lc = tk.loopStack[this.key as number];
        v = lc === undefined ? NOTFOUND : lc.currentItem;
        break;
      }
    }
    if (!this.vol) {
      this.epoch = EPOCH;
      this.val = v;
    }
    return v;
  }
}

function sliceKey(v: unknown): string {
  if (v === null) return "N";
  if (typeof v === "number") return "i" + String(v);
  if (typeof v === "boolean") return v ? "T" : "F";
  if (typeof v === "bigint") return "b" + String(v);
  return "?" + String(Math.random());
}

/** The interning table of one conversation lineage's paths. */
export class PathSpace {
  nextId = 1;
  /** the bound of the render adding to this space (null between renders) */
  budget: TrackBudget | null = null;
  readonly roots = new Map<string, Path>();
  readonly loopRoots: Path[] = [];
  /** interned state observations (see O_CACHED): key → id, and id → the observation */
  readonly checkIds = new Map<string, number>();
  readonly checkObs: unknown[][] = [];

  /** interned observation lists that read only state (see Rec.fdList): content key → id */
  readonly listIds = new Map<string, number>();

  /** The id of an observation list's content. */
  listId(key: string): number {
    let id = this.listIds.get(key);
    if (id === undefined) {
      this.budget?.grow(64 + 2 * key.length);
      id = this.listIds.size;
      this.listIds.set(key, id);
    }
    return id;
  }

  /** The id of a state observation: equal ids hold or fail together in any one state. */
  checkId(key: string, kind: number, a: unknown, b: unknown, c: unknown): number {
    let id = this.checkIds.get(key);
    if (id === undefined) {
      this.budget?.grow(64 + TRACK_OBS + 2 * key.length);
      id = this.checkObs.length;
      // m = -1: the cached observation's own m decides whether it is checked at all
      this.checkObs.push([kind, -1, a, b, c]);
      this.checkIds.set(key, id);
    }
    return id;
  }

  ctx(name: string): Path {
    let p = this.roots.get(name);
    if (p === undefined) {
      p = new Path(this, null, P_CTX, name, null, -1, false);
      this.roots.set(name, p);
    }
    return p;
  }

  /** The current item of the loop whose iterations run at depth `j + 1`. */
  loopItem(j: number): Path {
    let p = this.loopRoots[j];
    if (p === undefined) {
      p = new Path(this, null, P_LOOPITEM, j, null, j, true);
      this.loopRoots[j] = p;
    }
    return p;
  }
}

/** A view of a sequence (slice, reversal) seen by path resolution without copying. */
class SeqView {
  readonly base: unknown[];
  readonly start: number;
  readonly step: number;
  readonly n: number;
  readonly tuple: boolean;
  constructor(base: unknown, start: number, step: number, n: number) {
    if (base instanceof SeqView) {
      this.base = base.base;
      this.start = base.start + start * base.step;
      this.step = step * base.step;
      this.tuple = base.tuple;
    } else {
      this.base = base as unknown[];
      this.start = start;
      this.step = step;
      this.tuple = isTuple(base);
    }
    this.n = n;
  }
  at(i: number): unknown {
    const v = this.base[this.start + i * this.step];
    return v === undefined ? null : v;
  }
  toArray(): unknown[] {
    const out = new Array<unknown>(this.n);
    for (let i = 0; i < this.n; i++) out[i] = this.at(i);
    return this.tuple ? mkTuple(out) : out;
  }
}

/** DictView-like resolution result of a P_VIEW path. */
class DictViewOf {
  constructor(
    readonly kind: string,
    readonly dict: object,
  ) {}
}

function seqLen(v: unknown): number {
  if (Array.isArray(v)) return v.length;
  if (v instanceof SeqView) return v.n;
  return -1;
}

/** Python slice of a sequence as a view (NOTFOUND when not a sequence or the slice fails). */
function sliceView(b: unknown, sargs: unknown[]): unknown {
  const n = seqLen(b);
  if (n < 0) return NOTFOUND;
  try {
    const st = sliceBounds(n, sargs[0], sargs[1], sargs[2]);
    return new SeqView(b, st[0], st[1], st[2]);
  } catch {
    return NOTFOUND;
  }
}

/** Python obj[k] on caller data without the attribute fallback: the value, MISSING, or NOTFOUND. */
export function dataGet(o: unknown, k: unknown): unknown {
  if (Array.isArray(o)) {
    let i: number;
    if (typeof k === "number" && Number.isInteger(k)) i = k;
    else if (typeof k === "boolean") i = k ? 1 : 0;
    else return MISSING;
    if (i < 0) i += o.length;
    if (i < 0 || i >= o.length) return MISSING;
    const v = o[i];
    return v === undefined ? null : v;
  }
  if (typeof o !== "object" || o === null) return NOTFOUND;
  if (o instanceof SeqView) {
    let i: number;
    if (typeof k === "number" && Number.isInteger(k)) i = k;
    else if (typeof k === "boolean") i = k ? 1 : 0;
    else return MISSING;
    if (i < 0) i += o.n;
    if (i < 0 || i >= o.n) return MISSING;
    return o.at(i);
  }
  if (isPlainDict(o) && typeof k === "string") {
    if (!hasOwn.call(o, k)) return MISSING;
    return dataValue(o[k]);
  }
  if (isDict(o)) {
    try {
      return dictGet(o, k);
    } catch {
      return MISSING;
    }
  }
  return NOTFOUND;
}

// ---- shapes and values ---------------------------------------------------------------------

const TAG_LIST: unique symbol = Symbol("list") as never;
const TAG_TUPLE: unique symbol = Symbol("tuple") as never;
const TAG_DICT: unique symbol = Symbol("dict") as never;

/** Never equal to anything (a value deltatok cannot compare or replay). */
export class Never {}
const NEVER = new Never();

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

function isContainer(v: unknown): boolean {
  if (typeof v !== "object" || v === null) return false;
  return Array.isArray(v) || isDict(v);
}

// ---- snapshots (whole-value observations and replayable copies) ------------------------------

/** Thrown (one shared instance, no stack trace) by snapshot() for values that are not data. */
const UNSNAPPABLE: unique symbol = Symbol("unsnappable") as never;
const FN_MARK = Symbol("fn");

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
const KEY_ORDER_SYM: symbol = Symbol.for("deltatok.keyOrder");
/** the tracking bound of the render running (snapshots are made only by tracked renders), else null */
let SNAP_BUDGET: TrackBudget | null = null;

/**
 * Key lists of snapshot dicts, computed once: snapshots are never modified after snapshot()
 * made them (the template cannot mutate a dict, and deltatok's code does not), and a trace
 * compares the same snapshot against every later request.
 */
const snapKeyMemo = new WeakMap<object, string[]>();
function snapKeys(snap: object): string[] {
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

const S_PATH = 1;
const S_NS = 2;
const S_MACRO = 3;
const S_DEEP = 4;
const S_IDENT = 5;
const S_UNDEF = 6;
const S_MISSING = 7;
const S_NEVER = 8;

/** How a value held in template state (a variable, a namespace attribute) is recorded. */
export class SV {
  constructor(
    readonly tag: number,
    readonly a: unknown,
    readonly b: unknown,
  ) {}
}
const SV_MISSING = new SV(S_MISSING, null, null);
const SV_NEVER = new SV(S_NEVER, null, null);

// ---- records ---------------------------------------------------------------------------------

/** marks a variable read only to assign one of its namespace's attributes */
const NSREF: unique symbol = Symbol("nsref") as never;

const O_VAL = 1;
const O_LEN = 2;
const O_TRUTH = 3;
const O_KEYS = 4;
const O_WHOLE = 5;
const O_RSLOT = 6;
const O_RESOLVE = 7;
const O_NSATTR = 8;
const O_LOOP = 9;
const O_NOW = 10;
const O_COND = 11;
const O_SETV = 12;
/** a `set` whose value the unit never read: only its inputs' types matter (c: their observations) */
const O_UNUSED = 13;
/** an interned state observation (RSLOT, RESOLVE, NSATTR): [O_CACHED, m, id] — see Tracker.runReplay */
const O_CACHED = 14;
/** a condition `loop.index0 <op> E` whose inputs are its position and state: [O_PCOND, m, id, truth, fine] */
const O_PCOND = 15;

const W_ROOT = 1;
const W_NSNEW = 2;
const W_NSSET = 3;

/** One loop executed inside a unit: its iterations' records, in order. */
export class LoopEntry {
  readonly node: number;
  readonly iters: Rec[];
  /** match key → record (built lazily when positions shift) */
  map: Map<unknown, Rec> | null = null;
  /** while the loop runs: iterations added so far (`iters` may be allocated larger) */
  private n = 0;
  constructor(node: number, iters: Rec[]) {
    this.node = node;
    this.iters = iters;
  }

  /** Appends the record of the loop's next iteration (while the loop runs). */
  add(r: Rec): void {
    this.iters[this.n++] = r;
  }

  /** The loop ended: `iters` is exactly its iterations' records. */
  done(): void {
    this.iters.length = this.n;
  }
}

/** The record of one execution of a unit. Immutable once finished (traces are shared). */
export class Rec {
  readonly depth: number;
  /** match key: the item path, or the iteration index (top level: statement index) */
  readonly key: unknown;
  /** observations: [kind, m, a, b, c] × n */
  o: unknown[] = [];
  loops: LoopEntry[] | null = null;
  out = "";
  /** writes: [kind, a, b, c] × n (including nested units', in order) */
  w: unknown[] | null = null;
  /** generation spans relative to the unit's start: [start, length] × n */
  g: number[] | null = null;
  steps = 0;
  /** build units the unit charged (RenderState.built) */
  built = 0;
  chunks = 0;
  ctl = 0;
  ae = false;
  bad = false;
  /** has condition/set observations re-evaluated in the unit's scope */
  scoped = false;
  /**
   * validated by re-evaluating a condition: not to be checked as part of an enclosing unit's
   * record (see Tracker.reuseIter)
   */
  stale = false;
  bytes = 0;
  /** its observations without the reads inside item `fdItem` (see itemProof); computed once */
  fd: unknown[] | undefined = undefined;
  fdItem: Path | null = null;
  /** when `fd` reads only state (no position, no data): the id of its content (PathSpace.listId), else -1 */
  fdList = -1;
  constructor(depth: number, key: unknown) {
    this.depth = depth;
    this.key = key;
  }
}

/** A conversation's trace: the records of the last render's top-level units. */
export class Trace {
  constructor(
    readonly owner: object,
    readonly space: PathSpace,
    readonly top: ReadonlyArray<Rec | null>,
    readonly bytes: number,
    /** content versions of the render's `messages` items (RenderOptions.itemVersions), if known */
    readonly versions: readonly number[] | null = null,
    /** how many output segments the render had */
    readonly segmentCount = 0,
    /**
     * the render went past its tracking bound and was rendered whole: the conversation's next
     * renders are whole too (counted as fallback `tracking_budget`), without trying again
     */
    readonly untracked = false,
  ) {}
}

/** Counters of one incremental render. */
export interface IncrementalStats {
  unitsReused: number;
  unitsExecuted: number;
  iterationsReused: number;
  iterationsExecuted: number;
  /** observations checked while validating */
  checks: number;
  /** observations of a whole value (tojson, printing, derived iterables, ...) recorded */
  wholeObservations: number;
  /** derived iterables / values observed whole because their elements' origin is not kept */
  fallbacks: number;
  /** reused iterations whose reads inside their message were proven by its unchanged version */
  unchangedItems: number;
  /**
   * Fallback `tracking_budget`: incremental renders done whole, untracked (the same output),
   * because their tracking state would have exceeded RenderBudget.maxTrackBytes — or an earlier
   * render of the same conversation's did
   */
  trackingBudget: number;
}

export function emptyStats(): IncrementalStats {
  return { unitsReused: 0, unitsExecuted: 0, iterationsReused: 0, iterationsExecuted: 0, checks: 0, wholeObservations: 0, fallbacks: 0, unchangedItems: 0, trackingBudget: 0 };
}

/**
 * A unit being executed (or about to be validated). Frames are pooled by depth: a replayed
 * iteration leaves nothing behind, an executed one hands its recordings to a new Rec.
 */
export class Frame {
  depth = 0;
  parent: Frame | null = null;
  /** statement index (top level) or loop ordinal in the parent */
  ord = 0;
  /** match key: item path or iteration index */
  key: unknown = null;
  prev: Rec | null = null;
  setup = 0;
  start = 0;
  /** root offset of this unit's output */
  base = 0;
  savedOut = "";
  segmented = false;
  loopOrd = 0;
  nsOrd = 0;
  steps0 = 0;
  built0 = 0;
  chunks0 = 0;
  ae = false;
  bad = false;
  /** `set`s of total integer expressions: [observation index, slot, serial of the write] × n */
  lazy: number[] | null = null;
  /** this unit (or one nested in it) created or wrote a namespace */
  nsWrites = false;
  /** recordings: observations, writes, generation spans, loops */
  o: unknown[] = [];
  w: unknown[] | null = null;
  g: number[] | null = null;
  loops: LoopEntry[] | null = null;
  private idStr: string | null = null;

  reset(depth: number, parent: Frame | null, ord: number, key: unknown): void {
    this.depth = depth;
    this.parent = parent;
    this.ord = ord;
    this.key = key;
    this.prev = null;
    // not started: everything read during the scope setup is external to the unit
    this.start = Number.MAX_SAFE_INTEGER;
    this.segmented = false;
    this.savedOut = "";
    this.loopOrd = 0;
    this.nsOrd = 0;
    this.bad = false;
    this.lazy = null;
    this.nsWrites = false;
    this.o.length = 0;
    this.w = null;
    this.g = null;
    this.loops = null;
    this.idStr = null;
  }

  /** Stable identity of this unit (names the namespaces it creates). */
  id(): string {
    if (this.idStr === null) {
      if (this.parent === null) this.idStr = "t" + this.ord;
      else {
        const k = this.key;
        this.idStr = `${this.parent.id()}/${this.ord}:${k instanceof Path ? "p" + k.id : "i" + String(k)}`;
      }
    }
    return this.idStr;
  }

  /** The record of this execution (takes the recordings); `readAt[slot]`: serial of the slot's last read. */
  toRec(out: string, steps: number, built: number, chunks: number, ctl: number, readAt: number[]): Rec {
    const rec = this.build(out, steps, built, chunks, ctl, readAt);
    // a segment's text is held (and charged) by the engine's snapshot already
    if (this.segmented || this.depth === 0) rec.bytes -= out.length * 2;
    return rec;
  }

  private build(out: string, steps: number, built: number, chunks: number, ctl: number, readAt: number[]): Rec {
    const lz = this.lazy;
    if (lz !== null) {
      // a set whose value was never read: its (int-valued, error-free) result did not matter
      for (let i = 0; i < lz.length; i += 3) {
        const at = lz[i] as number;
        if ((readAt[lz[i + 1] as number] ?? -1) >= (lz[i + 2] as number)) continue;
        const fine = this.o[at + 4] as unknown[];
        const kept: unknown[] = [];
        for (let j = 0; j < fine.length; j += 5) if (fine[j] !== O_LEN && fine[j] !== O_LOOP) kept.push(fine[j], fine[j + 1], fine[j + 2], fine[j + 3], fine[j + 4]);
        this.o[at] = O_UNUSED;
        this.o[at + 4] = kept;
      }
    }
    const r = new Rec(this.depth, this.key);
    r.o = this.o;
    this.o = [];
    r.loops = this.loops;
    r.w = this.w;
    r.g = this.g;
    r.out = out;
    r.steps = steps;
    r.built = built;
    r.chunks = chunks;
    r.ctl = ctl;
    r.ae = this.ae;
    r.bad = this.bad;
    for (let i = 0; i < r.o.length; i += 5) {
      if (r.o[i] === O_COND || r.o[i] === O_SETV) {
        r.scoped = true;
        break;
      }
    }
    r.bytes = recBytes(r);
    return r;
  }
}

export type CondEv = (rs: RenderState, a: Act) => unknown;

/**
 * A condition `loop.<attr> <op> other` (posLeft) or `other <op> loop.<attr>`, `other` a name or
 * `name.attr` (Compiler.posCond): with the position known and `other` evaluated once per run,
 * its truth is one comparison.
 */
export interface PosCond {
  attr: "index0" | "index";
  op: "lt" | "lteq" | "gt" | "gteq";
  posLeft: boolean;
  other: CondEv;
}

/** Per-render tracking state (RenderState.tk). */
export class Tracker implements RenderObserver {
  readonly rs: RenderState;
  readonly space: PathSpace;
  readonly prev: Trace | null;
  readonly conds: readonly CondEv[];
  readonly condPos: ReadonlyArray<PosCond | undefined>;
  readonly epoch: number;
  root!: Act & { p: Array<Path | null>; w: number[] };
  /** next serial (write / unit start); written back to the global counter by close() */
  serial: number;
  frames: Frame[] = [];
  cur: Frame | null = null;
  /** path of the value the last tracked expression returned */
  lp: Path | null = null;
  /** an internal read happened (set while recording a condition) */
  taint = false;
  inCond = 0;
  validating = false;
  readonly loopStack: TrackedLoop[] = [];
  readonly ns = new Map<string, Namespace>();
  readonly ctxW = new Map<string, number>();
  readonly ctxP = new Map<string, Path | null>();
  readonly stats: IncrementalStats = emptyStats();
  /** output segments (the first `nseg` of `segments`, sized from the previous render's count) */
  private readonly segments: string[];
  private nseg = 0;
  /** index of the first segment not replayed from a record (segments.length while there is none) */
  firstFresh = -1;
  /** root offset of everything emitted as segments */
  emitted = 0;
  /** dedupe of root-slot observations: slot → setup serial of the unit that recorded one */
  readonly slotSeen: number[] = [];
  /** root slot → serial at its last read by tracked code */
  readonly slotReadAt: number[] = [];
  /** frames by depth (reused from render to render: renders do not nest) */
  private readonly pool: Frame[] = FRAME_POOL;
  /** the records of this render's top-level units */
  top: Array<Rec | null> = [];
  /** bumped on every root-level write (context lookups may change) */
  ctxVersion = 0;
  /** names whose context lookup was MISSING at a ctxVersion */
  readonly resolveCache = new Map<string, number>();
  /** sets up the scope of the iteration being validated, before re-evaluating a test */
  private scopeFn: (() => void) | null = null;
  /** void, data-only iteration records seen this render: loop node → item path → record */
  private readonly voids = new Map<number, Map<Path, Rec>>();
  /** while validating an iteration: loops found grown and extended ([obs index, entry, length, records]) */
  private ext: Array<[number, LoopEntry, number, Rec[]]> | null = null;
  /** while validating an iteration: its loop ordinal and match key (its identity, see noOpIn) */
  private extOrd = 0;
  private extKey: unknown = undefined;

  /** the run being replayed by runReplay (0: none), and per interned observation the run it held in */
  private runNo = 0;
  private stamps = new Int32Array(0);
  /** per state-only observation list (Rec.fdList): the run it held in without re-evaluations */
  private listStamps = new Int32Array(0);
  /** conditions re-evaluated so far (a list that needed one is not stamped) */
  private reevaluations = 0;
  /** per position condition: the run its other operand was evaluated in, and the value */
  private readonly otherAt: number[] = [];
  private readonly otherVal: unknown[] = [];
  /** this render's content versions of the `messages` items, and the previous render's */
  versions: readonly number[] | null = null;
  private prevVersions: readonly number[] | null = null;
  private versionsPath: Path | null = null;

  /** what this render's tracking state may grow to (RenderBudget.maxTrackBytes) */
  readonly tb: TrackBudget;

  constructor(rs: RenderState, prev: Trace | null, space: PathSpace, conds: readonly CondEv[], condPos: ReadonlyArray<PosCond | undefined> = [], maxTrackBytes = Infinity) {
    this.rs = rs;
    this.prev = prev;
    this.space = space;
    this.tb = new TrackBudget(maxTrackBytes);
    space.budget = this.tb;
    SNAP_BUDGET = this.tb;
    this.conds = conds;
    this.condPos = condPos;
    this.epoch = ++EPOCH;
    this.serial = SERIAL;
    this.segments = new Array<string>(prev === null ? 16 : prev.segmentCount + 16);
  }

  /** The render's output segments (once the render has run). */
  takeSegments(): string[] {
    const s = this.segments;
    s.length = this.nseg;
    return s;
  }

  /**
   * The caller's content versions of `vars.messages`' items (taken only when `list` is the very
   * list the template receives as `messages`).
   */
  setVersions(list: readonly unknown[], versions: readonly number[]): void {
    if (this.rs.vars.messages !== list || versions.length !== list.length) return;
    this.versions = versions;
    this.prevVersions = this.prev?.versions ?? null;
    this.versionsPath = this.space.ctx("messages");
  }

  /** Ends the render (successful or not): later renders continue the serials. */
  close(): void {
    if (this.serial >= SERIAL) SERIAL = this.serial + 1;
    this.space.budget = null;
    SNAP_BUDGET = null;
  }

  // ---- classification of reads ----

  /** Depth of the innermost unit on the stack that started at or before serial `w`, or -1. */
  depthOf(w: number): number {
    const f = this.frames;
    for (let j = f.length - 1; j >= 0; j--) if ((f[j] as Frame).start <= w) return j;
    return -1;
  }

  private push(kind: number, m: number, a: unknown, b: unknown, c: unknown): void {
    this.tb.grow(TRACK_OBS);
    (this.cur as Frame).o.push(kind, m, a, b, c);
  }

  /** A record made by this render: what it holds besides its observations (counted as pushed). */
  private made(r: Rec): void {
    this.tb.grow(TRACK_REC + 2 * r.out.length + 8 * ((r.w?.length ?? 0) + (r.g?.length ?? 0)));
  }

  /**
   * A read of root-activation slot `slot` holding `v` (path `p`); `nsref`: only to assign an
   * attribute of the namespace it holds (`{% set ns.attr = ... %}`).
   */
  readRoot(slot: number, v: unknown, p: Path | null, nsref = false): void {
    this.slotReadAt[slot] = this.serial;
    const f = this.cur;
    if (f === null) return;
    const w = this.root.w[slot] as number;
    if (w >= f.setup) {
      // written by this unit (internal), or by its scope setup (loop variable, item, frame
      // entry), which validation reproduces and whose inputs are observed themselves
      if (w >= f.start) this.taint = true;
      return;
    }
    if (nsref) {
      this.push(O_RSLOT, this.depthOf(w), slot, this.svOf(v, p, false), NSREF);
      return;
    }
    if (this.inCond === 0) {
      if (this.slotSeen[slot] === f.setup) return;
      this.slotSeen[slot] = f.setup;
    }
    this.push(O_RSLOT, this.depthOf(w), slot, this.svOf(v, p, false), null);
  }

  /** A context lookup (Jinja2 resolve_or_missing) in a frame entry. */
  resolveT(name: string): unknown {
    const rs = this.rs;
    if (rs.overlay === null && this.resolveCache.get(name) === this.ctxVersion) {
      // known unset at this point (the common case: names set only in some branches)
      this.lp = null;
      if (this.cur !== null) this.push(O_RESOLVE, -1, name, SV_MISSING, null);
      return MISSING;
    }
    const v = rs.resolve(name);
    if (v === MISSING && rs.overlay === null) this.resolveCache.set(name, this.ctxVersion);
    let p: Path | null = null;
    let w = -1;
    if (rs.overlay !== null && rs.overlay.has(name)) {
      this.taint = true;
      this.lp = null;
      return v;
    }
    if (rs.ctxVars.size > 0 && rs.ctxVars.has(name)) {
      p = this.ctxP.get(name) ?? null;
      w = this.ctxW.get(name) ?? 0;
    } else if (isContainer(v) && hasOwn.call(rs.vars, name)) p = this.space.ctx(name);
    this.lp = p;
    const f = this.cur;
    if (f === null) return v;
    if (w >= f.start) {
      this.taint = true;
      return v;
    }
    this.push(O_RESOLVE, w < 0 ? -1 : this.depthOf(w), name, this.svOf(v, p, false), null);
    return v;
  }

  /** The path a resolve of `name` gives now (for validation). */
  private ctxPathOf(name: string, v: unknown): Path | null {
    const rs = this.rs;
    if (rs.ctxVars.size > 0 && rs.ctxVars.has(name)) return this.ctxP.get(name) ?? null;
    return isContainer(v) && hasOwn.call(rs.vars, name) ? this.space.ctx(name) : null;
  }

  /** A data read at path `p` that produced `v`. */
  obsVal(p: Path, v: unknown): void {
    const f = this.cur;
    if (f === null) return;
    if (p.m >= f.depth) {
      this.taint = true;
      return;
    }
    if (this.inCond === 0) {
      if (p.seen === f.setup) return;
      p.seen = f.setup;
    }
    this.push(O_VAL, p.m, p, shapeOf(v), null);
  }

  /** Records a length observation; returns its index in the unit's list (-1 if none). */
  obsLen(p: Path, n: number): number {
    const f = this.cur;
    if (f === null) return -1;
    if (p.m >= f.depth) {
      this.taint = true;
      return -1;
    }
    const at = f.o.length;
    this.push(O_LEN, p.m, p, n, null);
    return this.inCond === 0 ? at : -1;
  }

  /**
   * Marks the length observation at `at` as the iteration count of loop `entry` over the list at
   * `p`, which may grow (see `extend`).
   */
  extensible(at: number, entry: LoopEntry, p: Path): void {
    const f = this.cur as Frame;
    if (at >= 0 && f.o[at] === O_LEN && f.o[at + 2] === p) f.o[at + 4] = entry;
  }

  /**
   * Registers the record of an iteration of loop `node` over the item at `q` when it is void
   * (no output, writes, spans, nested loops, control flow) and depends on caller data only: it
   * then stands for that item's iteration in that loop under any parent unit (see `extend`).
   */
  registerVoid(node: number, q: Path, r: Rec): void {
    if (voidKind(r) === VOID_NO) return;
    this.tb.grow(48);
    let m = this.voids.get(node);
    if (m === undefined) this.voids.set(node, (m = new Map()));
    m.set(q, r);
  }

  obsTruth(p: Path, t: boolean): void {
    const f = this.cur;
    if (f === null) return;
    if (p.m >= f.depth) {
      this.taint = true;
      return;
    }
    this.push(O_TRUTH, p.m, p, t, null);
  }

  obsKeys(p: Path, keys: unknown[]): void {
    const f = this.cur;
    if (f === null) return;
    if (p.m >= f.depth) {
      this.taint = true;
      return;
    }
    this.push(O_KEYS, p.m, p, keys.slice(), null);
  }

  /** The value at `p` is consumed whole (printed, serialized, compared, passed on). */
  whole(p: Path, v: unknown, fallback = false): void {
    if (p.op === P_VIEW) p = p.parent as Path;
    const f = this.cur;
    if (f === null) return;
    if (p.m >= f.depth) {
      this.taint = true;
      return;
    }
    let snap: unknown;
    if (p.snapEpoch === EPOCH) snap = p.snap;
    else {
      try {
        snap = snapshot(p.op === P_SLICE || p.op === P_REV ? p.resolve(this) : v);
      } catch (e) {
        if (e === TRACK_OVER) throw e;
        snap = NEVER;
      }
      p.snapEpoch = EPOCH;
      p.snap = snap;
    }
    this.stats.wholeObservations++;
    if (fallback) this.stats.fallbacks++;
    this.push(O_WHOLE, p.m, p, snap, null);
  }

  /** A namespace attribute read. */
  nsRead(ns: Namespace, attr: string, v: unknown): void {
    const f = this.cur;
    this.lp = (ns.paths?.get(attr) as Path | null | undefined) ?? null;
    if (f === null) return;
    const w = ns.wseq?.get(attr) ?? ns.born;
    if (w >= f.start) {
      this.taint = true;
      return;
    }
    if (ns.key === null) {
      f.bad = true;
      return;
    }
    this.push(O_NSATTR, this.depthOf(w), ns.key, attr, this.svOf(v, this.lp, false));
  }

  /** A loop-context attribute read. */
  loopRead(lc: TrackedLoop, attr: string, v: unknown, p: Path | null): void {
    const f = this.cur;
    if (f === null) return;
    const j = lc.tkDepth;
    if (j < 0 || j >= f.depth) {
      this.taint = true;
      return;
    }
    if (!lc.tkMemo) {
      // a loop whose iterations are not units, read from a unit nested inside it
      this.markBad();
      return;
    }
    this.push(O_LOOP, j, j, attr, this.svOf(v, p, false));
  }

  /** strftime_now(fmt) returned `r`. */
  obsNow(fmt: string, r: string): void {
    if (this.cur === null) return;
    this.push(O_NOW, -1, fmt, r, null);
  }

  /**
   * Whether the current unit has already set any state a test may read (so the test cannot be
   * re-evaluated at the unit's start): one of its slots, one of its `name.attr` namespace
   * attributes, or — for tests reaching state otherwise — any namespace attribute at all.
   */
  depsWritten(deps: { slots: number[]; attrs: Array<[number, string]>; deep: boolean }): boolean {
    const f = this.cur as Frame;
    const start = f.start;
    const root = this.root;
    for (const sl of deps.slots) if ((root.w[sl] as number) >= start) return true;
    for (const [sl, attr] of deps.attrs) {
      const v = root.s[sl];
      if (v instanceof Namespace && (v.wseq?.get(attr) ?? v.born) >= start) return true;
    }
    return deps.deep && f.nsWrites;
  }

  /**
   * A loop context used as a value (printed, filtered, tested for truth, indexed): what it
   * exposes is not observed attribute by attribute, so units inside that loop cannot be reused.
   */
  loopEscapes(v: unknown): void {
    if (!(v instanceof TrackedLoop) || !v.tkMemo) return;
    v.tkLenRead = true;
    const f = this.cur;
    if (f !== null && v.tkDepth < f.depth) this.markBad();
  }

  markBad(): void {
    for (const f of this.frames) f.bad = true;
  }

  // ---- RenderObserver: what the engine reports ----

  macroCall(): void {
    if (this.validating) throw new ValidationAbortError();
  }

  macroDefault(v: unknown): void {
    if (this.lp !== null) {
      this.whole(this.lp, v);
      this.lp = null;
    }
  }

  joinerCall(j: Joiner): void {
    this.statefulCall(j.born);
  }

  /** A call that changes state created at serial `born` (joiner, cycler, loop.changed). */
  statefulCall(born: number): void {
    if (this.validating) throw new ValidationAbortError();
    const f = this.cur;
    if (f !== null && born < f.start) this.markBad();
  }

  // ---- condition observations ----

  /** Starts recording a test; returns the outer observation list. */
  condBegin(): unknown[] | null {
    const f = this.cur;
    if (f === null) return null;
    const saved = f.o;
    f.o = [];
    this.inCond++;
    return saved;
  }

  /** Ends recording a test that evaluated to `value` (a COND or SETV entry). */
  condEnd(saved: unknown[] | null, taint0: boolean, id: number, value: unknown, kind: "cond" | "set", totalSlot = -1): void {
    if (saved === null) return;
    const f = this.cur as Frame;
    const fine = f.o;
    f.o = saved;
    this.inCond--;
    const tainted = this.taint;
    this.taint = taint0 || tainted;
    if (!tainted && (kind === "cond" || isPrimitive(value)) && volatile(fine)) {
      if (totalSlot >= 0) (f.lazy ??= []).push(saved.length, totalSlot, this.serial);
      saved.push(kind === "cond" ? O_COND : O_SETV, -1, id, value, fine);
    } else this.inline(saved, fine, f);
  }

  /** Appends a test's observations to the unit's list (deduplicating data observations). */
  private inline(saved: unknown[], fine: unknown[], f: Frame): void {
    for (let i = 0; i < fine.length; i += 5) {
      if (fine[i] === O_VAL && this.inCond === 0) {
        const p = fine[i + 2] as Path;
        if (p.seen === f.setup) continue;
        p.seen = f.setup;
      }
      saved.push(fine[i], fine[i + 1], fine[i + 2], fine[i + 3], fine[i + 4]);
    }
  }

  /** Aborts recording (an exception): puts the observations back inline. */
  condAbort(saved: unknown[] | null): void {
    if (saved === null) return;
    const f = this.cur as Frame;
    const fine = f.o;
    f.o = saved;
    this.inCond--;
    this.inline(saved, fine, f);
  }

  // ---- state values ----

  svOf(v: unknown, p: Path | null, forWrite: boolean): unknown {
    if (p !== null) {
      if (forWrite && p.vol) return this.deepSV(v);
      return new SV(S_PATH, p, shapeOf(v));
    }
    switch (typeof v) {
      case "string":
      case "number":
      case "boolean":
      case "bigint":
        return v;
      case "symbol":
        return v === MISSING ? SV_MISSING : SV_NEVER;
      case "object":
        break;
      default:
        return SV_NEVER;
    }
    if (v === null) return null;
    if (v instanceof PyFloat || v instanceof Markup) return v;
    if (v instanceof Namespace) return v.key === null ? SV_NEVER : new SV(S_NS, v.key, null);
    if (v instanceof Macro) return v.defAct === this.root ? new SV(S_MACRO, v.def, null) : SV_NEVER;
    if (v instanceof Undefined) return new SV(S_UNDEF, undefinedMessage(v) + "\u0000" + v.exc, v);
    if (v instanceof MissingType || v instanceof TemplateReference || (v instanceof PyFunction && v.self === MISSING)) return new SV(S_IDENT, v, null);
    if (v instanceof PyRange) return new SV(S_DEEP, v, null);
    if (!(Array.isArray(v) || isDict(v))) return SV_NEVER;
    return this.deepSV(v);
  }

  private deepSV(v: unknown): unknown {
    try {
      return new SV(S_DEEP, snapshot(v), null);
    } catch (e) {
      if (e === TRACK_OVER) throw e;
      return SV_NEVER;
    }
  }

  svEq(v: unknown, p: Path | null, sv: unknown): boolean {
    if (!(sv instanceof SV)) return p === null && sameShape(v, sv);
    switch (sv.tag) {
      case S_PATH:
        return p === sv.a && sameShape(v, sv.b);
      case S_NS:
        return p === null && v instanceof Namespace && v.key === sv.a;
      case S_MACRO:
        return p === null && v instanceof Macro && v.def === sv.a && v.defAct === this.root;
      case S_DEEP:
        return p === null && deepEq(v, sv.a);
      case S_IDENT:
        return p === null && v === sv.a;
      case S_UNDEF:
        return p === null && v instanceof Undefined && undefinedMessage(v) + "\u0000" + v.exc === sv.a;
      case S_MISSING:
        return p === null && v === MISSING;
      default:
        return false;
    }
  }

  /** The value a recorded state value stands for now (its path in `lp`). */
  replayValue(sv: unknown): unknown {
    this.lp = null;
    if (!(sv instanceof SV)) return sv;
    switch (sv.tag) {
      case S_PATH: {
        const p = sv.a as Path;
        let v = p.resolve(this);
        if (v instanceof SeqView) v = v.toArray();
        else if (v instanceof DictViewOf) throw new ReplayError();
        if (v === NOTFOUND) throw new ReplayError();
        this.lp = p;
        return v;
      }
      case S_NS: {
        const ns = this.ns.get(sv.a as string);
        if (ns === undefined) throw new ReplayError();
        return ns;
      }
      case S_MACRO:
        return new Macro(sv.a as Macro["def"], this.root);
      case S_DEEP:
      case S_IDENT:
        return sv.a;
      case S_UNDEF:
        return sv.b;
      case S_MISSING:
        return MISSING;
      default:
        throw new ReplayError();
    }
  }

  // ---- writes ----

  private pushWrite(kind: number, a: unknown, b: unknown, c: unknown): void {
    const f = this.cur;
    if (f === null) return;
    let w = f.w;
    if (w === null) w = f.w = [];
    w.push(kind, a, b, c);
  }

  /** A top-level `set`/macro: root slot `slot` (context name `name`) := v. */
  writeRoot(slot: number, name: string, v: unknown, p: Path | null): void {
    const a = this.root;
    a.s[slot] = v;
    a.p[slot] = p;
    const w = this.serial++;
    a.w[slot] = w;
    this.rs.ctxVars.set(name, v);
    this.ctxP.set(name, p);
    this.ctxW.set(name, w);
    this.ctxVersion++;
    if (this.cur !== null) {
      const sv = this.svOf(v, p, true);
      if (sv === SV_NEVER) this.cur.bad = true;
      this.pushWrite(W_ROOT, slot, name, sv);
    }
  }

  /** A namespace was created by the template. */
  nsCreated(ns: Namespace): void {
    ns.born = this.serial++;
    for (const fr of this.frames) fr.nsWrites = true;
    const f = this.cur;
    if (f === null) {
      ns.key = null;
      return;
    }
    const key = `${f.id()}#${f.nsOrd++}`;
    ns.key = key;
    this.ns.set(key, ns);
    const names: string[] = [];
    const svs: unknown[] = [];
    for (const [k, v] of ns.attrs) {
      names.push(k);
      const sv = this.svOf(v, null, true);
      if (sv === SV_NEVER) f.bad = true;
      svs.push(sv);
    }
    this.pushWrite(W_NSNEW, key, names, svs);
  }

  /** `{% set ns.attr = v %}` */
  nsWrite(ns: Namespace, attr: string, v: unknown, p: Path | null): void {
    ns.attrs.set(attr, v);
    if (ns.paths === null) {
      if (p !== null) (ns.paths = new Map()).set(attr, p);
    } else ns.paths.set(attr, p);
    if (ns.wseq === null) ns.wseq = new Map();
    ns.wseq.set(attr, this.serial++);
    for (const fr of this.frames) fr.nsWrites = true;
    const f = this.cur;
    if (f === null) return;
    if (ns.key === null) {
      f.bad = true;
      return;
    }
    const sv = this.svOf(v, p, true);
    if (sv === SV_NEVER) f.bad = true;
    this.pushWrite(W_NSSET, ns.key, attr, sv);
  }

  /** A `{% generation %}` span [start, end) in root offsets. */
  genSpan(start: number, end: number): void {
    const f = this.cur;
    if (f === null) return;
    let g = f.g;
    if (g === null) g = f.g = [];
    g.push(start - f.base, end - start);
  }

  private applyWrites(w: unknown[]): void {
    const rs = this.rs;
    for (let i = 0; i < w.length; i += 4) {
      if (w[i] !== W_ROOT) {
        for (const fr of this.frames) fr.nsWrites = true;
        break;
      }
    }
    for (let i = 0; i < w.length; i += 4) {
      switch (w[i]) {
        case W_ROOT: {
          const slot = w[i + 1] as number;
          const name = w[i + 2] as string;
          const v = this.replayValue(w[i + 3]);
          const p = this.lp;
          const a = this.root;
          a.s[slot] = v;
          a.p[slot] = p;
          const ser = this.serial++;
          a.w[slot] = ser;
          rs.ctxVars.set(name, v);
          this.ctxP.set(name, p);
          this.ctxW.set(name, ser);
          this.ctxVersion++;
          break;
        }
        case W_NSNEW: {
          const names = w[i + 2] as string[];
          const svs = w[i + 3] as unknown[];
          const attrs = new Map<string, unknown>();
          let paths: Map<string, Path | null> | null = null;
          for (let j = 0; j < names.length; j++) {
            const v = this.replayValue(svs[j]);
            const p = this.lp;
            attrs.set(names[j] as string, v);
            if (p !== null) (paths ??= new Map()).set(names[j] as string, p);
          }
          const ns = new Namespace(attrs);
          ns.key = w[i + 1] as string;
          ns.born = this.serial++;
          ns.paths = paths;
          this.ns.set(ns.key, ns);
          break;
        }
        case W_NSSET: {
          const ns = this.ns.get(w[i + 1] as string);
          if (ns === undefined) throw new ReplayError();
          const attr = w[i + 2] as string;
          const v = this.replayValue(w[i + 3]);
          const p = this.lp;
          ns.attrs.set(attr, v);
          if (ns.paths !== null || p !== null) (ns.paths ??= new Map()).set(attr, p);
          (ns.wseq ??= new Map()).set(attr, this.serial++);
          break;
        }
      }
    }
  }

  // ---- units ----

  private frameAt(depth: number): Frame {
    let f = this.pool[depth];
    if (f === undefined) f = this.pool[depth] = new Frame();
    return f;
  }

  /** Starts a top-level unit (statement `k`). */
  beginTop(k: number, prev: Rec | null, segmented: boolean): Frame {
    const f = this.frameAt(0);
    f.reset(0, null, k, k);
    f.prev = prev;
    f.setup = this.serial;
    f.start = this.serial++;
    f.segmented = segmented;
    const rs = this.rs;
    f.base = this.emitted;
    rs.base = this.emitted;
    rs.out = "";
    f.steps0 = rs.steps;
    f.built0 = rs.built;
    f.chunks0 = rs.chunks;
    f.ae = rs.autoescape;
    this.frames.push(f);
    this.cur = f;
    return f;
  }

  /** Ends a top-level unit: its output becomes a segment. Returns its record. */
  endTop(f: Frame, replayed: Rec | null): Rec {
    const rs = this.rs;
    const out = rs.out;
    if (out.length > 0) {
      this.emit(out, replayed !== null);
      this.emitted += out.length;
    }
    rs.out = "";
    rs.base = this.emitted;
    this.frames.pop();
    this.cur = null;
    if (replayed !== null) return replayed;
    const rec = f.toRec(f.segmented ? "" : out, rs.steps - f.steps0, rs.built - f.built0, rs.chunks - f.chunks0, 0, this.slotReadAt);
    this.made(rec);
    return rec;
  }

  /** Appends a segment of output (`replayed`: a replayed record's). */
  private emit(out: string, replayed: boolean): void {
    if (!replayed && this.firstFresh < 0) this.firstFresh = this.nseg;
    this.segments[this.nseg++] = out;
  }

  /** Emits the current buffer of a segmented (top-level) unit before a segmented iteration. */
  private flush(): void {
    const rs = this.rs;
    if (rs.out.length > 0) {
      this.emit(rs.out, false);
      this.emitted += rs.out.length;
      rs.out = "";
    }
    rs.base = this.emitted;
  }

  /** Starts an iteration unit of a memoized loop run by the current unit. */
  beginIter(ord: number, key: unknown): Frame {
    const parent = this.cur as Frame;
    const depth = parent.depth + 1;
    const f = this.frameAt(depth);
    f.reset(depth, parent, ord, key);
    f.setup = this.serial++;
    const rs = this.rs;
    if (parent.depth === 0 && parent.segmented) {
      this.flush();
      f.segmented = true;
    } else {
      f.savedOut = rs.out;
      rs.base += rs.out.length;
      rs.out = "";
    }
    f.base = rs.base;
    f.steps0 = rs.steps;
    f.built0 = rs.built;
    f.chunks0 = rs.chunks;
    f.ae = rs.autoescape;
    this.frames.push(f);
    this.cur = f;
    return f;
  }

  /** The iteration's scope is set up (target, loop, frame entry): it starts now. */
  started(f: Frame): void {
    f.start = this.serial++;
  }

  /**
   * Ends an iteration unit: `replayed` is the previous record it replayed, or null when it
   * executed (with control code `ctl`). Returns the record standing for it.
   */
  endIter(f: Frame, replayed: Rec | null, ctl: number): Rec {
    const rs = this.rs;
    const out = rs.out;
    let used: Rec;
    if (replayed === null) {
      used = f.toRec(out, rs.steps - f.steps0, rs.built - f.built0, rs.chunks - f.chunks0, ctl, this.slotReadAt);
      this.made(used);
      this.stats.iterationsExecuted++;
    } else {
      used = replayed;
      this.stats.iterationsReused++;
    }
    this.frames.pop();
    const parent = f.parent as Frame;
    this.cur = parent;
    if (f.segmented) {
      if (out.length > 0) {
        this.emit(out, replayed !== null);
        this.emitted += out.length;
      }
      rs.out = "";
      rs.base = this.emitted;
    } else {
      rs.out = f.savedOut + out;
      rs.base = f.base - f.savedOut.length;
    }
    // the parent's record carries the iteration's effects (for replaying the parent whole;
    // top-level units that hold loops always run, their records are never replayed)
    if (parent.depth === 0 && parent.segmented) {
      if (used.bad) parent.bad = true;
      return used;
    }
    this.carry(parent, used, f.base - parent.base);
    return used;
  }

  /** Records a loop run by the current unit (expecting about `size` iterations); returns its entry. */
  loopEntry(node: number, size = 0): LoopEntry {
    this.tb.grow(TRACK_LOOP + 8 * size);
    const f = this.cur as Frame;
    const e = new LoopEntry(node, size > 0 ? new Array<Rec>(size) : []);
    (f.loops ??= []).push(e);
    return e;
  }

  /** The previous render's entry for the `ord`-th loop of the current unit, if the same loop. */
  prevLoop(ord: number, node: number): LoopEntry | null {
    const f = this.cur as Frame;
    const pl = f.prev?.loops?.[ord];
    return pl !== undefined && pl.node === node ? pl : null;
  }

  // ---- validation and replay ----

  /** Whether `rec` can stand for the unit about to run in the current state. */
  validate(rec: Rec, a: Act): boolean {
    const rs = this.rs;
    if (!this.admissible(rec)) return false;
    const steps = rs.steps;
    const built = rs.built;
    this.validating = true;
    try {
      return this.check(rec, rec.depth, a);
    } catch {
      return false;
    } finally {
      this.validating = false;
      rs.steps = steps;
      rs.built = built;
    }
  }

  /** Whether a record may be considered at all: sound, same autoescaping, within the budgets. */
  private admissible(rec: Rec): boolean {
    const rs = this.rs;
    if (rec.bad || rec.ae !== rs.autoescape) return false;
    return rs.steps + rec.steps <= rs.maxSteps && rs.built + rec.built <= rs.maxBuilt && this.rootLen() + rec.out.length <= rs.maxChars;
  }

  private rootLen(): number {
    const rs = this.rs;
    return rs.base + (rs.outStack.length > 0 ? (rs.outStack[0] as string).length : rs.out.length);
  }

  /**
   * Whether record `rec` (and its nested loops' records) holds when checked at depth `s`; with
   * `item`, an unchanged message it iterated, without its reads inside that message (Rec.fd).
   */
  private check(rec: Rec, s: number, a: Act, item: Path | null = null): boolean {
    if (rec.bad || (rec.stale && s < rec.depth)) return false;
    if (!this.checkList(item === null ? rec.o : this.fdOf(rec, item), s, a, rec.depth === s)) return false;
    const loops = rec.loops;
    if (loops !== null) {
      for (let i = 0; i < loops.length; i++) {
        const it = (loops[i] as LoopEntry).iters;
        for (let j = 0; j < it.length; j++) if (!this.check(it[j] as Rec, s, a, item)) return false;
      }
    }
    return true;
  }

  private checkList(o: unknown[], s: number, a: Act, scoped: boolean): boolean {
    const stats = this.stats;
    for (let i = 0; i < o.length; i += 5) {
      const kind = o[i] as number;
      if ((o[i + 1] as number) >= s) continue;
      stats.checks++;
      switch (kind) {
        case O_VAL:
          if (!sameShape((o[i + 2] as Path).resolve(this), o[i + 3])) return false;
          break;
        case O_LEN: {
          const v = (o[i + 2] as Path).resolve(this);
          const n = lenOf(v);
          if (n !== o[i + 3]) {
            const e = o[i + 4];
            if (!(e instanceof LoopEntry) || !scoped || this.ext === null || n < (o[i + 3] as number)) return false;
            if (!this.extend(i, e, o[i + 2] as Path, o[i + 3] as number, n, a)) return false;
          }
          break;
        }
        case O_TRUTH: {
          const v = (o[i + 2] as Path).resolve(this);
          if (v === NOTFOUND || truthOf(v) !== o[i + 3]) return false;
          break;
        }
        case O_KEYS: {
          const v = (o[i + 2] as Path).resolve(this);
          if (!isDict(v)) return false;
          const ks = dictKeys(v);
          const rk = o[i + 3] as unknown[];
          if (ks.length !== rk.length) return false;
          for (let j = 0; j < ks.length; j++) if (!sameShape(ks[j], rk[j])) return false;
          break;
        }
        case O_WHOLE: {
          const p = o[i + 2] as Path;
          const snap = o[i + 3];
          if (snap === NEVER) return false;
          if (p.snapEpoch === EPOCH && p.snap === snap) break;
          let v = p.resolve(this);
          if (v === NOTFOUND) return false;
          if (v instanceof SeqView) v = v.toArray();
          if (!deepEq(v, snap)) return false;
          if (!p.vol) {
            p.snapEpoch = EPOCH;
            p.snap = snap;
          }
          break;
        }
        case O_RSLOT: {
          const slot = o[i + 2] as number;
          const r = this.root;
          if (!this.svEq(r.s[slot], r.p[slot] ?? null, o[i + 3])) return false;
          break;
        }
        case O_RESOLVE: {
          const name = o[i + 2] as string;
          const rs = this.rs;
          if (rs.overlay !== null && rs.overlay.has(name)) return false;
          const sv = o[i + 3];
          if (sv === SV_MISSING) {
            // the common case: a name the template sets only in some branches, unset here
            const c = this.resolveCache.get(name);
            if (c === this.ctxVersion) break;
            if (rs.resolve(name) !== MISSING) return false;
            this.resolveCache.set(name, this.ctxVersion);
            break;
          }
          const v = rs.resolve(name);
          if (!this.svEq(v, this.ctxPathOf(name, v), sv)) return false;
          break;
        }
        case O_NSATTR: {
          const ns = this.ns.get(o[i + 2] as string);
          if (ns === undefined) return false;
          const attr = o[i + 3] as string;
          // (template values are never JS undefined: one lookup in the common case)
          const v0 = ns.attrs.get(attr);
          const v = v0 !== undefined || ns.attrs.has(attr) ? v0 : MISSING;
          if (!this.svEq(v, ns.paths === null ? null : ((ns.paths.get(attr) as Path | null | undefined) ?? null), o[i + 4])) return false;
          break;
        }
        case O_LOOP: {
          const lc = this.loopStack[o[i + 2] as number];
          if (lc === undefined) return false;
          const attr = o[i + 3] as string;
          const v = loopAttrNow(lc, attr, this);
          if (v === NOTFOUND || !this.svEq(v, this.lp, o[i + 4])) return false;
          // a reused iteration that read the loop's length counts as a read (the loop is then not
          // extensible: see runMemo), as when it executes (tLoopAttr)
          if (LEN_ATTRS.has(attr)) lc.tkLenRead = true;
          break;
        }
        case O_NOW:
          if (strftime(o[i + 2] as string, naiveFrom(this.rs.now)) !== o[i + 3]) return false;
          break;
        case O_COND:
        case O_SETV:
          // unchanged inputs are enough; else the test is re-evaluated in the unit's scope
          if (!this.checkList(o[i + 4] as unknown[], s, a, false)) {
            if (!scoped) return false;
            const sc = this.scopeFn;
            if (sc !== null) {
              // the iteration's scope (item, loop variable, frame entry), set up once
              this.scopeFn = null;
              sc();
            }
            this.reevaluations++;
            const ev = this.conds[o[i + 2] as number] as CondEv;
            const v = ev(this.rs, a);
            if (kind === O_COND ? v !== o[i + 3] : !sameShape(v, o[i + 3])) return false;
          }
          break;
        case O_UNUSED:
          if (!this.checkList(o[i + 4] as unknown[], s, a, false)) return false;
          break;
        case O_PCOND: {
          // decided by the position and the other operand (evaluated once per run: it reads only
          // state, which does not change during a run); unchanged inputs decide it too
          const id = o[i + 2] as number;
          const b = this.runNo;
          const known = b > 0 && this.otherAt[id] === b;
          if (!known && this.checkList(o[i + 4] as unknown[], s, a, false)) break;
          if (!scoped) return false;
          const pc = this.condPos[id] as PosCond;
          let other: unknown;
          if (known) other = this.otherVal[id];
          else {
            const sc = this.scopeFn;
            if (sc !== null) {
              this.scopeFn = null;
              sc();
            }
            other = pc.other(this.rs, a);
            if (b > 0) {
              this.otherAt[id] = b;
              this.otherVal[id] = other;
            }
          }
          const lc = this.loopStack[s - 1];
          if (typeof other !== "number" || lc === undefined) return false;
          this.reevaluations++;
          const pos = pc.attr === "index0" ? lc.index0 : lc.index0 + 1;
          const x = pc.posLeft ? pos : other;
          const y = pc.posLeft ? other : pos;
          const v = pc.op === "lt" ? x < y : pc.op === "lteq" ? x <= y : pc.op === "gt" ? x > y : x >= y;
          if (v !== o[i + 3]) return false;
          break;
        }
        case O_CACHED: {
          // within one run (runReplay) the state does not change: each distinct observation is
          // checked once (stamp: +run when it held, -run when it did not)
          stats.checks--;
          const id = o[i + 2] as number;
          const b = this.runNo;
          if (b > 0) {
            const st = this.stamps[id];
            if (st === b) break;
            if (st === -b) return false;
          }
          const ok = this.checkList(this.space.checkObs[id] as unknown[], s, a, false);
          if (b > 0) this.stamps[id] = ok ? b : -b;
          if (!ok) return false;
          break;
        }
        default:
          return false;
      }
    }
    return true;
  }

  /**
   * A loop run by the iteration being validated iterates a list that grew from `from` to `to`
   * items. Its recorded iterations still stand (their observations are checked with the
   * record, and none read the loop's length); the new items' iterations are taken from this
   * render's void, data-only records of the same loop over the same items, checked here. Then
   * the loop's effect on the iteration is unchanged: the new iterations output and write nothing
   * and depend on nothing of the iteration. Records the extension (see reuseIter).
   */
  private extend(at: number, e: LoopEntry, p: Path, from: number, to: number, a: Act): boolean {
    const m = this.voids.get(e.node);
    if (m === undefined) return false;
    const elem = elemPaths(p, this);
    const add: Rec[] = [];
    for (let j = from; j < to; j++) {
      const r = m.get(elem(j));
      if (r === undefined) return false;
      const kind = voidKind(r);
      // a relative record's reads of its parent's variables are mapped by noOpIn, not checked here
      if (!this.checkList(r.o, kind === VOID_RELATIVE ? r.depth - 1 : r.depth, a, false)) return false;
      if (kind === VOID_RELATIVE && !this.noOpIn(r, e)) return false;
      add.push(r);
    }
    (this.ext as Array<[number, LoopEntry, number, Rec[]]>).push([at, e, to, add]);
    return true;
  }

  /**
   * Whether iteration record `r` (of the same loop under another parent) changes nothing when
   * appended to loop `e` of the iteration being validated: each of its writes sets an attribute
   * of a namespace its parent holds in some variable to the value that the corresponding
   * namespace of this iteration (found through the same variable in `e`'s records) was last
   * given by `e`'s recorded iterations.
   */
  private noOpIn(r: Rec, e: LoopEntry): boolean {
    if (this.extKey === undefined) return false;
    const k = this.extKey;
    // the prefix of the keys of the namespaces the iteration being validated creates (Frame.id)
    const own = `${(this.cur as Frame).id()}/${this.extOrd}:${k instanceof Path ? "p" + k.id : "i" + String(k)}#`;
    // variable → this iteration's namespace key, from the loop's recorded iterations
    const keyOf = new Map<number, string>();
    const lastVal = new Map<string, unknown>();
    for (const it of e.iters) {
      const o = it.o;
      for (let i = 0; i < o.length; i += 5) {
        if (o[i] !== O_RSLOT) continue;
        const sv = o[i + 3];
        if (sv instanceof SV && sv.tag === S_NS && (sv.a as string).startsWith(own)) keyOf.set(o[i + 2] as number, sv.a as string);
      }
      const w = it.w;
      if (w !== null) for (let i = 0; i < w.length; i += 4) if (w[i] === W_NSSET) lastVal.set(`${w[i + 1] as string}\u0000${w[i + 2] as string}`, w[i + 3]);
    }
    // r's namespaces (through its variables) → this iteration's
    const map = new Map<string, string>();
    for (let i = 0; i < r.o.length; i += 5) {
      if (r.o[i] !== O_RSLOT) continue;
      const k = keyOf.get(r.o[i + 2] as number);
      if (k === undefined) return false;
      map.set((r.o[i + 3] as SV).a as string, k);
    }
    const w = r.w as unknown[];
    for (let i = 0; i < w.length; i += 4) {
      const k = map.get(w[i + 1] as string);
      if (k === undefined) return false;
      const prev = lastVal.get(`${k}\u0000${w[i + 2] as string}`);
      if (prev === undefined || prev instanceof SV || !sameShape(prev, w[i + 3])) return false;
    }
    return true;
  }

  /** A copy of `rec` whose grown loops include the iterations found by `extend`. */
  private extended(rec: Rec, ext: Array<[number, LoopEntry, number, Rec[]]>): Rec {
    let n = rec.o.length;
    for (const [, e, , add] of ext) n += e.iters.length + add.length;
    this.tb.grow(TRACK_REC + 8 * n);
    const r = new Rec(rec.depth, rec.key);
    r.o = rec.o.slice();
    r.loops = rec.loops === null ? null : rec.loops.slice();
    r.out = rec.out;
    r.w = rec.w;
    r.g = rec.g;
    r.steps = rec.steps;
    r.built = rec.built;
    r.chunks = rec.chunks;
    r.ctl = rec.ctl;
    r.ae = rec.ae;
    r.bad = rec.bad;
    r.scoped = rec.scoped;
    r.stale = rec.stale;
    for (const [, e, n, add] of ext) {
      const ne = new LoopEntry(e.node, e.iters.concat(add));
      // the loop's length observation, found by its loop (the list checked may have been a copy
      // without an unchanged item's reads, Rec.fd, where indices differ)
      let at = -1;
      for (let i = 0; i < r.o.length; i += 5) {
        if (r.o[i] === O_LEN && r.o[i + 4] === e) {
          at = i;
          break;
        }
      }
      if (at < 0) throw new ReplayError("grown loop without its length observation");
      r.o[at + 3] = n;
      r.o[at + 4] = ne;
      const li = r.loops === null ? -1 : r.loops.indexOf(e);
      if (li >= 0) (r.loops as LoopEntry[])[li] = ne;
      for (const x of add) {
        r.steps += 1 + x.steps;
        r.built += x.built;
        r.chunks += x.chunks;
      }
    }
    r.bytes = recBytes(r);
    return r;
  }

  /**
   * Reuses the previous record of the next iteration of a loop run by the current unit, if it
   * validates, without setting up a frame: `scope()` binds the loop variable and item and runs
   * the frame entry, only when a test has to be re-evaluated. Returns the record standing for
   * the iteration (the previous one, or a copy extended by grown inner loops), or null.
   */
  reuseIter(recIn: Rec, a: Act, scope: () => void, ord = 0): Rec | null {
    const rs = this.rs;
    let rec = recIn;
    if (!this.admissible(rec)) return null;
    const steps = rs.steps;
    const built = rs.built;
    this.validating = true;
    this.scopeFn = scope;
    this.ext = [];
    this.extOrd = ord;
    this.extKey = rec.key;
    try {
      const re = this.reevaluations;
      const item = this.unchangedItem(rec);
      if (!this.check(rec, rec.depth, a, item)) return null;
      if (item !== null) this.stats.unchangedItems++;
      if (this.ext.length > 0) {
        rec = this.extended(rec, this.ext);
        if (steps + rec.steps > rs.maxSteps || built + rec.built > rs.maxBuilt) return null;
      }
      // Held by re-evaluating a condition: the condition's recorded inputs need not all hold, so
      // the record must not stand inside its parent's record, whose validation skips the reads
      // internal to the parent (Rec.stale). Iterations of top-level loops have no such parent.
      if (re !== this.reevaluations && rec.depth >= 2) {
        if (rec === recIn) rec = this.extended(rec, []);
        rec.stale = true;
      }
    } catch {
      return null;
    } finally {
      this.validating = false;
      this.scopeFn = null;
      this.ext = null;
      this.extKey = undefined;
      rs.steps = steps;
      rs.built = built;
    }
    const parent = this.cur as Frame;
    const segmented = parent.depth === 0 && parent.segmented;
    if (segmented) this.flush();
    const start = this.rootLen();
    this.replay(rec);
    if (segmented) {
      const out = rs.out;
      if (out.length > 0) {
        this.emit(out, true);
        this.emitted += out.length;
      }
      rs.out = "";
      rs.base = this.emitted;
    }
    if (segmented) {
      this.stats.iterationsReused++;
      return rec;
    }
    this.carry(parent, rec, start - parent.base);
    this.stats.iterationsReused++;
    return rec;
  }

  /**
   * The item path of iteration record `rec` when it iterated `messages[u]` and that item's
   * content version is the same now as at the previous render (where `rec` held: it was recorded
   * or validated there) — then everything `rec` read inside the item is unchanged — else null.
   */
  private unchangedItem(rec: Rec): Path | null {
    const pv = this.prevVersions;
    if (pv === null) return null;
    const key = rec.key;
    if (!(key instanceof Path) || key.parent !== this.versionsPath || typeof key.key !== "number") return null;
    const v = (this.versions as readonly number[])[key.key];
    return v !== undefined && v >= 0 && pv[key.key] === v ? key : null;
  }

  /** Record `rec`'s observations for unchanged `item` (Rec.fd, Rec.fdList), computed once. */
  private fdOf(rec: Rec, item: Path): unknown[] {
    let fd = rec.fd;
    if (fd === undefined || rec.fdItem !== item) {
      fd = rec.fd = forUnchangedItem(rec.o, item, this.space, this.condPos, rec.depth - 1);
      rec.fdItem = item;
      const key = stateOnlyKey(fd);
      rec.fdList = key === null ? -1 : this.space.listId(key);
    }
    return fd;
  }

  /**
   * Replays, from position `i` of a loop run by a segmented top-level unit, the longest run of
   * iterations whose previous records (`pl.iters[t + d]`, matched by item path) iterated an
   * unchanged message (unchangedItem), write nothing, run no nested loop, emit no generation span
   * and validate. Returns how many it replayed (0: none; the caller then handles `i` itself).
   * `at(t)` sets up position t (the loop context's index and item, for loop-position
   * observations and re-evaluated conditions); `scope` binds the iteration's variables.
   *
   * No state is written during a run (its records write nothing; a condition re-evaluated in an
   * iteration's scope only binds that iteration's own loop variables, which no iteration of the
   * loop observes), so an interned state observation (O_CACHED) that held once in the run holds
   * for the rest of it: each is checked once per run instead of once per iteration.
   */
  runReplay(pl: LoopEntry, i: number, d: number, n: number, ip: (t: number) => Path, a: Act, at: (t: number) => void, scope: () => void, entry: LoopEntry): number {
    if (this.prevVersions === null) return 0;
    const rs = this.rs;
    const its = pl.iters;
    let steps = rs.steps;
    let built = rs.built;
    this.runNo = ++RUNS;
    if (this.stamps.length < this.space.checkObs.length + 64) this.stamps = new Int32Array(2 * this.space.checkObs.length + 64);
    if (this.listStamps.length < this.space.listIds.size + 64) this.listStamps = new Int32Array(2 * this.space.listIds.size + 64);
    this.validating = true;
    let t = i;
    try {
      for (; t < n; t++) {
        const rec = its[t + d];
        if (rec === undefined || rec.key !== ip(t)) break;
        if (rec.loops !== null || rec.w !== null || rec.g !== null || rec.ctl !== 0 || rec.bad || rec.ae !== rs.autoescape) break;
        const item = this.unchangedItem(rec);
        if (item === null) break;
        // the loop counts one step per iteration (for the first, the caller already has)
        const loopStep = t > i ? 1 : 0;
        if (steps + loopStep + rec.steps > rs.maxSteps || built + rec.built > rs.maxBuilt || this.emitted + rs.out.length + rec.out.length > rs.maxChars) break;
        const fd = this.fdOf(rec, item);
        // a list of state observations only that held in this run holds again
        const li = rec.fdList;
        if (fd.length > 0 && (li < 0 || this.listStamps[li] !== this.runNo)) {
          at(t);
          this.scopeFn = scope;
          const re = this.reevaluations;
          const ok = this.checkList(fd, rec.depth, a, true);
          // (a re-evaluated condition may have counted steps and built values)
          rs.steps = steps;
          rs.built = built;
          if (!ok) break;
          if (li >= 0 && re === this.reevaluations) this.listStamps[li] = this.runNo;
        }
        if (t === i) this.flush();
        steps += loopStep + rec.steps;
        rs.steps = steps;
        built += rec.built;
        rs.built = built;
        rs.chunks += rec.chunks;
        const out = rec.out;
        if (out.length > 0) {
          this.emit(out, true);
          this.emitted += out.length;
          rs.base = this.emitted;
        }
        entry.add(rec);
      }
    } catch {
      // a check that threw: the iteration at t is handled by the caller, as a failed validation
    } finally {
      this.validating = false;
      this.scopeFn = null;
      this.runNo = 0;
      rs.steps = steps;
      rs.built = built;
    }
    const m = t - i;
    this.stats.iterationsReused += m;
    this.stats.unchangedItems += m;
    return m;
  }

  /**
   * The parent unit's record takes over a nested unit's effects (so the parent can be replayed
   * whole): its writes, its generation spans shifted by `off` (where the nested unit's output
   * starts in the parent's), and unsoundness.
   */
  private carry(parent: Frame, rec: Rec, off: number): void {
    const uw = rec.w;
    this.tb.grow(8 * ((uw?.length ?? 0) + (rec.g?.length ?? 0)));
    if (uw !== null) {
      const pw = parent.w;
      if (pw === null) parent.w = uw.slice();
      else for (let i = 0; i < uw.length; i++) pw.push(uw[i]);
    }
    const ug = rec.g;
    if (ug !== null) {
      const g = (parent.g ??= []);
      for (let i = 0; i < ug.length; i += 2) g.push((ug[i] as number) + off, ug[i + 1] as number);
    }
    if (rec.bad) parent.bad = true;
  }

  /** Appends a validated record's effects to the render (its output goes to the current buffer). */
  replay(rec: Rec): void {
    const rs = this.rs;
    rs.steps += rec.steps;
    rs.built += rec.built;
    rs.chunks += rec.chunks;
    if (rec.g !== null) {
      const base = this.rootLen();
      for (let i = 0; i < rec.g.length; i += 2) {
        const st = base + (rec.g[i] as number);
        rs.generation.push([st, st + (rec.g[i + 1] as number)]);
      }
    }
    if (rec.out.length > 0) rs.out += rec.out;
    if (rec.w !== null) this.applyWrites(rec.w);
  }

  /** Finds the previous record of an iteration (by position, then by item path). */
  match(pl: LoopEntry, i: number, key: unknown, delta: { d: number }): Rec | null {
    const it = pl.iters;
    const r0 = it[i];
    if (r0 !== undefined && r0.key === key) return r0;
    if (!(key instanceof Path)) return null;
    const r1 = it[i + delta.d];
    if (r1 !== undefined && r1.key === key) return r1;
    // items of one list seen in the same or the opposite order, shifted (appends, reversed loops)
    const iref = r0 !== undefined ? i : it.length - 1;
    const ref = it[iref];
    if (ref !== undefined && ref.key instanceof Path && ref.key.parent === key.parent && typeof key.key === "number" && typeof ref.key.key === "number") {
      const dk = key.key - ref.key.key;
      const ra = it[iref + dk];
      if (ra !== undefined && ra.key === key) {
        delta.d = iref + dk - i;
        return ra;
      }
      const rb = it[iref - dk];
      if (rb !== undefined && rb.key === key) {
        delta.d = iref - dk - i;
        return rb;
      }
      // list items are only ever shifted or reversed (a new item, e.g. one just appended)
      return null;
    }
    let mp = pl.map;
    if (mp === null) {
      mp = pl.map = new Map();
      for (let j = 0; j < it.length; j++) mp.set((it[j] as Rec).key, it[j] as Rec);
    }
    const r = mp.get(key);
    if (r === undefined) return null;
    delta.d = it.indexOf(r) - i;
    return r;
  }

  /** The finished trace of this render. */
  finish(owner: object, top: Array<Rec | null>): Trace {
    // records, plus the interned paths (shared by the conversation's traces)
    let bytes = 256 + this.space.nextId * 96 + this.space.checkObs.length * 128 + this.space.listIds.size * 96;
    for (const r of top) if (r !== null) bytes += r.bytes;
    const v = this.versions;
    if (v !== null) bytes += 8 * v.length;
    return new Trace(owner, this.space, top, bytes, v, this.nseg);
  }
}

/** Replaying a write failed unexpectedly (the render is redone without a trace). */
export class ReplayError extends Error {}

/** Loop attributes that depend on the loop's length. */
const LEN_ATTRS = new Set(["revindex", "revindex0", "last", "length", "nextitem"]);

/** Whether path `p` reaches caller data through `item` (is `item` or below it). */
function under(p: Path, item: Path): boolean {
  for (let q: Path | null = p; q !== null; q = q.parent) if (q === item) return true;
  return false;
}

/**
 * Observations `o` for an unchanged `item` (Rec.fd): without the data observations of paths under
 * `item`, and with state observations (root slots, context names, namespace attributes) whose
 * recorded value has a key interned as O_CACHED — also inside condition and set observations'
 * inputs. The same array when nothing changes.
 */
function forUnchangedItem(o: unknown[], item: Path, space: PathSpace, pos: ReadonlyArray<PosCond | undefined>, loopJ: number, keepData = false): unknown[] {
  let out: unknown[] | null = null;
  for (let i = 0; i < o.length; i += 5) {
    const kind = o[i] as number;
    let keep = true;
    let rep: unknown[] | null = null;
    if (kind === O_VAL || kind === O_TRUTH || kind === O_KEYS || kind === O_WHOLE || kind === O_LEN) {
      keep = keepData || !under(o[i + 2] as Path, item);
    } else if (kind === O_COND || kind === O_SETV || kind === O_UNUSED) {
      // A condition or set that held by being re-evaluated held with inputs that may not all
      // hold (only its value did): its data observations are not known to be true of the
      // previous render, so they stay. An unused set's inputs always held.
      const fine = forUnchangedItem(o[i + 4] as unknown[], item, space, pos, loopJ, keepData || kind !== O_UNUSED);
      const pc = kind === O_COND ? pos[o[i + 2] as number] : undefined;
      // (decided on the test's own observations: one that read the item is not a position test)
      if (pc !== undefined && positionAndState(o[i + 4] as unknown[], pc.attr, loopJ)) rep = [O_PCOND, o[i + 1], o[i + 2], o[i + 3], fine];
      else if (fine !== o[i + 4]) rep = [o[i], o[i + 1], o[i + 2], o[i + 3], fine];
    } else if (kind === O_RSLOT || kind === O_RESOLVE || kind === O_NSATTR) {
      const sk = svKey(kind === O_NSATTR ? o[i + 4] : o[i + 3]);
      if (sk !== null) {
        const key = kind === O_RSLOT ? `S${o[i + 2] as number}|${sk}` : kind === O_RESOLVE ? `R${o[i + 2] as string}\u0000${sk}` : `N${o[i + 2] as string}\u0000${o[i + 3] as string}\u0000${sk}`;
        rep = [O_CACHED, o[i + 1], space.checkId(key, kind, o[i + 2], o[i + 3], o[i + 4]), null, null];
      }
    }
    if (out === null) {
      if (keep && rep === null) continue;
      out = o.slice(0, i);
    }
    if (rep !== null) out.push(rep[0], rep[1], rep[2], rep[3], rep[4]);
    else if (keep) out.push(o[i], o[i + 1], o[i + 2], o[i + 3], o[i + 4]);
  }
  return out ?? o;
}

/**
 * A key for the content of an observation list that reads only state — interned state
 * observations, and conditions / sets / unused sets over such lists — else null. Two lists with
 * the same key hold together in any one state, except where a condition has to be re-evaluated
 * (its truth then depends on each iteration's own scope).
 */
function stateOnlyKey(o: unknown[]): string | null {
  let key = "";
  for (let i = 0; i < o.length; i += 5) {
    const k = o[i] as number;
    if (k === O_CACHED) key += `c${o[i + 1] as number},${o[i + 2] as number};`;
    else if (k === O_COND || k === O_SETV || k === O_UNUSED) {
      const inner = stateOnlyKey(o[i + 4] as unknown[]);
      const v = k === O_UNUSED ? "" : svKey(o[i + 3]);
      if (inner === null || v === null) return null;
      key += `k${k},${o[i + 1] as number},${o[i + 2] as number},${v}(${inner});`;
    } else return null;
  }
  return key;
}

/**
 * Whether a condition's observations are one read of its own loop's position (`loop.<attr>` of
 * loop depth `loopJ`) and otherwise only state (root slots, context names, namespace
 * attributes): then its other operand's value depends on state alone (see PosCond).
 */
function positionAndState(fine: unknown[], attr: string, loopJ: number): boolean {
  let positions = 0;
  for (let i = 0; i < fine.length; i += 5) {
    const k = fine[i];
    if (k === O_LOOP) {
      if (fine[i + 2] !== loopJ || fine[i + 3] !== attr) return false;
      positions++;
    } else if (k !== O_RSLOT && k !== O_RESOLVE && k !== O_NSATTR) return false;
  }
  return positions === 1;
}

/**
 * A key for a recorded state value such that two values with the same key compare equal to the
 * same current values (Tracker.svEq); null for values not interned.
 */
function svKey(sv: unknown): string | null {
  switch (typeof sv) {
    case "string":
      return "s" + sv;
    case "number":
      return Object.is(sv, -0) ? "n-0" : "n" + String(sv);
    case "boolean":
      return sv ? "T" : "F";
    case "bigint":
      return "g" + String(sv);
  }
  if (sv === null) return "z";
  if (!(sv instanceof SV)) return null;
  switch (sv.tag) {
    case S_PATH: {
      const b = sv.b;
      const bk = b === TAG_LIST ? "L" : b === TAG_TUPLE ? "U" : b === TAG_DICT ? "D" : svKey(b);
      return bk === null ? null : `p${(sv.a as Path).id}:${bk}`;
    }
    case S_NS:
      return "ns" + (sv.a as string);
    case S_MISSING:
      return "M";
    case S_UNDEF:
      return "u" + (sv.a as string);
  }
  return null;
}

/**
 * Whether a test's inputs include state that typically changes while its result does not
 * (namespace attributes, variables, context lookups, loop positions, lengths). Tests reading
 * only caller data are cheaper to validate by their data observations than by re-evaluation.
 */
function volatile(fine: unknown[]): boolean {
  for (let i = 0; i < fine.length; i += 5) {
    const k = fine[i];
    if (k !== O_VAL && k !== O_TRUTH && k !== O_WHOLE && k !== O_NOW) return true;
  }
  return false;
}

const VOID_UNKNOWN = 0;
const VOID_YES = 1;
const VOID_NO = 2;
/** writes only attributes of namespaces its parent holds in variables it read (see Tracker.noOpIn) */
const VOID_RELATIVE = 3;
const voidMemo = new WeakMap<Rec, number>();

/**
 * VOID_YES: a record with no effect at all whose observations are of caller data only;
 * VOID_RELATIVE: the same, except that it also read variables of its parent holding
 * namespaces, and wrote primitive values to those namespaces' attributes (and nothing else).
 */
function voidKind(r: Rec): number {
  let v = voidMemo.get(r) ?? VOID_UNKNOWN;
  if (v === VOID_UNKNOWN) {
    v = VOID_NO;
    if (r.out === "" && r.g === null && !r.bad && !r.stale && r.ctl === 0 && r.loops === null) {
      if (r.w === null) {
        if (dataOnly(r.o, -1)) v = VOID_YES;
      } else if (dataOnly(r.o, r.depth - 1)) {
        const keys = new Set<unknown>();
        for (let i = 0; i < r.o.length; i += 5) if (r.o[i] === O_RSLOT) keys.add((r.o[i + 3] as SV).a);
        let ok = true;
        for (let i = 0; i < r.w.length && ok; i += 4) ok = r.w[i] === W_NSSET && keys.has(r.w[i + 1]) && !(r.w[i + 3] instanceof SV);
        if (ok) v = VOID_RELATIVE;
      }
    }
    voidMemo.set(r, v);
  }
  return v;
}

/**
 * Observations of caller data only (and context lookups of unset names); with `parentDepth`
 * ≥ 0, also reads of the parent's variables holding namespaces.
 */
function dataOnly(o: unknown[], parentDepth: number): boolean {
  for (let i = 0; i < o.length; i += 5) {
    const k = o[i];
    if (k === O_RSLOT && parentDepth >= 0 && o[i + 1] === parentDepth) {
      const sv = o[i + 3];
      if (sv instanceof SV && sv.tag === S_NS && o[i + 4] === NSREF) continue;
      return false;
    }
    if (o[i + 1] !== -1) return false;
    if (k === O_VAL || k === O_LEN || k === O_TRUTH || k === O_KEYS || k === O_WHOLE) {
      if ((o[i + 2] as Path).vol) return false;
      continue;
    }
    if (k === O_RESOLVE) {
      if (o[i + 3] !== SV_MISSING) return false;
      continue;
    }
    if (k === O_COND || k === O_SETV || k === O_UNUSED) {
      if (!dataOnly(o[i + 4] as unknown[], parentDepth)) return false;
      continue;
    }
    return false;
  }
  return true;
}

/**
 * Paths of the elements of a sequence at path `p`, through slices and reversals to the
 * underlying list (so a loop over `messages[::-1]` finds last render's iteration of the same
 * message): element i is `base[start + i * step]`, computed once per loop.
 */
export function elemPaths(p: Path, tk: Tracker): (i: number) => Path {
  let base = p;
  let start = 0;
  let step = 1;
  const layers: Array<[number, number]> = [];
  while (base.op === P_SLICE || base.op === P_REV) {
    const below = base.parent as Path;
    const n = seqLen(below.resolve(tk));
    if (n < 0) break;
    if (base.op === P_REV) layers.push([n - 1, -1]);
    else {
      const args = base.sargs as unknown[];
      try {
        const [st, sp] = sliceBounds(n, args[0], args[1], args[2]);
        layers.push([st, sp]);
      } catch {
        break;
      }
    }
    base = below;
  }
  if (layers.length === 0) return (i) => p.item(i);
  // index i of a layer is index start + i * step of the one below it
  for (const [st, sp] of layers) {
    start = st + start * sp;
    step = step * sp;
  }
  const b = base;
  return (i) => b.item(start + i * step);
}

function isPrimitive(v: unknown): boolean {
  const t = typeof v;
  return v === null || t === "string" || t === "number" || t === "boolean" || t === "bigint" || v instanceof PyFloat;
}

function lenOf(v: unknown): number {
  if (v instanceof SeqView) return v.n;
  if (v instanceof DictViewOf) return isDict(v.dict) ? pyLen(v.dict) : -1;
  if (v === NOTFOUND || v === MISSING) return -1;
  try {
    return pyLen(v);
  } catch {
    return -1;
  }
}

function truthOf(v: unknown): boolean {
  if (v instanceof SeqView) return v.n > 0;
  if (v instanceof DictViewOf) return truthy(v.dict) ;
  return truthy(v);
}

/** A loop attribute's value now, without side effects (its path in tk.lp); NOTFOUND if unsupported. */
function loopAttrNow(lc: TrackedLoop, attr: string, tk: Tracker): unknown {
  tk.lp = null;
  if (attr === "previtem" || attr === "nextitem") {
    const v = attr === "previtem" ? lc.previtem : lc.nextitem;
    if (lc.tkItemPath !== null && !(v instanceof Undefined)) tk.lp = lc.tkItemPath(lc.index0 + (attr === "previtem" ? -1 : 1), v, tk);
    return v;
  }
  // cycle and changed are methods with effects: not observable values
  if (attr === "cycle" || attr === "changed") return NOTFOUND;
  const v = loopAttr(lc, attr);
  return v === MISSING ? NOTFOUND : v;
}

/** Estimated bytes held by a record (and what it nests). */
export function recBytes(r: Rec): number {
  let b = 96 + r.out.length * 2 + (r.w === null ? 0 : r.w.length * 8) + (r.g === null ? 0 : r.g.length * 8);
  let obs = r.o.length * 8;
  for (let i = 0; i < r.o.length; i += 5) {
    const k = r.o[i];
    if (k === O_WHOLE) b += 64;
    else if (k === O_COND || k === O_SETV || k === O_UNUSED) obs += (r.o[i + 4] as unknown[]).length * 8;
  }
  // the observations, and room for their copy without an unchanged item's reads (Rec.fd)
  b += 2 * obs;
  if (r.loops !== null) for (const l of r.loops) for (const it of l.iters) b += it.bytes + 8;
  return b;
}

export { NOTFOUND, SeqView, isContainer };
