/**
 * What a tracked render keeps: observation and write codes, records of units (Rec), loop entries,
 * the trace handed back to the caller, unit frames, work counters, the pure helpers that
 * classify observations (shared by recording, validation and replay), and the readable form of
 * a trace: typed observations and writes decoded from the packed arrays, `Trace.describe()`.
 *
 * Layer: template/incremental.
 */
import { PyFloat } from "../../json/values.js";
import { isDict, pyLen, truthy } from "../jinja/ops.js";
import { sliceBounds, type Act, type RenderState } from "../jinja/runtime.js";
import type { TrackedLoop } from "./loop.js";
import { loopAttr } from "../jinja/methods.js";
import { MISSING, Undefined } from "../jinja/values.js";
import { P_CTX, P_ITEM, P_SLICE, P_REV, P_VIEW, P_LOOPITEM, NOTFOUND, Path, PathSpace, SeqView, DictViewOf, seqLen } from "./paths.js";
import { TAG_LIST, TAG_TUPLE, TAG_DICT, S_PATH, S_NS, S_MACRO, S_DEEP, S_IDENT, S_UNDEF, S_MISSING, S_NEVER, SV, SV_MISSING } from "./observed.js";
import type { Tracker } from "./tracker.js";

// ---- records ---------------------------------------------------------------------------------

/** marks a variable read only to assign one of its namespace's attributes */
export const NSREF: unique symbol = Symbol("nsref") as never;

export const O_VAL = 1;
export const O_LEN = 2;
export const O_TRUTH = 3;
export const O_KEYS = 4;
export const O_WHOLE = 5;
export const O_RSLOT = 6;
export const O_RESOLVE = 7;
export const O_NSATTR = 8;
export const O_LOOP = 9;
export const O_NOW = 10;
export const O_COND = 11;
export const O_SETV = 12;
/** a `set` whose value the unit never read: only its inputs' types matter (c: their observations) */
export const O_UNUSED = 13;
/** an interned state observation (RSLOT, RESOLVE, NSATTR): [O_CACHED, m, id] — see Tracker.runReplay */
export const O_CACHED = 14;
/** a condition `loop.index0 <op> E` whose inputs are its position and state: [O_PCOND, m, id, truth, fine] */
export const O_PCOND = 15;

export const W_ROOT = 1;
export const W_NSNEW = 2;
export const W_NSSET = 3;

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
  observations: unknown[] = [];
  loops: LoopEntry[] | null = null;
  out = "";
  /** writes: [kind, a, b, c] × n (including nested units', in order) */
  writes: unknown[] | null = null;
  /** generation spans relative to the unit's start: [start, length] × n */
  generation: number[] | null = null;
  steps = 0;
  /** build units the unit charged (RenderState.built) */
  built = 0;
  chunks = 0;
  control = 0;
  autoescape = false;
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
  outsideItem: unknown[] | undefined = undefined;
  outsideItemPath: Path | null = null;
  /** when `fd` reads only state (no position, no data): the id of its content (PathSpace.listId), else -1 */
  outsideItemList = -1;
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

  /** The trace in readable form, one line per unit, observation, write and loop (debugging). */
  describe(): string {
    return describeTrace(this);
  }
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
export class UnitFrame {
  depth = 0;
  parent: UnitFrame | null = null;
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
  autoescape = false;
  bad = false;
  /** `set`s of total integer expressions: [observation index, slot, serial of the write] × n */
  lazy: number[] | null = null;
  /** this unit (or one nested in it) created or wrote a namespace */
  nsWrites = false;
  /** recordings: observations, writes, generation spans, loops */
  observations: unknown[] = [];
  writes: unknown[] | null = null;
  generation: number[] | null = null;
  loops: LoopEntry[] | null = null;
  private idStr: string | null = null;

