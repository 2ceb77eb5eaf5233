/**
 * The incremental tokenizer: given a request's rendered prompt and its message chain, returns
 * its token count (and ids) reusing what an earlier request of the same conversation already
 * tokenized.
 *
 * The reuse invariant (DESIGN.md has the argument in full): let P be a cached render and N the
 * new one, c the length of their common prefix, and t a boundary token found in P from s to p
 * with s + L ≤ c, where L is the length of the tokenizer's longest raw added token. The scan
 * decides every position it visits up to s (it skips those inside t) from the text in
 * [i, i + L), which N and P share, so N is cut at exactly the same places before p, including at
 * p itself. Pieces between cuts are tokenized independently, so the ids of N before p equal the
 * ids of P before p; only N[p:] is encoded. When no such p exists the request is tokenized from
 * scratch and the event is counted as a fallback with its reason — never guessed.
 *
 * Work per request is proportional to what changed: the common prefix is found segment by
 * segment (segments the renderer reports as reused cost nothing), the cut by binary search, and
 * a continuation appends to its conversation's track in place instead of copying the history.
 */
import { DeltatokError } from "../errors.js";
import { ConversationStore, type Found, type CachedRender } from "../cache/store.js";
import { TokenTrack } from "../cache/token-track.js";
import { SeamError, TokenEncoder, U32List, newBoundaries, type Boundaries } from "../tokenize/encoder.js";
import { commonPrefixLengthAt } from "./lcp.js";

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

/** A rendered prompt as the renderer produced it. */
export interface Rendered {
  /** The text, in pieces (one piece for a renderer that is not incremental). */
  segments: readonly string[];
  /** How many leading segments are known identical to those of the cached render it was rendered against. */
  reusedSegments: number;
  /** Renderer state to keep for the next turn (null when the renderer keeps none). */
  trace: unknown;
  traceBytes: number;
}

export interface PromptTokens {
  count: number;
  /** Token ids when requested, else null. */
  ids: Uint32Array | null;
  /** Tokens taken from the cache rather than encoded. */
  reused: number;
  outcome: Outcome;
  reason?: FallbackReason;
}

export interface SplicerStats {
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

export interface SplicerOptions {
  /** Keep token ids in the cache (needed to return ids). false = counts-only. */
  storeIds: boolean;
  /** Cache bound in bytes. */
  maxBytes: number;
  /**
   * Reuse the ids of a safe prefix (default). false: every render is encoded whole in one call
   * and answered as a miss, its cached render still stored (an incremental render needs the previous
   * trace): the switch that takes the splice out of a wrong answer (docs/DEBUGGING.md).
   */
  splice?: boolean;
}

/** A whole-text rendering as one segment. */
export function wholeText(text: string): Rendered {
  return { segments: [text], reusedSegments: 0, trace: null, traceBytes: 0 };
}

/** What the last `tokenize` call stored, and the cached render whose ids it reused. */
export interface LastCommit {
  /** The cached render committed for the request (its track holds the request's ids, unless counts-only). */
  readonly cached: CachedRender;
  /** Where it was committed (for continuing it: continuation / commitContinuation). */
  readonly found: Found;
  /** The cached render whose first `reused` ids the request's ids start with, or null. */
  readonly base: CachedRender | null;
  readonly reused: number;
}

/** Ids of `text[:shared] + tail` for a cached render's text: the cached render's first `before` ids, then `ids`. */
export interface Continuation {
  readonly before: number;
  readonly ids: Uint32Array;
  /** Cut points of the continuation's own part: absolute character offsets and token counts. */
  readonly bounds: { readonly ends: Uint32Array; readonly tokenCounts: Uint32Array };
  /** The cached render continued, and how many of its cut points the continuation keeps. */
  readonly from: Found;
  readonly keptBounds: number;
  /** Cut-point ids of the continuation's own part (for committing it). */
  readonly boundIds: Uint32Array;
}

export class TokenSplicer {
  readonly #enc: TokenEncoder;
  readonly #store: ConversationStore;
  readonly #storeIds: boolean;
  readonly #margin: number;
  readonly #splice: boolean;
  #requests = 0;
  #hits = 0;
  #partial = 0;
  #misses = 0;
  #fallbacks: Record<FallbackReason, number> = { no_safe_boundary: 0, seam_mismatch: 0, ids_not_stored: 0 };
  #reused = 0;
  #encoded = 0;
  #last: LastCommit | null = null;

