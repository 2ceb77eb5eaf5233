/**
 * A Track holds the token ids and cut points of one conversation in growable buffers. The
 * successive cached renders of a conversation share one track: a continuation truncates it to the
 * reused prefix and appends what it encoded, so a turn costs what it appended, not the history.
 *
 * Exactly one live cached render owns a track. A cached render built from another lineage's cached render (a
 * branch) copies the prefix into a new track first, so no cached render's data is ever rewritten
 * under it.
 */
import { U32List, newBoundaries, type Boundaries } from "../tokenize/encoder.js";

export class TokenTrack {
  /** Token ids, or null in counts-only mode. */
  readonly ids: U32List | null;
  readonly bounds: Boundaries;

  constructor(withIds: boolean, capacity = 1024) {
    this.ids = withIds ? new U32List(capacity) : null;
    this.bounds = newBoundaries(64);
  }

  /** A new track holding the first `count` ids and `nBounds` cut points of this one. */
  fork(count: number, nBounds: number, withIds: boolean): TokenTrack {
    const t = new TokenTrack(withIds, Math.max(1024, count + 1024));
    if (withIds && this.ids !== null && t.ids !== null) t.ids.pushAll(this.ids.data, 0, count);
    t.bounds.ends.pushAll(this.bounds.ends.data, 0, nBounds);
    t.bounds.tokenCounts.pushAll(this.bounds.tokenCounts.data, 0, nBounds);
    t.bounds.ids.pushAll(this.bounds.ids.data, 0, nBounds);
    return t;
  }

  /** Keeps the first `count` ids and `nBounds` cut points, then appends `ids` and `bounds`. */
  replaceTail(count: number, nBounds: number, ids: U32List | null, bounds: Boundaries): void {
    if (this.ids !== null) {
      this.ids.length = count;
      if (ids !== null) this.ids.pushAll(ids.data, 0, ids.length);
    }
    const b = this.bounds;
    b.ends.length = b.tokenCounts.length = b.ids.length = nBounds;
    b.ends.pushAll(bounds.ends.data, 0, bounds.ends.length);
    b.tokenCounts.pushAll(bounds.tokenCounts.data, 0, bounds.tokenCounts.length);
    b.ids.pushAll(bounds.ids.data, 0, bounds.ids.length);
  }

  /** Bytes held by the buffers (capacity, not length: that is what the process holds). */
  get bytes(): number {
    return (this.ids?.data.byteLength ?? 0) + this.bounds.ends.data.byteLength * 3;
  }
}
