/**
 * Incremental rendering: dependency tracking, traces, validation and replay (INCREMENTAL.md, in
 * this folder, has the design and the proof of exactness).
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
 * Layer: template/incremental.
 */
import { dictKeys, isDict } from "../jinja/ops.js";
import { type Act } from "../jinja/runtime.js";
import { naiveFrom, strftime } from "../jinja/strftime.js";
import { MISSING } from "../jinja/values.js";
import { TRACK_REC, NOTFOUND, epoch, Path, SeqView } from "./paths.js";
import { NEVER, sameShape, deepEq, S_NS, SV, SV_MISSING } from "./observed.js";
import { O_VAL, O_LEN, O_TRUTH, O_KEYS, O_WHOLE, O_RSLOT, O_RESOLVE, O_NSATTR, O_LOOP, O_NOW, O_COND, O_SETV, O_UNUSED, O_CACHED, O_PCOND, W_NSSET, LoopEntry, Rec, Trace, UnitFrame, ReplayError, LEN_ATTRS, forUnchangedItem, stateOnlyKey, VOID_RELATIVE, voidKind, elemPaths, lenOf, truthOf, loopAttrNow, recBytes } from "./records.js";
import type { CondEv, PosCond } from "./records.js";
import { Recorder } from "./recorder.js";

/** runs replayed (Tracker.runReplay): numbers them across renders */
let RUNS = 0;

export class Tracker extends Recorder {

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
  protected admissible(rec: Rec): boolean {
    const rs = this.rs;
    if (rec.bad || rec.autoescape !== rs.autoescape) return false;
    return rs.steps + rec.steps <= rs.maxSteps && rs.built + rec.built <= rs.maxBuilt && this.rootLen() + rec.out.length <= rs.maxChars;
  }

  protected rootLen(): number {
    const rs = this.rs;
    return rs.base + (rs.outStack.length > 0 ? (rs.outStack[0] as string).length : rs.out.length);
  }

  /**
   * Whether record `rec` (and its nested loops' records) holds when checked at depth `s`; with
   * `item`, an unchanged message it iterated, without its reads inside that message (Rec.outsideItem).
   */
  protected check(rec: Rec, s: number, a: Act, item: Path | null = null): boolean {
    if (rec.bad || (rec.stale && s < rec.depth)) return false;
    if (!this.checkList(item === null ? rec.observations : this.fdOf(rec, item), s, a, rec.depth === s)) return false;
    const loops = rec.loops;
    if (loops !== null) {
      for (let i = 0; i < loops.length; i++) {
        const it = (loops[i] as LoopEntry).iters;
        for (let j = 0; j < it.length; j++) if (!this.check(it[j] as Rec, s, a, item)) return false;
      }
    }
    return true;
  }