  reset(depth: number, parent: UnitFrame | null, ord: number, key: unknown): void {
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
    this.observations.length = 0;
    this.writes = null;
    this.generation = null;
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
    // a segment's text is held (and charged) by the splicer's cached render already
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
        const fine = this.observations[at + 4] as unknown[];
        const kept: unknown[] = [];
        for (let j = 0; j < fine.length; j += 5) if (fine[j] !== O_LEN && fine[j] !== O_LOOP) kept.push(fine[j], fine[j + 1], fine[j + 2], fine[j + 3], fine[j + 4]);
        this.observations[at] = O_UNUSED;
        this.observations[at + 4] = kept;
      }
    }
    const r = new Rec(this.depth, this.key);
    r.observations = this.observations;
    this.observations = [];
    r.loops = this.loops;
    r.writes = this.writes;
    r.generation = this.generation;
    r.out = out;
    r.steps = steps;
    r.built = built;
    r.chunks = chunks;
    r.control = ctl;
    r.autoescape = this.autoescape;
    r.bad = this.bad;
    for (let i = 0; i < r.observations.length; i += 5) {
      if (r.observations[i] === O_COND || r.observations[i] === O_SETV) {
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

/** Replaying a write failed unexpectedly (the render is redone without a trace). */
export class ReplayError extends Error {}

/** Loop attributes that depend on the loop's length. */
export const LEN_ATTRS = new Set(["revindex", "revindex0", "last", "length", "nextitem"]);

/** Whether path `p` reaches caller data through `item` (is `item` or below it). */
export function under(p: Path, item: Path): boolean {
  for (let q: Path | null = p; q !== null; q = q.parent) if (q === item) return true;
  return false;
}

/**
 * Observations for an unchanged `item` (Rec.outsideItem): without the data observations of paths under
 * `item`, and with state observations (root slots, context names, namespace attributes) whose
 * recorded value has a key interned as O_CACHED — also inside condition and set observations'
 * inputs. The same array when nothing changes.
 */
export function forUnchangedItem(o: unknown[], item: Path, space: PathSpace, pos: ReadonlyArray<PosCond | undefined>, loopJ: number, keepData = false): unknown[] {
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
export function stateOnlyKey(o: unknown[]): string | null {
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
export function positionAndState(fine: unknown[], attr: string, loopJ: number): boolean {
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
export function svKey(sv: unknown): string | null {
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
export function volatile(fine: unknown[]): boolean {
  for (let i = 0; i < fine.length; i += 5) {
    const k = fine[i];
    if (k !== O_VAL && k !== O_TRUTH && k !== O_WHOLE && k !== O_NOW) return true;
  }
  return false;
}

export const VOID_UNKNOWN = 0;
export const VOID_YES = 1;
export const VOID_NO = 2;
/** writes only attributes of namespaces its parent holds in variables it read (see Tracker.noOpIn) */
export const VOID_RELATIVE = 3;
export const voidMemo = new WeakMap<Rec, number>();

/**
 * VOID_YES: a record with no effect at all whose observations are of caller data only;
 * VOID_RELATIVE: the same, except that it also read variables of its parent holding
 * namespaces, and wrote primitive values to those namespaces' attributes (and nothing else).
 */
export function voidKind(r: Rec): number {
  let v = voidMemo.get(r) ?? VOID_UNKNOWN;
  if (v === VOID_UNKNOWN) {
    v = VOID_NO;
    if (r.out === "" && r.generation === null && !r.bad && !r.stale && r.control === 0 && r.loops === null) {
      if (r.writes === null) {
        if (dataOnly(r.observations, -1)) v = VOID_YES;
      } else if (dataOnly(r.observations, r.depth - 1)) {
        const keys = new Set<unknown>();
        for (let i = 0; i < r.observations.length; i += 5) if (r.observations[i] === O_RSLOT) keys.add((r.observations[i + 3] as SV).a);
        let ok = true;
        for (let i = 0; i < r.writes.length && ok; i += 4) ok = r.writes[i] === W_NSSET && keys.has(r.writes[i + 1]) && !(r.writes[i + 3] instanceof SV);
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
export function dataOnly(o: unknown[], parentDepth: number): boolean {
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

export function isPrimitive(v: unknown): boolean {
  const t = typeof v;
  return v === null || t === "string" || t === "number" || t === "boolean" || t === "bigint" || v instanceof PyFloat;
}

export function lenOf(v: unknown): number {
  if (v instanceof SeqView) return v.n;
  if (v instanceof DictViewOf) return isDict(v.dict) ? pyLen(v.dict) : -1;
  if (v === NOTFOUND || v === MISSING) return -1;
  try {
    return pyLen(v);
  } catch {
    return -1;
  }
}

export function truthOf(v: unknown): boolean {
  if (v instanceof SeqView) return v.n > 0;
  if (v instanceof DictViewOf) return truthy(v.dict) ;
  return truthy(v);
}

/** A loop attribute's value now, without side effects (its path in tk.lp); NOTFOUND if unsupported. */
export function loopAttrNow(lc: TrackedLoop, attr: string, tk: Tracker): unknown {
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
  let b = 96 + r.out.length * 2 + (r.writes === null ? 0 : r.writes.length * 8) + (r.generation === null ? 0 : r.generation.length * 8);
  let obs = r.observations.length * 8;
  for (let i = 0; i < r.observations.length; i += 5) {
    const k = r.observations[i];
    if (k === O_WHOLE) b += 64;
    else if (k === O_COND || k === O_SETV || k === O_UNUSED) obs += (r.observations[i + 4] as unknown[]).length * 8;
  }
  // the observations, and room for their copy without an unchanged item's reads (Rec.outsideItem)
  b += 2 * obs;
  if (r.loops !== null) for (const l of r.loops) for (const it of l.iters) b += it.bytes + 8;
  return b;
}

// ---- readable form ----------------------------------------------------------------------------
// Records keep observations packed ([kind, m, a, b, c] × n) and writes packed ([kind, a, b, c] × n)
// for speed; these decode them into named fields, for tests and for reading a trace.

/** One observation of a record, decoded. `recorded`: the value (or shape) it saw. */
export type Observation =
  /** caller data reached by a path: its shape (value), length, truth, keys, or the whole value */
  | { readonly kind: "value" | "length" | "truth" | "keys" | "whole"; readonly path: string; readonly recorded: unknown }
  /** a variable's activation slot, `depth`: the unit that wrote it (-1: before the render) */
  | { readonly kind: "slot"; readonly depth: number; readonly slot: number; readonly recorded: unknown; readonly namespaceRef: boolean }
  /** a name resolved in the context */
  | { readonly kind: "name"; readonly depth: number; readonly name: string; readonly recorded: unknown }
  | { readonly kind: "namespace-attribute"; readonly depth: number; readonly namespace: unknown; readonly attribute: string; readonly recorded: unknown }
  | { readonly kind: "loop-attribute"; readonly loop: number; readonly attribute: string; readonly recorded: unknown }
  /** strftime_now(format) */
  | { readonly kind: "clock"; readonly format: string; readonly recorded: unknown }
  /** a test or `set` value re-evaluated at validation, with the observations of its inputs */
  | { readonly kind: "condition" | "set-value" | "unused-set" | "position-condition"; readonly id: unknown; readonly recorded: unknown; readonly inputs: readonly Observation[] }
  /** a state observation interned in the trace's path space (PathSpace.checkId) */
  | { readonly kind: "cached"; readonly depth: number; readonly id: number };

/** A write of a record that outlives its unit, decoded. */
export type Write =
  | { readonly kind: "root"; readonly slot: number; readonly name: string; readonly value: unknown }
  | { readonly kind: "namespace-new"; readonly namespace: unknown; readonly names: unknown; readonly values: unknown }
  | { readonly kind: "namespace-set"; readonly namespace: unknown; readonly attribute: string; readonly value: unknown };

/** A path to caller data as text: `messages[3]["content"]`, `reversed(messages)`, `loop1.item`. */
export function pathText(p: Path): string {
  const parent = p.parent === null ? "" : pathText(p.parent);
  switch (p.op) {
    case P_CTX:
      return String(p.key);
    case P_ITEM:
      return `${parent}[${JSON.stringify(p.key) ?? String(p.key)}]`;
    case P_SLICE:
      return `${parent}[${(p.sargs ?? []).map((x) => (x === null || x === undefined ? "" : String(x))).join(":")}]`;
    case P_REV:
      return `reversed(${parent})`;
    case P_VIEW:
      return `${parent}.${String(p.key)}()`;
    case P_LOOPITEM:
      return `loop${String(p.key)}.item`;
    default:
      return `${parent}?${p.op}`;
  }
}

/** The observations of a packed array (a record's `observations`), decoded. */
export function observationsOf(packed: readonly unknown[]): Observation[] {
  const out: Observation[] = [];
  for (let i = 0; i + 4 < packed.length; i += 5) {
    const kind = packed[i] as number;
    const m = packed[i + 1] as number;
    const a = packed[i + 2];
    const b = packed[i + 3];
    const c = packed[i + 4];
    const path = a instanceof Path ? pathText(a) : String(a);
    switch (kind) {
      case O_VAL:
        out.push({ kind: "value", path, recorded: b });
        break;
      case O_LEN:
        out.push({ kind: "length", path, recorded: b });
        break;
      case O_TRUTH:
        out.push({ kind: "truth", path, recorded: b });
        break;
      case O_KEYS:
        out.push({ kind: "keys", path, recorded: b });
        break;
      case O_WHOLE:
        out.push({ kind: "whole", path, recorded: b });
        break;
      case O_RSLOT:
        out.push({ kind: "slot", depth: m, slot: a as number, recorded: b, namespaceRef: c === NSREF });
        break;
      case O_RESOLVE:
        out.push({ kind: "name", depth: m, name: String(a), recorded: b });
        break;
      case O_NSATTR:
        out.push({ kind: "namespace-attribute", depth: m, namespace: a, attribute: String(b), recorded: c });
        break;
      case O_LOOP:
        out.push({ kind: "loop-attribute", loop: a as number, attribute: String(b), recorded: c });
        break;
      case O_NOW:
        out.push({ kind: "clock", format: String(a), recorded: b });
        break;
      case O_COND:
      case O_SETV:
      case O_UNUSED:
      case O_PCOND: {
        const name = kind === O_COND ? "condition" : kind === O_SETV ? "set-value" : kind === O_UNUSED ? "unused-set" : "position-condition";
        out.push({ kind: name, id: a, recorded: b, inputs: Array.isArray(c) ? observationsOf(c) : [] });
        break;
      }
      case O_CACHED:
        out.push({ kind: "cached", depth: m, id: a as number });
        break;
      default:
        throw new Error(`observationsOf: unknown observation kind ${kind}`);
    }
  }
  return out;
}

/** The writes of a packed array (a record's `writes`), decoded. */
export function writesOf(packed: readonly unknown[] | null): Write[] {
  const out: Write[] = [];
  if (packed === null) return out;
  for (let i = 0; i + 3 < packed.length; i += 4) {
    const kind = packed[i];
    const a = packed[i + 1];
    const b = packed[i + 2];
    const c = packed[i + 3];
    if (kind === W_ROOT) out.push({ kind: "root", slot: a as number, name: String(b), value: c });
    else if (kind === W_NSNEW) out.push({ kind: "namespace-new", namespace: a, names: b, values: c });
    else if (kind === W_NSSET) out.push({ kind: "namespace-set", namespace: a, attribute: String(b), value: c });
    else throw new Error(`writesOf: unknown write kind ${String(kind)}`);
  }
  return out;
}

/** How a state value (SV) was recorded, by its tag. */
const SV_TAGS = new Map<number, string>([
  [S_PATH, "caller data by path"],
  [S_NS, "namespace"],
  [S_MACRO, "macro"],
  [S_DEEP, "deep copy"],
  [S_IDENT, "template object"],
  [S_UNDEF, "undefined"],
  [S_MISSING, "missing"],
  [S_NEVER, "not comparable"],
]);

/** A recorded value, short: primitives as JSON (cut at 60 characters), containers by kind. */
function shown(v: unknown): string {
  if (v === TAG_LIST) return "<list>";
  if (v === TAG_TUPLE) return "<tuple>";
  if (v === TAG_DICT) return "<dict>";
  if (v === undefined) return "undefined";
  if (typeof v === "symbol") return `<${v.description ?? "symbol"}>`;
  if (typeof v === "bigint") return `${v}n`;
  if (v instanceof SV) return `<${SV_TAGS.get(v.tag) ?? `state ${v.tag}`}>`;
  if (v instanceof PyFloat) return `${v.value}.0`;
  if (Array.isArray(v)) return `<${v.length} items>`;
  if (typeof v === "object" && v !== null) return `<${v.constructor?.name ?? "object"}>`;
  const t = JSON.stringify(v) ?? String(v);
  return t.length > 60 ? `${t.slice(0, 57)}...` : t;
}

function observationLine(o: Observation): string {
  switch (o.kind) {
    case "value":
    case "length":
    case "truth":
    case "keys":
    case "whole":
      return `${o.kind} ${o.path} = ${shown(o.recorded)}`;
    case "slot":
      return `slot ${o.slot}${o.namespaceRef ? " (namespace)" : ""} from unit depth ${o.depth} = ${shown(o.recorded)}`;
    case "name":
      return `name ${o.name} from unit depth ${o.depth} = ${shown(o.recorded)}`;
    case "namespace-attribute":
      return `namespace ${shown(o.namespace)}.${o.attribute} from unit depth ${o.depth} = ${shown(o.recorded)}`;
    case "loop-attribute":
      return `loop${o.loop}.${o.attribute} = ${shown(o.recorded)}`;
    case "clock":
      return `strftime_now(${JSON.stringify(o.format)}) = ${shown(o.recorded)}`;
    case "cached":
      return `cached state observation #${o.id} from unit depth ${o.depth}`;
    default:
      return `${o.kind} #${shown(o.id)} = ${shown(o.recorded)} (${o.inputs.length} inputs)`;
  }
}

function describeRec(r: Rec, label: string, indent: string, out: string[]): void {
  const flags = [r.autoescape ? "autoescape" : "", r.control !== 0 ? `control ${r.control}` : "", r.bad ? "not replayable" : "", r.stale ? "stale" : ""].filter((x) => x !== "");
  out.push(`${indent}${label} key ${r.key instanceof Path ? pathText(r.key) : shown(r.key)}: ${r.out.length} chars, ${r.steps} steps${flags.length > 0 ? `, ${flags.join(", ")}` : ""}`);
  for (const o of observationsOf(r.observations)) {
    out.push(`${indent}  reads ${observationLine(o)}`);
    if ("inputs" in o) for (const x of o.inputs) out.push(`${indent}    input ${observationLine(x)}`);
  }
  for (const w of writesOf(r.writes)) {
    if (w.kind === "root") out.push(`${indent}  writes ${w.name} (slot ${w.slot}) = ${shown(w.value)}`);
    else if (w.kind === "namespace-new") out.push(`${indent}  creates namespace ${shown(w.namespace)}`);
    else out.push(`${indent}  writes namespace ${shown(w.namespace)}.${w.attribute} = ${shown(w.value)}`);
  }
  if (r.generation !== null) for (let i = 0; i + 1 < r.generation.length; i += 2) out.push(`${indent}  generation span at ${r.generation[i]}, ${r.generation[i + 1]} chars`);
  for (const l of r.loops ?? []) {
    out.push(`${indent}  loop (node ${l.node}): ${l.iters.length} iterations`);
    l.iters.forEach((it, j) => describeRec(it, `iteration ${j}`, `${indent}    `, out));
  }
}

/** A trace in readable form (Trace.describe). */
export function describeTrace(t: Trace): string {
  const out = [`trace: ${t.top.length} units, ${t.bytes} bytes, ${t.segmentCount} segments${t.untracked ? ", untracked (past its tracking bound)" : ""}`];
  t.top.forEach((r, i) => {
    if (r === null) out.push(`unit ${i}: not recorded`);
    else describeRec(r, `unit ${i}`, "", out);
  });
  return out.join("\n");
}
