/**
 * The two RolloutHosts (api/rollout.ts): one on the splicer's cache, costing what each turn
 * appended, and the reference one, rendering and encoding every text whole. They implement the
 * same definitions (P_k, R_k, X_k, the canonical completion) and must give the same rollout.
 */
import { commonPrefix, textRange } from "../splice/splicer.js";
import type { CachedRender } from "../cache/store.js";
import type { LastCommit } from "../splice/splicer.js";
import type { PromptOptions } from "./options.js";
import type { Pipeline } from "./pipeline.js";
import type { CompletionTurn, PromptTexts, PromptTurn, RolloutHost } from "./rollout.js";

abstract class HostBase {
  constructor(
    protected readonly pipe: Pipeline,
    /** the conversation's messages without their sampled fields */
    protected readonly messages: readonly unknown[],
    protected readonly options: PromptOptions,
    /** content versions of `messages` (they were read once, before the first turn) */
    protected readonly versions: readonly number[],
  ) {}

  protected prepared(k: number, generationPrompt: boolean) {
    return this.pipe.prepare(this.messages.slice(0, k), { ...this.options, add_generation_prompt: generationPrompt }, this.versions);
  }

  messageStarts(k: number): readonly number[] {
    return this.pipe.renderMarked(this.prepared(k, true)).messageStarts;
  }

  generationPrompt(): string {
    return this.pipe.generationPrompt(this.options);
  }

  decode(ids: ArrayLike<number>): string {
    return this.pipe.decode(ids);
  }

  /** Whole encode, timed as tokenization. */
  protected encode(text: string): Uint32Array {
    const t0 = performance.now();
    try {
      return Uint32Array.from(this.pipe.encoder.encodeWhole(text));
    } finally {
      this.pipe.chargeTokenize(performance.now() - t0);
    }
  }
}

function startsWith(ids: Uint32Array, head: Uint32Array, from: number, to: number, offset: number): boolean {
  for (let i = from; i < to; i++) if (ids[i - offset] !== head[i]) return false;
  return true;
}

/**
 * Cache-backed: P_k from the cache; R_k rendered against P_k's render; X_k encoded from P_k's
 * last safe cut. When the completion is in context, R_k is then kept as the conversation's
 * cached render, so the next prompt reuses the completion's ids instead of encoding it again.
 */
export class CachedRolloutHost extends HostBase implements RolloutHost {
  /** The cached render the next prompt is expected to build on, and how many of its ids equal the sequence's. */
  #base: CachedRender | null = null;
  #agree = 0;
  /** The last two prompts' cached renders (split diagnosis reads their texts). */
  #current: LastCommit | null = null;
  #previous: CachedRender | null = null;
  #key = 0n;

