/**
 * The recording half of the tracker: per-render tracking state, the observations and writes a
 * running unit records, units' frames and segments, and what the engine reports through
 * RenderObserver. Validation and replay are in tracker.ts (Tracker extends Recorder).
 *
 * Layer: template/incremental.
 */
import { PyFloat } from "../../json/values.js";
import { isDict, undefinedMessage } from "../jinja/ops.js";
import { Macro, TemplateReference, type Act, type RenderObserver, type RenderState } from "../jinja/runtime.js";
import { TrackedLoop } from "./loop.js";
import type { Joiner } from "../jinja/values.js";
import { MISSING, Markup, MissingType, Namespace, PyFunction, PyRange, Undefined } from "../jinja/values.js";
import { hasOwn, P_SLICE, P_REV, P_VIEW, ValidationAbortError, TRACK_OVER, TrackBudget, TRACK_OBS, TRACK_REC, TRACK_LOOP, NOTFOUND, epoch, nextEpoch, Path, PathSpace, SeqView, DictViewOf } from "./paths.js";
import { NEVER, shapeOf, sameShape, isContainer, snapshot, setSnapBudget, deepEq, S_PATH, S_NS, S_MACRO, S_DEEP, S_IDENT, S_UNDEF, S_MISSING, SV, SV_MISSING, SV_NEVER } from "./observed.js";
import { NSREF, O_VAL, O_LEN, O_TRUTH, O_KEYS, O_WHOLE, O_RSLOT, O_RESOLVE, O_NSATTR, O_LOOP, O_NOW, O_COND, O_SETV, W_ROOT, W_NSNEW, W_NSSET, LoopEntry, Rec, Trace, emptyStats, UnitFrame, ReplayError, volatile, VOID_NO, voidKind, isPrimitive } from "./records.js";
import type { IncrementalStats, CondEv, PosCond } from "./records.js";

/**
 * Global write/unit serials: strictly increasing across renders, so markers left on shared
 * paths by an earlier render never equal a serial of a later one.
 */
let SERIAL = 1;
const FRAME_POOL: UnitFrame[] = [];

export abstract class Recorder implements RenderObserver {
  readonly rs: RenderState;
  readonly space: PathSpace;
  readonly prev: Trace | null;
  readonly conds: readonly CondEv[];
  readonly condPos: ReadonlyArray<PosCond | undefined>;
  readonly epoch: number;
  root!: Act & { p: Array<Path | null>; w: number[] };
  /** next serial (write / unit start); written back to the global counter by close() */
  serial: number;
  frames: UnitFrame[] = [];
  cur: UnitFrame | null = null;
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
  protected readonly segments: string[];
  protected nseg = 0;
  /** index of the first segment not replayed from a record (segments.length while there is none) */
  firstFresh = -1;
  /** root offset of everything emitted as segments */
  emitted = 0;
  /** dedupe of root-slot observations: slot → setup serial of the unit that recorded one */
  readonly slotSeen: number[] = [];
  /** root slot → serial at its last read by tracked code */
  readonly slotReadAt: number[] = [];
  /** frames by depth (reused from render to render: renders do not nest) */
  protected readonly pool: UnitFrame[] = FRAME_POOL;
  /** the records of this render's top-level units */
  top: Array<Rec | null> = [];
  /** bumped on every root-level write (context lookups may change) */
  ctxVersion = 0;
  /** names whose context lookup was MISSING at a ctxVersion */
  readonly resolveCache = new Map<string, number>();
  /** sets up the scope of the iteration being validated, before re-evaluating a test */
  protected scopeFn: (() => void) | null = null;
  /** void, data-only iteration records seen this render: loop node → item path → record */
  protected readonly voids = new Map<number, Map<Path, Rec>>();
  /** while validating an iteration: loops found grown and extended ([obs index, entry, length, records]) */
  protected ext: Array<[number, LoopEntry, number, Rec[]]> | null = null;
  /** while validating an iteration: its loop ordinal and match key (its identity, see noOpIn) */
  protected extOrd = 0;
  protected extKey: unknown = undefined;

  /** the run being replayed by runReplay (0: none), and per interned observation the run it held in */
  protected runNo = 0;
  protected stamps = new Int32Array(0);
  /** per state-only observation list (Rec.outsideItemList): the run it held in without re-evaluations */
  protected listStamps = new Int32Array(0);
  /** conditions re-evaluated so far (a list that needed one is not stamped) */
  protected reevaluations = 0;
  /** per position condition: the run its other operand was evaluated in, and the value */
  protected readonly otherAt: number[] = [];
  protected readonly otherVal: unknown[] = [];
  /** this render's content versions of the `messages` items, and the previous render's */
  versions: readonly number[] | null = null;
  protected prevVersions: readonly number[] | null = null;
  protected versionsPath: Path | null = null;

  /** what this render's tracking state may grow to (RenderBudget.maxTrackBytes) */
  readonly tb: TrackBudget;

  constructor(rs: RenderState, prev: Trace | null, space: PathSpace, conds: readonly CondEv[], condPos: ReadonlyArray<PosCond | undefined> = [], maxTrackBytes = Infinity) {
    this.rs = rs;
    this.prev = prev;
    this.space = space;
    this.tb = new TrackBudget(maxTrackBytes);
    space.budget = this.tb;
    setSnapBudget(this.tb);
    this.conds = conds;
    this.condPos = condPos;
    this.epoch = nextEpoch();
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
    setSnapBudget(null);
  }

  // ---- classification of reads ----

  /** Depth of the innermost unit on the stack that started at or before serial `w`, or -1. */
  depthOf(w: number): number {
    const f = this.frames;
    for (let j = f.length - 1; j >= 0; j--) if ((f[j] as UnitFrame).start <= w) return j;
    return -1;
  }

