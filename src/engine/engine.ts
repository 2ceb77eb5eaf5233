/**
 * The incremental tokenizer: given a request's rendered prompt and its message chain, returns
 * its token count (and ids) reusing what an earlier request of the same conversation already
 * tokenized.
 *
 * The reuse invariant (DESIGN.md has the argument in full): let P be a cached render and N the
 * new one, c the length of their common prefix, and p the end of a boundary token found in P
 * with p + L ≤ c, where L is the length of the tokenizer's longest raw added token. Every raw
 * added-token match that starts before p depends only on the text before p + L - 1, which N and
 * P share, so N is cut at exactly the same places before p, including at p itself. Pieces
 * between cuts are tokenized independently, so the ids of N before p equal the ids of P before
 * p; only N[p:] is encoded. When no such p exists the request is tokenized from scratch and the
 * event is counted as a fallback with its reason — never guessed.
 */
import { DeltatokError } from "../errors.js";
import { ConversationStore, type Found, type Snapshot } from "../cache/store.js";
import { SeamError, TokenEncoder, U32List, newBoundaries, type Boundaries } from "../tokenize/encoder.js";
import { commonPrefixLength } from "./lcp.js";

/** How a request was answered. */
export type Outcome = "hit" | "partial" | "miss" | "fallback";

/** Why a cached conversation could not be reused. */
export type FallbackReason =
  /** the common prefix with the cached render ends before its first safe cut point */
  | "no_safe_boundary"
  /** a boundary token was not tokenized as itself at a seam (tokenizer breaks the invariant) */
  | "seam_mismatch"
  /** ids were requested from a counts-only cache */
  | "ids_not_stored";

export const FALLBACK_REASONS: readonly FallbackReason[] = ["no_safe_boundary", "seam_mismatch", "ids_not_stored"];

export interface PromptTokens {
  count: number;
  /** Token ids when requested, else null. */
  ids: Uint32Array | null;
  /** Tokens taken from the cache rather than encoded. */
  reused: number;
  outcome: Outcome;
  reason?: FallbackReason;
}

export interface EngineStats {
  requests: number;
  /** Requests whose render equalled a cached one exactly. */
  hits: number;
  /** Requests that reused a cached prefix and encoded the rest. */
  partial: number;
  /** Requests with no cached conversation to start from. */
  misses: number;
  /** Requests that had a cached candidate but could not reuse it, by reason. */
  fallbacks: Record<FallbackReason, number>;
  tokensReused: number;
  tokensEncoded: number;
  /** Estimated bytes held by the cache. */
  bytesHeld: number;
  /** Conversations (lineages) in the cache. */
  conversations: number;
  evictions: number;
}

export interface EngineOptions {
  /** Keep token ids in the cache (needed to return ids). false = counts-only. */
  storeIds: boolean;
  /** Cache bound in bytes. */
  maxBytes: number;
}

export class IncrementalEngine {
  readonly #enc: TokenEncoder;
  readonly #store: ConversationStore;
  readonly #storeIds: boolean;
  readonly #margin: number;
  #requests = 0;
  #hits = 0;
  #partial = 0;
  #misses = 0;
  #fallbacks: Record<FallbackReason, number> = { no_safe_boundary: 0, seam_mismatch: 0, ids_not_stored: 0 };
  #reused = 0;
  #encoded = 0;

  constructor(encoder: TokenEncoder, options: EngineOptions) {
    this.#enc = encoder;
    this.#storeIds = options.storeIds;
    this.#store = new ConversationStore({ maxBytes: options.maxBytes });
    this.#margin = encoder.scanner.maxTokenLength;
  }