  promptTexts(): PromptTexts {
    const prev = this.#previous;
    const cur = (this.#current as LastCommit).cached;
    if (prev === null) return { previousLength: 0, shared: 0, previous: () => "", current: (a, b) => textRange(cur.segments, a, b) };
    // segments the current render replayed from the previous one are the same strings: cheap to compare
    return {
      previousLength: prev.length,
      shared: commonPrefix(prev, { segments: cur.segments, reusedSegments: 0 }),
      previous: (a, b) => textRange(prev.segments, a, b),
      current: (a, b) => textRange(cur.segments, a, b),
    };
  }

  prompt(k: number): PromptTurn {
    const prepared = this.prepared(k, true);
    this.#key = prepared.key;
    const r = this.pipe.tokenizeCached(prepared, false);
    const last = this.pipe.splicer.last;
    const ids = last?.cached.track.ids ?? null;
    this.#previous = this.#current?.cached ?? null;
    if (last === null || ids === null || last.cached.count !== r.count) {
      // not expected (the pipeline stores ids when it reuses them): answer from a whole encode
      this.#current = null;
      this.#base = null;
      return wholePrompt(this.encode(this.pipe.render(prepared)));
    }
    const known = last.base !== null && last.base === this.#base ? Math.min(last.reused, this.#agree) : 0;
    this.#current = last;
    return { count: r.count, knownPrefix: known, slice: (from, to = r.count) => ids.data.subarray(from, to) };
  }

  completion(k: number, turn: PromptTurn, sampled: Uint32Array | null): CompletionTurn {
    const n = turn.count;
    const at = this.#current;
    if (at === null) return new WholeRolloutHost(this.pipe, this.messages, this.options, this.versions).completionAfter(k, this.pipe.render(this.prepared(k, true)), turn);
    const snap = at.cached;
    const prepared = this.prepared(k + 1, false);
    const r = this.pipe.renderAgainst(prepared, snap.trace === null ? null : { trace: snap.trace, segments: snap.segments });
    let length = 0;
    for (const s of r.segments) length += s.length;
    const h = commonPrefix(snap, r);
    const t0 = performance.now();
    const cont = this.pipe.splicer.continuation(at.found, h, textRange(r.segments, h, length));
    this.pipe.chargeTokenize(performance.now() - t0);
    const nb = cont.bounds.ends.length;
    const lastEnd = nb > 0 ? (cont.bounds.ends[nb - 1] as number) : -1;
    const eotChar = lastEnd > h ? lastEnd : length;
    const eotTok = lastEnd > h ? (cont.bounds.tokenCounts[nb - 1] as number) : cont.before + cont.ids.length;
    const text = textRange(r.segments, h, eotChar);
    this.#base = snap;
    this.#agree = n;
    if (h === snap.length && cont.before <= n && eotTok >= n && startsWith(cont.ids, turn.slice(0, n), cont.before, n, cont.before)) {
      const ids = cont.ids.slice(n - cont.before, eotTok - cont.before);
      // R_k becomes the conversation's cached render: the sequence holds its ids up to the first
      // difference between the completion used and the canonical one
      const kept = this.pipe.splicer.commitContinuation(cont, r, this.pipe.chain(this.#key, this.messages.slice(0, k + 1)));
      if (kept !== null) {
        this.#base = kept.cached;
        const c = sampled ?? ids;
        let d = 0;
        while (d < c.length && d < ids.length && c[d] === ids[d]) d++;
        this.#agree = n + d;
      }
      return { text, ids, inContext: true, start: h };
    }
    return { text, ids: this.encode(text), inContext: false, start: h };
  }
}

function wholePrompt(ids: Uint32Array): PromptTurn {
  return { count: ids.length, knownPrefix: 0, slice: (from, to = ids.length) => ids.subarray(from, to) };
}

/** The reference: every render and encode whole (also what full mode and counts-only Deltatoks use). */
export class WholeRolloutHost extends HostBase implements RolloutHost {
  #text = "";
  #previous = "";
  #ids: Uint32Array = new Uint32Array(0);

  promptTexts(): PromptTexts {
    const a = this.#previous;
    const b = this.#text;
    let shared = 0;
    const m = Math.min(a.length, b.length);
    while (shared < m && a.charCodeAt(shared) === b.charCodeAt(shared)) shared++;
    return { previousLength: a.length, shared, previous: (x, y) => a.slice(x, y), current: (x, y) => b.slice(x, y) };
  }

  prompt(k: number): PromptTurn {
    this.#previous = this.#text;
    this.#text = this.pipe.render(this.prepared(k, true));
    this.#ids = this.encode(this.#text);
    return wholePrompt(this.#ids);
  }

  completion(k: number, turn: PromptTurn): CompletionTurn {
    return this.completionAfter(k, this.#text, turn);
  }

  /** The canonical completion of message k after a prompt whose text is `p` and ids `turn`. */
  completionAfter(k: number, p: string, turn: PromptTurn): CompletionTurn {
    const r = this.pipe.render(this.prepared(k + 1, false));
    let h = 0;
    const m = Math.min(p.length, r.length);
    while (h < m && p.charCodeAt(h) === r.charCodeAt(h)) h++;
    const matches = this.pipe.encoder.scanner.scan(r);
    const lastMatch = matches[matches.length - 1];
    const eotChar = lastMatch !== undefined && lastMatch.end > h ? lastMatch.end : r.length;
    const text = r.slice(h, eotChar);
    const ids = this.encode(r.slice(0, eotChar));
    const n = turn.count;
    if (h === p.length && ids.length >= n && startsWith(ids, turn.slice(0, n), 0, n, 0)) return { text, ids: ids.slice(n), inContext: true, start: h };
    return { text, ids: this.encode(text), inContext: false, start: h };
  }
}
