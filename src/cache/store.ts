/**
 * Where rendered and tokenized prompts are kept between requests.
 *
 * A CachedRender is one request's result: its rendered text, the cut points (boundaries) found in
 * it, and its token ids (or only the count in counts-only mode). The cached renders of one conversation
 * form a Lineage: when a request extends the messages of the cached render it reused, its cached render
 * replaces that one in the same lineage, so a growing conversation holds one cached render, not one
 * per turn. A branch (same history, different continuation) starts a new lineage.
 *
 * Lookup is by message chain: chain[i] is a hash of (key, messages[0..i]). Every chain hash a
 * lineage has answered for points to it, so any request sharing a message prefix with a cached
 * conversation finds it. The LRU bounds the bytes held; evicting a lineage removes its aliases.
 */
import { LRUCache } from "lru-cache";
import type { TokenTrack } from "./token-track.js";

export interface CachedRender {
  /** The rendered prompt, as the renderer produced it: concatenated, these are the text. */
  readonly segments: readonly string[];
  /** Length of the text. */
  readonly length: number;
  /** Ids (unless counts-only) and cut points; this cached render owns the track's first `count` ids. */
  readonly track: TokenTrack;
  readonly count: number;
  /** Number of cut points of this cached render in the track. */
  readonly nBounds: number;
  /** The message chain this cached render renders (chain[i] = hash of messages[0..i]). */
  readonly chain: readonly bigint[];
  /** Renderer state kept for incremental rendering of the next turn (or null). */
  readonly trace: unknown;
  /** Estimated bytes of `trace`. */
  readonly traceBytes: number;
}

export function cachedRenderBytes(s: CachedRender): number {
  return 256 + s.length * 2 + s.segments.length * 16 + s.track.bytes + s.chain.length * 64 + s.traceBytes;
}

class Lineage {
  /** Chain hashes registered in the alias map for this lineage. */
  readonly aliases: bigint[] = [];
  constructor(
    readonly id: number,
    public cached: CachedRender,
  ) {}
}

export interface Found {
  readonly lineage: Lineage;
  readonly cached: CachedRender;
  /** How many leading messages of the request the cached render's chain shares (≥ 1). */
  readonly sharedMessages: number;
}

export interface StoreOptions {
  /** Upper bound of bytes held (estimated: 2 bytes per text char, 4 per id, plus overhead). */
  maxBytes: number;
}

export class ConversationStore {
  readonly #lineages: LRUCache<number, Lineage>;
  readonly #aliases = new Map<bigint, Lineage>();
  #nextId = 1;
  #evictions = 0;

  constructor(options: StoreOptions) {
    this.#lineages = new LRUCache<number, Lineage>({
      maxSize: options.maxBytes,
      sizeCalculation: (l) => cachedRenderBytes(l.cached) + l.aliases.length * 64,
      noDisposeOnSet: true,
      dispose: (l, _k, reason) => {
        if (reason === "evict") this.#evictions++;
        this.#dropAliases(l);
      },
    });
  }

  /** The cached render sharing the longest message prefix with `chain`, if any. */
  lookup(chain: readonly bigint[]): Found | undefined {
    for (let i = chain.length - 1; i >= 0; i--) {
      const l = this.#aliases.get(chain[i] as bigint);
      if (l === undefined) continue;
      if (this.#lineages.get(l.id) !== l) continue; // evicted meanwhile (refreshes recency otherwise)
      return { lineage: l, cached: l.cached, sharedMessages: i + 1 };
    }
    return undefined;
  }

  /**
   * Whether committing a cached render for `chain` built on `found` will replace found's cached render in
   * its lineage (a continuation) rather than start a new lineage (a branch).
   */
  continues(found: Found, chain: readonly bigint[]): boolean {
    return isPrefix(found.cached.chain, chain) && this.#lineages.has(found.lineage.id) && found.lineage.cached === found.cached;
  }

  /**
   * Stores a request's cached render. When `from` is the lineage it was built on and the new request
   * extends that cached render's messages, the cached render is replaced in place; otherwise a new lineage
   * starts. Every chain hash of the request not yet registered points at the result.
   */
  commit(render: CachedRender, from: Found | undefined): Found {
    const chain = render.chain;
    let lineage: Lineage;
    let firstNew: number;
    const prev = from?.cached;
    if (from !== undefined && prev !== undefined && this.continues(from, chain)) {
      lineage = from.lineage;
      lineage.cached = render;
      firstNew = prev.chain.length;
    } else {
      lineage = new Lineage(this.#nextId++, render);
      // A branch owns the chain positions after the shared ones; when the request is itself a
      // prefix of the cached conversation, its own last position points at it from now on.
      firstNew = Math.min(from?.sharedMessages ?? 0, chain.length - 1);
    }
    for (let i = firstNew; i < chain.length; i++) {
      const h = chain[i] as bigint;
      if (this.#aliases.get(h) === lineage) continue;
      this.#aliases.set(h, lineage);
      lineage.aliases.push(h);
    }
    this.#lineages.set(lineage.id, lineage);
    if (!this.#lineages.has(lineage.id)) this.#dropAliases(lineage); // larger than the whole cache
    return { lineage, cached: render, sharedMessages: chain.length };
  }

  clear(): void {
    this.#lineages.clear();
    this.#aliases.clear();
  }

  /** Estimated bytes held. */
  get bytes(): number {
    return this.#lineages.calculatedSize;
  }
  get lineages(): number {
    return this.#lineages.size;
  }
  get evictions(): number {
    return this.#evictions;
  }

  #dropAliases(l: Lineage): void {
    for (const h of l.aliases) if (this.#aliases.get(h) === l) this.#aliases.delete(h);
    l.aliases.length = 0;
  }
}

function isPrefix(a: readonly bigint[], b: readonly bigint[]): boolean {
  if (a.length > b.length) return false;
  return a.length === 0 || a[a.length - 1] === b[a.length - 1];
}