  constructor(encoder: TokenEncoder, options: SplicerOptions) {
    this.#enc = encoder;
    this.#storeIds = options.storeIds;
    this.#store = new ConversationStore({ maxBytes: options.maxBytes });
    this.#margin = encoder.scanner.maxTokenLength;
    this.#splice = options.splice ?? true;
  }

  /** The cached conversation sharing the longest message prefix with `chain`. */
  lookup(chain: readonly bigint[]): Found | undefined {
    return this.#store.lookup(chain);
  }

  /**
   * Tokenizes a rendered prompt, reusing the longest provably safe prefix of `found` (the
   * result of `lookup(chain)`, which the render may also have used).
   */
  tokenize(r: Rendered, chain: readonly bigint[], wantIds: boolean, found: Found | undefined): PromptTokens {
    return this.#tokenize(r, chain, wantIds, found, Infinity) as PromptTokens;
  }

  /**
   * As `tokenize` (counts only), when the count is at most `limit`; else null, having encoded no
   * more than the pieces that pass the limit and stored nothing (api/budget.ts).
   */
  tokenizeWithin(r: Rendered, chain: readonly bigint[], found: Found | undefined, limit: number, ref: CachedRender | null = null): PromptTokens | null {
    return this.#tokenize(r, chain, false, found, limit, ref);
  }

  /**
   * `ref`: a cached render whose text may end as the new render does (trimToFit's candidates share
   * their last messages, not only their first). After the prefix cut, the render is scanned for
   * its boundary tokens; at the first one that ends where the rest of the render equals the rest
   * of `ref`'s text, just after a boundary token of `ref` with the same id, both texts are cut
   * at the same places from there on (the scan resumes after a boundary token and reads the same
   * text), so the pieces after it have `ref`'s ids: only the text between the two cuts is
   * encoded, and the cached render stored is assembled from the three parts (DESIGN.md, "Context
   * budgets").
   */
  #suffixFrom(r: Rendered, ref: CachedRender, length: number, cut: number): { at: number; refBound: number } | null {
    const s = commonSuffix(ref.segments, r.segments);
    if (s === 0 || ref.nBounds === 0) return null;
    const text = textFrom(r, cut);
    const from = Math.max(0, length - s - cut - this.#margin);
    const shift = ref.length - length;
    const ends = ref.track.bounds.ends.data;
    const ids = ref.track.bounds.ids.data;
    // matches must be those of the whole scan from the cut: scanned from the cut, kept from `from`
    for (const m of this.#enc.scanner.scan(text, 0)) {
      if (m.end < from) continue;
      const e = cut + m.end;
      if (length - e > s) continue;
      const eRef = e + shift;
      let lo = 0;
      let hi = ref.nBounds - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const v = ends[mid] as number;
        if (v === eRef) {
          if (ids[mid] === m.id) return { at: e, refBound: mid };
          break;
        }
        if (v < eRef) lo = mid + 1;
        else hi = mid - 1;
      }
    }
    return null;
  }