  protected checkList(o: unknown[], s: number, a: Act, scoped: boolean): boolean {
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
          if (p.snapEpoch === epoch() && p.snap === snap) break;
          let v = p.resolve(this);
          if (v === NOTFOUND) return false;
          if (v instanceof SeqView) v = v.toArray();
          if (!deepEq(v, snap)) return false;
          if (!p.vol) {
            p.snapEpoch = epoch();
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
  protected extend(at: number, e: LoopEntry, p: Path, from: number, to: number, a: Act): boolean {
    const m = this.voids.get(e.node);
    if (m === undefined) return false;
    const elem = elemPaths(p, this);
    const add: Rec[] = [];
    for (let j = from; j < to; j++) {
      const r = m.get(elem(j));
      if (r === undefined) return false;
      const kind = voidKind(r);
      // a relative record's reads of its parent's variables are mapped by noOpIn, not checked here
      if (!this.checkList(r.observations, kind === VOID_RELATIVE ? r.depth - 1 : r.depth, a, false)) return false;
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
  protected noOpIn(r: Rec, e: LoopEntry): boolean {
    if (this.extKey === undefined) return false;
    const k = this.extKey;
    // the prefix of the keys of the namespaces the iteration being validated creates (Frame.id)
    const own = `${(this.cur as UnitFrame).id()}/${this.extOrd}:${k instanceof Path ? "p" + k.id : "i" + String(k)}#`;
    // variable → this iteration's namespace key, from the loop's recorded iterations
    const keyOf = new Map<number, string>();
    const lastVal = new Map<string, unknown>();
    for (const it of e.iters) {
      const o = it.observations;
      for (let i = 0; i < o.length; i += 5) {
        if (o[i] !== O_RSLOT) continue;
        const sv = o[i + 3];
        if (sv instanceof SV && sv.tag === S_NS && (sv.a as string).startsWith(own)) keyOf.set(o[i + 2] as number, sv.a as string);
      }
      const w = it.writes;
      if (w !== null) for (let i = 0; i < w.length; i += 4) if (w[i] === W_NSSET) lastVal.set(`${w[i + 1] as string}\u0000${w[i + 2] as string}`, w[i + 3]);
    }
    // r's namespaces (through its variables) → this iteration's
    const map = new Map<string, string>();
    for (let i = 0; i < r.observations.length; i += 5) {
      if (r.observations[i] !== O_RSLOT) continue;
      const k = keyOf.get(r.observations[i + 2] as number);
      if (k === undefined) return false;
      map.set((r.observations[i + 3] as SV).a as string, k);
    }
    const w = r.writes as unknown[];
    for (let i = 0; i < w.length; i += 4) {
      const k = map.get(w[i + 1] as string);
      if (k === undefined) return false;
      const prev = lastVal.get(`${k}\u0000${w[i + 2] as string}`);
      if (prev === undefined || prev instanceof SV || !sameShape(prev, w[i + 3])) return false;
    }
    return true;
  }

  /** A copy of `rec` whose grown loops include the iterations found by `extend`. */
  protected extended(rec: Rec, ext: Array<[number, LoopEntry, number, Rec[]]>): Rec {
    let n = rec.observations.length;
    for (const [, e, , add] of ext) n += e.iters.length + add.length;
    this.tb.grow(TRACK_REC + 8 * n);
    const r = new Rec(rec.depth, rec.key);
    r.observations = rec.observations.slice();
    r.loops = rec.loops === null ? null : rec.loops.slice();
    r.out = rec.out;
    r.writes = rec.writes;
    r.generation = rec.generation;
    r.steps = rec.steps;
    r.built = rec.built;
    r.chunks = rec.chunks;
    r.control = rec.control;
    r.autoescape = rec.autoescape;
    r.bad = rec.bad;
    r.scoped = rec.scoped;
    r.stale = rec.stale;
    for (const [, e, n, add] of ext) {
      const ne = new LoopEntry(e.node, e.iters.concat(add));
      // the loop's length observation, found by its loop (the list checked may have been a copy
      // without an unchanged item's reads, Rec.outsideItem, where indices differ)
      let at = -1;
      for (let i = 0; i < r.observations.length; i += 5) {
        if (r.observations[i] === O_LEN && r.observations[i + 4] === e) {
          at = i;
          break;
        }
      }
      if (at < 0) throw new ReplayError("grown loop without its length observation");
      r.observations[at + 3] = n;
      r.observations[at + 4] = ne;
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
    const parent = this.cur as UnitFrame;
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
  protected unchangedItem(rec: Rec): Path | null {
    const pv = this.prevVersions;
    if (pv === null) return null;
    const key = rec.key;
    if (!(key instanceof Path) || key.parent !== this.versionsPath || typeof key.key !== "number") return null;
    const v = (this.versions as readonly number[])[key.key];
    return v !== undefined && v >= 0 && pv[key.key] === v ? key : null;
  }

  /** Record `rec`'s observations for unchanged `item` (Rec.outsideItem, Rec.outsideItemList), computed once. */
  protected fdOf(rec: Rec, item: Path): unknown[] {
    let fd = rec.outsideItem;
    if (fd === undefined || rec.outsideItemPath !== item) {
      fd = rec.outsideItem = forUnchangedItem(rec.observations, item, this.space, this.condPos, rec.depth - 1);
      rec.outsideItemPath = item;
      const key = stateOnlyKey(fd);
      rec.outsideItemList = key === null ? -1 : this.space.listId(key);
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
        if (rec.loops !== null || rec.writes !== null || rec.generation !== null || rec.control !== 0 || rec.bad || rec.autoescape !== rs.autoescape) break;
        const item = this.unchangedItem(rec);
        if (item === null) break;
        // the loop counts one step per iteration (for the first, the caller already has)
        const loopStep = t > i ? 1 : 0;
        if (steps + loopStep + rec.steps > rs.maxSteps || built + rec.built > rs.maxBuilt || this.emitted + rs.out.length + rec.out.length > rs.maxChars) break;
        const fd = this.fdOf(rec, item);
        // a list of state observations only that held in this run holds again
        const li = rec.outsideItemList;
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
  protected carry(parent: UnitFrame, rec: Rec, off: number): void {
    const uw = rec.writes;
    this.tb.grow(8 * ((uw?.length ?? 0) + (rec.generation?.length ?? 0)));
    if (uw !== null) {
      const pw = parent.writes;
      if (pw === null) parent.writes = uw.slice();
      else for (let i = 0; i < uw.length; i++) pw.push(uw[i]);
    }
    const ug = rec.generation;
    if (ug !== null) {
      const g = (parent.generation ??= []);
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
    if (rec.generation !== null) {
      const base = this.rootLen();
      for (let i = 0; i < rec.generation.length; i += 2) {
        const st = base + (rec.generation[i] as number);
        rs.generation.push([st, st + (rec.generation[i + 1] as number)]);
      }
    }
    if (rec.out.length > 0) rs.out += rec.out;
    if (rec.writes !== null) this.applyWrites(rec.writes);
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
