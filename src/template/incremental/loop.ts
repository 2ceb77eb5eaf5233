/**
 * The loop context of tracked renders: the engine's LoopContext plus what the tracker keeps per
 * loop (the unit depth running it, whether its iterations are units, whether an iteration read
 * its length, its items' paths) and the build charges the plain render's iterator mode makes.
 *
 * Layer: template/incremental.
 */
import { LoopContext } from "../jinja/runtime.js";
import { ITEM_UNITS } from "../jinja/ops.js";
import type { Path } from "./paths.js";
import type { Tracker } from "./tracker.js";

export class TrackedLoop extends LoopContext {
  /** depth of the unit running the loop (-1: untracked) */
  tkDepth = -1;
  /** the loop's iterations are units */
  tkMemo = false;
  /** an iteration read something that depends on the loop's length */
  tkLenRead = false;
  /**
   * The array was an iterator in the plain render (a reversed list, a dict's items), so reading
   * the length charges what the plain render's iterator mode charges for collecting the rest (see
   * `length`). -1: off; -2: on; else the index at which nextitem / last peeked (as the iterator
   * mode holds that item aside).
   */
  tkIterPeek = -1;
  private tkLenCharged = false;
  /** path of the item at an index (null when items have none) */
  tkItemPath: ((i: number, v: unknown, tk: Tracker) => Path | null) | null = null;

  override get length(): number {
    if (this.tkIterPeek !== -1 && !this.tkLenCharged) {
      // what the iterator mode would collect: the items after the current one (and after one
      // already peeked at by `last` / `nextitem` at this index)
      this.tkLenCharged = true;
      const n = (this.arr as unknown[]).length;
      const peeked = this.tkIterPeek === this.index0 && this.index0 + 1 < n ? 1 : 0;
      this.g.charge(Math.max(0, n - this.index0 - 1 - peeked) * ITEM_UNITS);
    }
    return super.length;
  }

  override get last(): boolean {
    if (this.arr !== null && this.tkIterPeek !== -1 && !this.tkLenCharged) this.tkIterPeek = this.index0;
    return super.last;
  }

  override get nextitem(): unknown {
    if (this.arr !== null && this.tkIterPeek !== -1 && !this.tkLenCharged) this.tkIterPeek = this.index0;
    return super.nextitem;
  }
}