  #tokenize(r: Rendered, chain: readonly bigint[], wantIds: boolean, found: Found | undefined, limit: number, ref: CachedRender | null = null): PromptTokens | null {
    this.#requests++;
    // only a cached render still live in its lineage owns its track (a replaced one's may be rewritten)
    if (ref !== null && this.#store.lookup(ref.chain)?.cached !== ref) ref = null;
    if (found === undefined || !this.#splice) {
      this.#misses++;
      return this.#fresh(r, chain, wantIds, found, "miss", undefined, limit, !this.#splice);
    }
    const prev = found.cached;
    if (wantIds && prev.track.ids === null) return this.#fresh(r, chain, wantIds, found, "fallback", "ids_not_stored", limit);
    const length = totalLength(r.segments);
    const c = commonPrefix(prev, r);
    const continues = this.#store.continues(found, chain);
    if (c === length && c === prev.length) {
      if (prev.count > limit) return null;
      this.#hits++;
      this.#reused += prev.count;
      const track = continues ? prev.track : prev.track.fork(prev.count, prev.nBounds, prev.track.ids !== null);
      const snap = this.#cachedRender(r, length, track, prev.count, prev.nBounds, chain);
      this.#last = { cached: snap, found: this.#store.commit(snap, found), base: prev, reused: prev.count };
      const ids = wantIds && track.ids !== null ? track.ids.data.slice(0, prev.count) : null;
      return { count: prev.count, ids, reused: prev.count, outcome: "hit" };
    }
    const ends = prev.track.bounds.ends.data;
    const b = this.#lastSafeCut(prev, c);
    if (b < 0) return this.#fresh(r, chain, wantIds, found, "fallback", "no_safe_boundary", limit);

    const cut = ends[b] as number;
    const before = prev.track.bounds.tokenCounts.data[b] as number;
    if (before > limit) return null;
    const seam = prev.track.bounds.ids.data[b] as number;
    const keepIds = prev.track.ids !== null;
    // the end of `ref` reused (see #suffixFrom)
    const suffix = ref !== null && (ref.track.ids !== null || !keepIds) && ref !== prev ? this.#suffixFrom(r, ref, length, cut) : null;
    const refFrom = suffix === null ? 0 : ((ref as CachedRender).track.bounds.tokenCounts.data[suffix.refBound] as number);
    const after = suffix === null ? 0 : (ref as CachedRender).count - refFrom;
    // The tail is encoded into scratch lists owned by the splicer (copied into the track below).
    const tailIds = keepIds ? this.#scratchIds() : null;
    const tailBounds = this.#scratchBounds();
    let added: number;
    try {
      const rest = textFrom(r, cut);
      added = this.#enc.encodeFrom(suffix === null ? rest : rest.slice(0, suffix.at - cut), 0, seam, before, tailIds, tailBounds, cut, limit - before - after);
    } catch (e) {
      if (e instanceof SeamError) return this.#fresh(r, chain, wantIds, found, "fallback", "seam_mismatch", limit);
      throw e;
    }
    if (before + added + after > limit) {
      this.#encoded += added;
      this.#releaseScratch();
      return null;
    }
    if (suffix !== null) {
      // ref's ids and cut points after the sync cut, shifted to the new text
      const rs = ref as CachedRender;
      const rb = rs.track.bounds;
      const dc = suffix.at - (rb.ends.data[suffix.refBound] as number);
      const dt = before + added - refFrom;
      if (tailIds !== null && rs.track.ids !== null) tailIds.pushAll(rs.track.ids.data, refFrom, rs.count);
      for (let j = suffix.refBound + 1; j < rs.nBounds; j++) {
        tailBounds.ends.push((rb.ends.data[j] as number) + dc);
        tailBounds.tokenCounts.push((rb.tokenCounts.data[j] as number) + dt);
        tailBounds.ids.push(rb.ids.data[j] as number);
      }
      this.#reused += after;
      added += after;
      this.#encoded -= after; // (added below; these were reused, not encoded)
    }
    // Nothing below throws: the track is only changed once the new tail is complete.
    const track = continues ? prev.track : prev.track.fork(before, b + 1, keepIds);
    track.replaceTail(before, b + 1, tailIds, tailBounds);
    this.#releaseScratch();
    const count = before + added;
    this.#partial++;
    this.#reused += before;
    this.#encoded += added;
    const snap = this.#cachedRender(r, length, track, count, track.bounds.ends.length, chain);
    this.#last = { cached: snap, found: this.#store.commit(snap, found), base: prev, reused: before };
    const ids = wantIds && track.ids !== null ? track.ids.data.slice(0, count) : null;
    return { count, ids, reused: before, outcome: "partial" };
  }

  /**
   * What the last `tokenize` call committed. Valid until the next call changes the store (a
   * continuation of the same lineage rewrites the track past its reused prefix).
   */
  get last(): LastCommit | null {
    return this.#last;
  }

