/**
 * Paths to caller data (interned in a PathSpace, so they survive from render to render), their
 * resolution against the current render's variables, the tracking budget, and the data access
 * tracked renders share (dataGet, list and dict views).
 *
 * Layer: template/incremental.
 */
import { dataValue, dictGet, isDict, isPlainDict } from "../jinja/ops.js";
import { sliceBounds } from "../jinja/runtime.js";
import { MISSING, isTuple, mkTuple } from "../jinja/values.js";
import type { Recorder } from "./recorder.js";

export const hasOwn = Object.prototype.hasOwnProperty;

// ---- paths ------------------------------------------------------------------------------------

export const P_CTX = 0;
export const P_ITEM = 1;
export const P_SLICE = 2;
export const P_REV = 3;
export const P_VIEW = 4;
export const P_LOOPITEM = 5;

/**
 * The tracking state of one render (its records, observations, snapshots, new paths) would
 * exceed its bound (RenderBudget.maxTrackBytes): the render is redone whole, untracked.
 */
export class TrackingBudgetError extends Error {}

/** A re-evaluated test would call a macro or change state: the validation fails. */
export class ValidationAbortError extends Error {}
export const TRACK_OVER = new TrackingBudgetError("tracking budget exceeded");

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
export const TRACK_PATH = 160;
export const TRACK_OBS = 40;
export const TRACK_REC = 160;
export const TRACK_SNAP = 64;
export const TRACK_LOOP = 96;

/** Resolution failed: the parent was not a container (never equal to any recorded value). */
export const NOTFOUND: unique symbol = Symbol("notfound") as never;

/** Global render epoch: path resolutions are cached per render. */
export let EPOCH = 0;
/** The current render epoch (read through this function: modules may not assign imports). */
export function epoch(): number {
  return EPOCH;
}
/** Starts a render: a new epoch. */
export function nextEpoch(): number {
  return ++EPOCH;
}

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
  resolve(tk: Recorder): unknown {
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

export function sliceKey(v: unknown): string {
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

  /** interned observation lists that read only state (see Rec.outsideItemList): content key → id */
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
export class SeqView {
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
export class DictViewOf {
  constructor(
    readonly kind: string,
    readonly dict: object,
  ) {}
}

export function seqLen(v: unknown): number {
  if (Array.isArray(v)) return v.length;
  if (v instanceof SeqView) return v.n;
  return -1;
}

/** Python slice of a sequence as a view (NOTFOUND when not a sequence or the slice fails). */
export function sliceView(b: unknown, sargs: unknown[]): unknown {
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