  /** Tokenizes a rendered prompt, reusing the longest provably safe cached prefix. */
  tokenize(text: string, chain: readonly bigint[], wantIds: boolean): PromptTokens {
    this.#requests++;
    const found = this.#store.lookup(chain);
    if (found === undefined) {
      this.#misses++;
      return this.#fresh(text, chain, wantIds, found, "miss");
    }
    if (wantIds && found.snapshot.ids === null) {
      return this.#fresh(text, chain, wantIds, found, "fallback", "ids_not_stored");
    }
    const prev = found.snapshot;
    const c = commonPrefixLength(prev.text, text);
    if (c === text.length && c === prev.text.length) {
      this.#hits++;
      this.#reused += prev.count;
      this.#store.commit({ ...prev, chain }, found);
      return { count: prev.count, ids: wantIds ? prev.ids : null, reused: prev.count, outcome: "hit" };
    }
    const b = lastBoundaryAtOrBefore(prev.boundaryEnds, c - this.#margin);
    if (b < 0) return this.#fresh(text, chain, wantIds, found, "fallback", "no_safe_boundary");

    const cut = prev.boundaryEnds[b] as number;
    const before = prev.boundaryCounts[b] as number;
    const keepIds = this.#storeIds || wantIds;
    const ids = keepIds ? new U32List(before + (text.length - cut) / 2) : null;
    if (ids !== null) ids.pushAll(prev.ids as Uint32Array, 0, before);
    const bounds = newBoundaries(b + 64);
    bounds.ends.pushAll(prev.boundaryEnds, 0, b + 1);
    bounds.tokenCounts.pushAll(prev.boundaryCounts, 0, b + 1);
    bounds.ids.pushAll(prev.boundaryIds, 0, b + 1);
    let added: number;
    try {
      added = this.#enc.encodeFrom(text, cut, prev.boundaryIds[b] as number, before, ids, bounds);
    } catch (e) {
      if (e instanceof SeamError) return this.#fresh(text, chain, wantIds, found, "fallback", "seam_mismatch");
      throw e;
    }
    this.#partial++;
    this.#reused += before;
    this.#encoded += added;
    const count = before + added;
    this.#store.commit(this.#snapshot(text, ids, count, bounds, chain), found);
    return { count, ids: wantIds && ids !== null ? ids.toArray() : null, reused: before, outcome: "partial" };
  }

  /** Full encode in one call, no cache: the baseline and reference path. */
  tokenizeFull(text: string, wantIds: boolean): PromptTokens {
    this.#requests++;
    this.#misses++;
    const out = this.#enc.encodeWhole(text);
    this.#encoded += out.length;
    return { count: out.length, ids: wantIds ? Uint32Array.from(out) : null, reused: 0, outcome: "miss" };
  }

  stats(): EngineStats {
    return {
      requests: this.#requests,
      hits: this.#hits,
      partial: this.#partial,
      misses: this.#misses,
      fallbacks: { ...this.#fallbacks },
      tokensReused: this.#reused,
      tokensEncoded: this.#encoded,
      bytesHeld: this.#store.bytes,
      conversations: this.#store.lineages,
      evictions: this.#store.evictions,
    };
  }

  clear(): void {
    this.#store.clear();
  }

  #fresh(
    text: string,
    chain: readonly bigint[],
    wantIds: boolean,
    found: Found | undefined,
    outcome: "miss" | "fallback",
    reason?: FallbackReason,
  ): PromptTokens {
    if (reason !== undefined) this.#fallbacks[reason]++;
    const keepIds = this.#storeIds || wantIds;
    let ids = keepIds ? new U32List(text.length / 3) : null;
    let bounds = newBoundaries();
    let count: number;
    try {
      count = this.#enc.encodeFrom(text, 0, null, 0, ids, bounds);
    } catch (e) {
      if (!(e instanceof SeamError)) throw e;
      // The tokenizer does not keep a boundary token whole: never cut this text.
      if (reason === undefined) this.#fallbacks.seam_mismatch++;
      const whole = this.#enc.encodeWhole(text);
      ids = keepIds ? new U32List(whole.length) : null;
      ids?.pushAll(whole);
      bounds = newBoundaries(1);
      count = whole.length;
    }
    this.#encoded += count;
    const snap = this.#snapshot(text, this.#storeIds ? ids : null, count, bounds, chain);
    this.#store.commit(snap, found);
    const result: PromptTokens = { count, ids: wantIds && ids !== null ? ids.toArray() : null, reused: 0, outcome };
    if (reason !== undefined) result.reason = reason;
    return result;
  }

  #snapshot(text: string, ids: U32List | null, count: number, b: Boundaries, chain: readonly bigint[]): Snapshot {
    if (ids !== null && ids.length !== count) throw new DeltatokError("DT_INTERNAL", "token id count mismatch");
    return {
      text,
      ids: this.#storeIds && ids !== null ? ids.toArray() : null,
      count,
      boundaryEnds: b.ends.toArray(),
      boundaryCounts: b.tokenCounts.toArray(),
      boundaryIds: b.ids.toArray(),
      chain,
    };
  }
}

/** Index of the last element ≤ limit in an ascending array, or -1. */
function lastBoundaryAtOrBefore(ends: Uint32Array, limit: number): number {
  let lo = 0;
  let hi = ends.length - 1;
  let ans = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if ((ends[mid] as number) <= limit) {
      ans = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return ans;
}