  /**
   * Token ids of `text(from)[:shared] + tail` without storing anything: the cached render's ids up to
   * its last cut that is safe for a text sharing its first `shared` characters (the reuse
   * invariant), then `tail`'s part encoded from that cut. With no safe cut, or a counts-only
   * cached render, the whole text is encoded (`before` = 0). Costs what follows the cut.
   */
  continuation(from: Found, shared: number, tail: string): Continuation {
    const cached = from.cached;
    const b = cached.track.ids === null || !this.#splice ? -1 : this.#lastSafeCut(cached, shared);
    const cut = b < 0 ? 0 : (cached.track.bounds.ends.data[b] as number);
    const before = b < 0 ? 0 : (cached.track.bounds.tokenCounts.data[b] as number);
    const seam = b < 0 ? null : (cached.track.bounds.ids.data[b] as number);
    const text = textRange(cached.segments, cut, shared) + tail;
    const ids = new U32List(Math.max(64, text.length >> 2));
    const bounds = newBoundaries(16);
    try {
      this.#enc.encodeFrom(text, 0, seam, before, ids, bounds, cut);
    } catch (e) {
      if (!(e instanceof SeamError)) throw e;
      // the tokenizer broke the seam invariant: encode the whole text, keep no cut
      this.#fallbacks.seam_mismatch++;
      const whole = Uint32Array.from(this.#enc.encodeWhole(textRange(cached.segments, 0, shared) + tail));
      this.#encoded += whole.length;
      const none = new Uint32Array(0);
      return { before: 0, ids: whole, bounds: { ends: none, tokenCounts: none }, from, keptBounds: -1, boundIds: none };
    }
    this.#encoded += ids.length;
    return {
      before,
      ids: ids.toArray(),
      bounds: { ends: bounds.ends.toArray(), tokenCounts: bounds.tokenCounts.toArray() },
      from,
      keptBounds: b + 1,
      boundIds: bounds.ids.toArray(),
    };
  }

  /**
   * Stores a continuation's text as the next cached render of its conversation (`r` is its render, in
   * segments; `chain` its messages): a later request sharing it reuses its ids as if the splicer
   * had tokenized it. Returns the cached render, or null when it could not be kept (no cut survived).
   */
  commitContinuation(cont: Continuation, r: Rendered, chain: readonly bigint[]): LastCommit | null {
    const from = cont.from;
    const prev = from.cached;
    if (cont.keptBounds < 0 || prev.track.ids === null) return null;
    const count = cont.before + cont.ids.length;
    const tailIds = new U32List(cont.ids.length);
    tailIds.pushAll(cont.ids);
    const tailBounds = newBoundaries(cont.boundIds.length);
    tailBounds.ends.pushAll(cont.bounds.ends);
    tailBounds.tokenCounts.pushAll(cont.bounds.tokenCounts);
    tailBounds.ids.pushAll(cont.boundIds);
    const track = this.#store.continues(from, chain) ? prev.track : prev.track.fork(cont.before, cont.keptBounds, true);
    track.replaceTail(cont.before, cont.keptBounds, tailIds, tailBounds);
    let length = 0;
    for (const s of r.segments) length += s.length;
    const snap = this.#cachedRender(r, length, track, count, track.bounds.ends.length, chain);
    this.#last = { cached: snap, found: this.#store.commit(snap, from), base: prev, reused: cont.before };
    return this.#last;
  }

  /** Full encode in one call, no cache: the baseline and reference path. */
  tokenizeFull(text: string, wantIds: boolean): PromptTokens {
    this.#requests++;
    this.#misses++;
    const out = this.#enc.encodeWhole(text);
    this.#encoded += out.length;
    return { count: out.length, ids: wantIds ? Uint32Array.from(out) : null, reused: 0, outcome: "miss" };
  }

  stats(): SplicerStats {
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
    r: Rendered,
    chain: readonly bigint[],
    wantIds: boolean,
    found: Found | undefined,
    outcome: "miss" | "fallback",
    reason?: FallbackReason,
    limit = Infinity,
    whole = false,
  ): PromptTokens | null {
    if (reason !== undefined) this.#fallbacks[reason]++;
    const text = r.segments.length === 1 ? (r.segments[0] as string) : r.segments.join("");
    const keepIds = this.#storeIds || wantIds;
    let track = new TokenTrack(keepIds, Math.max(1024, text.length >> 2));
    let count = -1;
    if (!whole) {
      try {
        count = this.#enc.encodeFrom(text, 0, null, 0, track.ids, track.bounds, 0, limit);
      } catch (e) {
        if (!(e instanceof SeamError)) throw e;
        // The tokenizer does not keep a boundary token whole: never cut this text.
        if (reason === undefined) this.#fallbacks.seam_mismatch++;
      }
    }
    if (count < 0) {
      // one encode and no cut points, so nothing is ever spliced from this cached render
      const all = this.#enc.encodeWhole(text);
      track = new TokenTrack(keepIds, all.length);
      track.ids?.pushAll(all);
      count = all.length;
    }
    this.#encoded += count;
    if (count > limit) return null;
    const ids = wantIds && track.ids !== null ? track.ids.data.slice(0, count) : null;
    if (!this.#storeIds && track.ids !== null) track = track.fork(0, track.bounds.ends.length, false);
    const snap = this.#cachedRender(r, text.length, track, count, track.bounds.ends.length, chain);
    this.#last = { cached: snap, found: this.#store.commit(snap, found), base: null, reused: 0 };
    const result: PromptTokens = { count, ids, reused: 0, outcome };
    if (reason !== undefined) result.reason = reason;
    return result;
  }

  /**
   * Index of the last cut point of `prev` that is safe when the new render shares its first `c`
   * characters, or -1. A cut after a boundary token starting at s is safe when the scanner's
   * decision at every position up to s reads only shared text (DESIGN.md, "The reuse
   * invariant"): certainly so when s plus the longest raw added token's length is at most `c` (a
   * decision reads at most that many characters); for a token starting later, each position from
   * c − L + 1 to s is checked with the trie walk itself. Starts increase with the index (matches
   * do not overlap), so the first part is a binary search.
   */
  #lastSafeCut(prev: CachedRender, c: number): number {
    const bounds = prev.track.bounds;
    const ends = bounds.ends.data;
    const ids = bounds.ids.data;
    const margin = this.#margin;
    const limit = c - margin;
    let lo = 0;
    let hi = prev.nBounds - 1;
    let ans = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if ((ends[mid] as number) - this.#tokenLength(ids[mid] as number) <= limit) {
        ans = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    // cuts whose token starts in the last `margin` characters of the shared text
    let last = ans;
    while (last + 1 < prev.nBounds && (ends[last + 1] as number) <= c) last++;
    if (last === ans) return ans;
    const from = Math.max(0, c - margin + 1);
    const window = textRange(prev.segments, from, c);
    const scanner = this.#enc.scanner;
    for (let b = last; b > ans; b--) {
      const s = (ends[b] as number) - this.#tokenLength(ids[b] as number);
      let ok = true;
      for (let i = from; i <= s && ok; i++) ok = scanner.decidesBefore(window, i - from, c - from);
      if (ok) return b;
    }
    return ans;
  }

  #tokenLength(id: number): number {
    const s = this.#enc.scanner.contentOf(id);
    if (s === undefined) throw new DeltatokError("DT_INTERNAL", `cut token ${id} is not a raw added token`);
    return s.length;
  }

  #cachedRender(r: Rendered, length: number, track: TokenTrack, count: number, nBounds: number, chain: readonly bigint[]): CachedRender {
    if (track.ids !== null && track.ids.length !== count) throw new DeltatokError("DT_INTERNAL", "token id count mismatch");
    return { segments: r.segments, length, track, count, nBounds, chain, trace: r.trace, traceBytes: r.traceBytes };
  }

