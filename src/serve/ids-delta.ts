/**
 * Token ids as a delta against the client's previous answer (`ids_delta` of encode_prompt).
 *
 * A client that sends a conversation prefix (`conversation_id`, `state`, `prefix: {state}`) and
 * `"ids_delta": true` holds the ids this server answered for the prefix state. The answer then
 * carries `ids_from: r` and only `ids[r:]`, where r is the length of the longest common prefix
 * of the new ids and the ids answered for the prefix state — compared id by id here, so the
 * client's `previous[:r] + ids` is the answer exactly. When the server holds no ids for that
 * state (restart, eviction, the state was counted without ids, another instance answered it),
 * r is 0 and the whole answer is sent. A growing conversation's ids then cross the wire once.
 *
 * Bounded: the latest answered state per conversation, at most `maxConversations` and
 * `maxBytes` of ids, least recently used first out.
 */
import { LRUCache } from "lru-cache";

interface HeldIds {
  state: unknown;
  ids: Uint32Array;
}

export interface IdsDeltaOptions {
  /** @defaultValue 10000 */
  maxConversations?: number;
  /** @defaultValue 268435456 (256 MiB) */
  maxBytes?: number;
}

/** Length of the longest common prefix of two id arrays (memcmp of halves, then the last stretch id by id). */
export function commonPrefix(a: Uint32Array, b: Uint32Array): number {
  const n = Math.min(a.length, b.length);
  const bytes = (x: Uint32Array, from: number, to: number) => Buffer.from(x.buffer, x.byteOffset + from * 4, (to - from) * 4);
  let lo = 0;
  let hi = n;
  // invariant: a[0:lo] == b[0:lo], and a[0:hi] != b[0:hi] unless hi == n
  if (bytes(a, 0, n).equals(bytes(b, 0, n))) return n;
  while (hi - lo > 64) {
    const mid = (lo + hi) >>> 1;
    if (bytes(a, lo, mid).equals(bytes(b, lo, mid))) lo = mid;
    else hi = mid;
  }
  while (lo < hi && a[lo] === b[lo]) lo++;
  return lo;
}

export class IdsDelta {
  readonly #held: LRUCache<string, HeldIds>;

  constructor(o: IdsDeltaOptions = {}) {
    this.#held = new LRUCache<string, HeldIds>({
      max: o.maxConversations ?? 10_000,
      maxSize: o.maxBytes ?? 256 * 1024 * 1024,
      sizeCalculation: (h) => h.ids.byteLength + 64,
    });
  }

  /** Whether encode_prompt params ask for a delta (and name what it needs). */
  static wanted(p: Record<string, unknown>): boolean {
    return p.ids_delta === true && typeof p.conversation_id === "string" && (typeof p.state === "string" || typeof p.state === "number");
  }

  /**
   * The ids to send for an encode_prompt answer `ids` to params `p` that asked for a delta:
   * remembers them as the conversation's latest state (keeping `ids` itself: the caller must not
   * change it) and returns the offset and the tail.
   */
  apply(p: Record<string, unknown>, ids: Uint32Array): { from: number; tail: Uint32Array } {
    const id = p.conversation_id as string;
    const prefixState = (p.prefix as { state?: unknown } | null | undefined)?.state;
    const held = this.#held.get(id);
    const from = held !== undefined && prefixState !== undefined && held.state === prefixState ? commonPrefix(held.ids, ids) : 0;
    this.#held.set(id, { state: p.state, ids });
    return { from, tail: ids.subarray(from) };
  }

  get conversations(): number {
    return this.#held.size;
  }
}