  protected push(kind: number, m: number, a: unknown, b: unknown, c: unknown): void {
    this.tb.grow(TRACK_OBS);
    (this.cur as UnitFrame).observations.push(kind, m, a, b, c);
  }

  /** A record made by this render: what it holds besides its observations (counted as pushed). */
  protected made(r: Rec): void {
    this.tb.grow(TRACK_REC + 2 * r.out.length + 8 * ((r.writes?.length ?? 0) + (r.generation?.length ?? 0)));
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
  protected ctxPathOf(name: string, v: unknown): Path | null {
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
    const at = f.observations.length;
    this.push(O_LEN, p.m, p, n, null);
    return this.inCond === 0 ? at : -1;
  }

  /**
   * Marks the length observation at `at` as the iteration count of loop `entry` over the list at
   * `p`, which may grow (see `extend`).
   */
  extensible(at: number, entry: LoopEntry, p: Path): void {
    const f = this.cur as UnitFrame;
    if (at >= 0 && f.observations[at] === O_LEN && f.observations[at + 2] === p) f.observations[at + 4] = entry;
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
    if (p.snapEpoch === epoch()) snap = p.snap;
    else {
      try {
        snap = snapshot(p.op === P_SLICE || p.op === P_REV ? p.resolve(this) : v);
      } catch (e) {
        if (e === TRACK_OVER) throw e;
        snap = NEVER;
      }
      p.snapEpoch = epoch();
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
    const f = this.cur as UnitFrame;
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
    const saved = f.observations;
    f.observations = [];
    this.inCond++;
    return saved;
  }

  /** Ends recording a test that evaluated to `value` (a COND or SETV entry). */
  condEnd(saved: unknown[] | null, taint0: boolean, id: number, value: unknown, kind: "cond" | "set", totalSlot = -1): void {
    if (saved === null) return;
    const f = this.cur as UnitFrame;
    const fine = f.observations;
    f.observations = saved;
    this.inCond--;
    const tainted = this.taint;
    this.taint = taint0 || tainted;
    if (!tainted && (kind === "cond" || isPrimitive(value)) && volatile(fine)) {
      if (totalSlot >= 0) (f.lazy ??= []).push(saved.length, totalSlot, this.serial);
      saved.push(kind === "cond" ? O_COND : O_SETV, -1, id, value, fine);
    } else this.inline(saved, fine, f);
  }

  /** Appends a test's observations to the unit's list (deduplicating data observations). */
  protected inline(saved: unknown[], fine: unknown[], f: UnitFrame): void {
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
    const f = this.cur as UnitFrame;
    const fine = f.observations;
    f.observations = saved;
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

  protected deepSV(v: unknown): unknown {
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

  protected pushWrite(kind: number, a: unknown, b: unknown, c: unknown): void {
    const f = this.cur;
    if (f === null) return;
    let w = f.writes;
    if (w === null) w = f.writes = [];
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
    let g = f.generation;
    if (g === null) g = f.generation = [];
    g.push(start - f.base, end - start);
  }

  protected applyWrites(w: unknown[]): void {
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

  protected frameAt(depth: number): UnitFrame {
    let f = this.pool[depth];
    if (f === undefined) f = this.pool[depth] = new UnitFrame();
    return f;
  }

  /** Starts a top-level unit (statement `k`). */
  beginTop(k: number, prev: Rec | null, segmented: boolean): UnitFrame {
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
    f.autoescape = rs.autoescape;
    this.frames.push(f);
    this.cur = f;
    return f;
  }

  /** Ends a top-level unit: its output becomes a segment. Returns its record. */
  endTop(f: UnitFrame, replayed: Rec | null): Rec {
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
  protected emit(out: string, replayed: boolean): void {
    if (!replayed && this.firstFresh < 0) this.firstFresh = this.nseg;
    this.segments[this.nseg++] = out;
  }

  /** Emits the current buffer of a segmented (top-level) unit before a segmented iteration. */
  protected flush(): void {
    const rs = this.rs;
    if (rs.out.length > 0) {
      this.emit(rs.out, false);
      this.emitted += rs.out.length;
      rs.out = "";
    }
    rs.base = this.emitted;
  }

  /** Starts an iteration unit of a memoized loop run by the current unit. */
  beginIter(ord: number, key: unknown): UnitFrame {
    const parent = this.cur as UnitFrame;
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
    f.autoescape = rs.autoescape;
    this.frames.push(f);
    this.cur = f;
    return f;
  }

  /** The iteration's scope is set up (target, loop, frame entry): it starts now. */
  started(f: UnitFrame): void {
    f.start = this.serial++;
  }

  /**
   * Ends an iteration unit: `replayed` is the previous record it replayed, or null when it
   * executed (with control code `ctl`). Returns the record standing for it.
   */
  endIter(f: UnitFrame, replayed: Rec | null, ctl: number): Rec {
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
    const parent = f.parent as UnitFrame;
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
    const f = this.cur as UnitFrame;
    const e = new LoopEntry(node, size > 0 ? new Array<Rec>(size) : []);
    (f.loops ??= []).push(e);
    return e;
  }

  /** The previous render's entry for the `ord`-th loop of the current unit, if the same loop. */
  prevLoop(ord: number, node: number): LoopEntry | null {
    const f = this.cur as UnitFrame;
    const pl = f.prev?.loops?.[ord];
    return pl !== undefined && pl.node === node ? pl : null;
  }

  /** Replays a record's carried state into its parent frame (tracker.ts). */
  protected abstract carry(parent: UnitFrame, rec: Rec, off: number): void;
}