  // Scratch lists for a request's new tail: one pair per splicer, emptied before each use and
  // replaced when an unusually long tail left them large.
  #tailIds = new U32List(SCRATCH_IDS);
  #tailBounds = newBoundaries(SCRATCH_BOUNDS);

  #scratchIds(): U32List {
    this.#tailIds.length = 0;
    return this.#tailIds;
  }

  #scratchBounds(): Boundaries {
    const b = this.#tailBounds;
    b.ends.length = b.tokenCounts.length = b.ids.length = 0;
    return b;
  }

  #releaseScratch(): void {
    if (this.#tailIds.data.length > SCRATCH_MAX) this.#tailIds = new U32List(SCRATCH_IDS);
    if (this.#tailBounds.ends.data.length > SCRATCH_MAX) this.#tailBounds = newBoundaries(SCRATCH_BOUNDS);
  }
}

const SCRATCH_IDS = 4096;
const SCRATCH_BOUNDS = 64;
/** Scratch lists grown past this many entries (4 MiB of ids) are dropped after use. */
const SCRATCH_MAX = 1 << 20;

function totalLength(segments: readonly string[]): number {
  let n = 0;
  for (const s of segments) n += s.length;
  return n;
}

/**
 * Common prefix length of a cached render's text and a new render: leading segments the renderer
 * reports as reused, then equal segments, then characters of the first pair that differs.
 */
