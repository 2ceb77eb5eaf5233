/**
 * Conversation affinity with bounded load (src/pool/README.md, "Routing").
 *
 * - A conversation (a routing key) is owned by one worker slot, so every turn lands where the
 *   previous turn left its cache.
 * - A NEW conversation goes to the least-loaded healthy slot (ties broken by the key's hash, so
 *   equal loads still spread).
 * - A LIVE conversation stays with its owner unless the owner is far behind: its load exceeds
 *   `2 × min + splitFloor`. Then — and only then — the conversation moves to the least-loaded
 *   slot (its cache there starts cold: one miss, then hits again).
 * - Unhealthy slots (a worker that cannot be restarted) are never chosen.
 *
 * "Load" is whatever the caller adds and removes (the queue uses an estimate of the characters
 * queued + in flight per slot). The ownership map is bounded (`maxTracked`, oldest forgotten
 * first); a forgotten conversation is simply routed as a new one.
 */

export interface RouterOptions {
  /**
   * Conversations remembered. Each costs a Map entry (~100 bytes + the key).
   * @defaultValue 100000
   */
  maxTracked?: number;
  /**
   * How much more load than twice the lightest slot an owner may carry before a live
   * conversation is moved off it, in load units.
   * @defaultValue 1000000
   */
  splitFloor?: number;
}

export interface RouterStats {
  /** Conversations routed for the first time (or again after being forgotten). */
  assigned: number;
  /** Live conversations moved off an overloaded or unhealthy owner. */
  moved: number;
  /** Conversations currently remembered. */
  tracked: number;
}

/** FNV-1a over UTF-16 units; only used to break ties between equally loaded slots. */
function tieHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export class AffinityRouter {
  readonly #load: Float64Array;
  readonly #healthy: boolean[];
  readonly #owner = new Map<string, number>();
  readonly #maxTracked: number;
  readonly #splitFloor: number;
  #assigned = 0;
  #moved = 0;

  constructor(slots: number, options: RouterOptions = {}) {
    if (!Number.isSafeInteger(slots) || slots < 1) throw new RangeError(`slots must be a positive integer, got ${slots}`);
    this.#load = new Float64Array(slots);
    this.#healthy = new Array<boolean>(slots).fill(true);
    this.#maxTracked = options.maxTracked ?? 100_000;
    this.#splitFloor = options.splitFloor ?? 1_000_000;
  }

  get slots(): number {
    return this.#load.length;
  }

  /** Current load of a slot. */
  load(slot: number): number {
    return this.#load[slot] as number;
  }

  add(slot: number, amount: number): void {
    this.#load[slot] = (this.#load[slot] as number) + amount;
  }

  remove(slot: number, amount: number): void {
    const v = (this.#load[slot] as number) - amount;
    this.#load[slot] = v < 1e-6 ? 0 : v;
  }

  setHealthy(slot: number, healthy: boolean): void {
    this.#healthy[slot] = healthy;
  }

  isHealthy(slot: number): boolean {
    return this.#healthy[slot] === true;
  }

  /** Whether any slot can take work. */
  get anyHealthy(): boolean {
    return this.#healthy.some((h) => h);
  }

  /**
   * The least-loaded healthy slot other than `avoid` (falls back to `avoid` when it is the
   * only healthy one; -1 when none is healthy). Ties go to `(tie + i) mod n` first.
   */
  lightest(avoid = -1, tie = 0): number {
    const n = this.#load.length;
    let best = -1;
    let bestLoad = Infinity;
    for (let k = 0; k < n; k++) {
      const i = (tie + k) % n;
      if (i === avoid || !this.#healthy[i]) continue;
      const l = this.#load[i] as number;
      if (l < bestLoad) {
        best = i;
        bestLoad = l;
      }
    }
    if (best < 0 && avoid >= 0 && this.#healthy[avoid]) return avoid;
    return best;
  }

  /**
   * The owner slot of `key`, assigning or moving it as the policy says. `sticky`: the item needs
   * state only its owner holds, so a healthy owner keeps it whatever its load. -1: no healthy slot.
   */
  route(key: string, sticky = false): number {
    const owner = this.#owner.get(key);
    if (owner !== undefined) {
      if (this.#healthy[owner]) {
        const min = sticky ? owner : this.lightest(-1, owner);
        const lo = min < 0 ? 0 : (this.#load[min] as number);
        if (sticky || (this.#load[owner] as number) <= 2 * lo + this.#splitFloor) {
          // refresh recency (Map keeps insertion order: oldest first)
          this.#owner.delete(key);
          this.#owner.set(key, owner);
          return owner;
        }
      }
      const to = this.lightest(-1, tieHash(key));
      if (to < 0) return -1;
      if (to !== owner) this.#moved++;
      this.#owner.delete(key);
      this.#owner.set(key, to);
      return to;
    }
    const to = this.lightest(-1, tieHash(key) % this.#load.length);
    if (to < 0) return -1;
    this.#assigned++;
    this.#owner.set(key, to);
    if (this.#owner.size > this.#maxTracked) this.#owner.delete(this.#owner.keys().next().value as string);
    return to;
  }

  /** The current owner of a key, if remembered (does not assign). */
  ownerOf(key: string): number | undefined {
    return this.#owner.get(key);
  }

  /**
   * Makes `slot` the owner of a conversation not owned yet (late binding: the queue lets the
   * first worker with room take a new conversation).
   */
  assign(key: string, slot: number): void {
    if (!this.#owner.has(key)) this.#assigned++;
    this.#owner.delete(key);
    this.#owner.set(key, slot);
    if (this.#owner.size > this.#maxTracked) this.#owner.delete(this.#owner.keys().next().value as string);
  }

  stats(): RouterStats {
    return { assigned: this.#assigned, moved: this.#moved, tracked: this.#owner.size };
  }
}