export function commonPrefix(prev: Pick<CachedRender, "segments">, r: Pick<Rendered, "segments" | "reusedSegments">): number {
  const a = prev.segments;
  const b = r.segments;
  let i = 0;
  let c = 0;
  const n = Math.min(a.length, b.length);
  const reused = Math.min(r.reusedSegments, n);
  for (; i < reused; i++) c += (b[i] as string).length;
  for (; i < n && a[i] === b[i]; i++) c += (b[i] as string).length;
  // Compare the rests as text, across segment edges, without joining them (a rest can be the
  // whole remainder of another conversation's render).
  let ai = i;
  let bi = i;
  let ao = 0;
  let bo = 0;
  while (ai < a.length && bi < b.length) {
    const x = a[ai] as string;
    const y = b[bi] as string;
    const m = Math.min(x.length - ao, y.length - bo);
    const k = commonPrefixLengthAt(x, ao, y, bo, m);
    c += k;
    if (k < m) return c;
    ao += m;
    bo += m;
    if (ao === x.length) {
      ai++;
      ao = 0;
    }
    if (bo === y.length) {
      bi++;
      bo = 0;
    }
  }
  return c;
}

/** Length of the common suffix of two texts given in segments (equal segments compared whole). */
export function commonSuffix(a: readonly string[], b: readonly string[]): number {
  let ai = a.length - 1;
  let bi = b.length - 1;
  let ao = ai >= 0 ? (a[ai] as string).length : 0;
  let bo = bi >= 0 ? (b[bi] as string).length : 0;
  let n = 0;
  while (ai >= 0 && bi >= 0) {
    const x = a[ai] as string;
    const y = b[bi] as string;
    if (ao === x.length && bo === y.length && x === y) {
      n += x.length;
      ai--;
      bi--;
      ao = ai >= 0 ? (a[ai] as string).length : 0;
      bo = bi >= 0 ? (b[bi] as string).length : 0;
      continue;
    }
    while (ao > 0 && bo > 0) {
      if (x.charCodeAt(ao - 1) !== y.charCodeAt(bo - 1)) return n;
      ao--;
      bo--;
      n++;
    }
    if (ao === 0) {
      ai--;
      ao = ai >= 0 ? (a[ai] as string).length : 0;
    }
    if (bo === 0) {
      bi--;
      bo = bi >= 0 ? (b[bi] as string).length : 0;
    }
  }
  return n;
}

/** Characters [from, to) of a text given in segments. */
export function textRange(segments: readonly string[], from: number, to: number): string {
  if (to <= from) return "";
  const parts: string[] = [];
  let start = 0;
  for (const s of segments) {
    const end = start + s.length;
    if (end > from && start < to) parts.push(s.slice(Math.max(0, from - start), Math.min(s.length, to - start)));
    if (end >= to) break;
    start = end;
  }
  return parts.length === 1 ? (parts[0] as string) : parts.join("");
}

/** The new render's text from offset `from` on. */
function textFrom(r: Rendered, from: number): string {
  const segs = r.segments;
  let start = 0;
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i] as string;
    if (from < start + s.length || i === segs.length - 1) {
      const head = s.slice(from - start);
      return i === segs.length - 1 ? head : head + segs.slice(i + 1).join("");
    }
    start += s.length;
  }
  return "";
}
