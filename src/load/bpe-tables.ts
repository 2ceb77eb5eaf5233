/**
 * A BPE model's vocabulary and merges as read-only typed arrays over SharedArrayBuffers, built
 * once from a loaded tokenizer and attached by any number of worker threads, so that N workers
 * hold one copy of the tables instead of N (src/pool/README.md, "Shared tokenizer tables").
 *
 * Built in one thread from the @huggingface/tokenizers BPE model it already constructed (so the
 * tables say exactly what that model's Maps say: `tokens_to_ids` after the added tokens went in,
 * `vocab` by id, `bpe_ranks`), and refused (`BpeTablesUnsupported`) for any model whose Maps do
 * not fit the compact form exactly — the caller then keeps per-thread Maps, loudly.
 *
 * Attached in another thread to a tokenizer built from the same tokenizer.json without its
 * vocabulary and merges: `attachBpeTables` replaces the model's `tokens_to_ids` with a read-only
 * map over the tables, its `vocab` with a read-only list over them, and its `bpe` with an
 * implementation that merges on ids (lowest rank first, leftmost first on ties: what the model's
 * priority queue does). Nothing in any thread writes to the buffers after they are built.
 *
 * Layer: load.
 */

import type { Tokenizer } from "@huggingface/tokenizers";

/** The tables, as they cross to a worker (structured clone keeps the buffers shared). */
export interface BpeTables {
  readonly format: "deltatok-bpe/1";
  /** UTF-16 code units of every token, by id (`starts[id]` … `starts[id + 1]`). */
  readonly chars: SharedArrayBuffer;
  /** Uint32 × (vocabLength + 1). */
  readonly starts: SharedArrayBuffer;
  /** Uint8 × vocabLength: 1 where an id has a token (`vocab[id]` is defined). */
  readonly present: SharedArrayBuffer;
  /** Uint8 × vocabLength: 1 where an id's token is in tokenizer.json's `model.vocab` (not only an added token). */
  readonly inModel: SharedArrayBuffer;
  /** Int32 open-addressing table of ids by token (-1: empty), a power of two long. */
  readonly tokenSlots: SharedArrayBuffer;
  /** Int32 × 3 per slot (left id, right id, rank; left -1: empty), a power of two of slots. */
  readonly mergeSlots: SharedArrayBuffer;
  /** Int32 × merges: the id of each rank's merged token. */
  readonly merged: SharedArrayBuffer;
  /** Length of the model's `vocab` list (largest id + 1). */
  readonly vocabLength: number;
  /** Number of tokens (`tokens_to_ids.size`). */
  readonly tokenCount: number;
  /** Number of merges (ranks 0 … merges − 1). */
  readonly merges: number;
  /** How tokenizer.json wrote its merges: `[a, b]` pairs or `"a b"` strings. */
  readonly mergeFormat: "pairs" | "strings";
  /** Probe texts and their ids from the model that built the tables (checked on attach). */
  readonly probes: ReadonlyArray<{ readonly text: string; readonly ids: readonly number[] }>;
}

/** A model the compact form cannot describe exactly; the reason says why. */
export class BpeTablesUnsupported extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "BpeTablesUnsupported";
  }
}

/** A rank must fit beside a position in one float64 heap key: rank × 2^31 + position < 2^53. */
const MAX_RANK = 1 << 22;

/** Texts whose ids the attached model must reproduce (long words take the heap path). */
const PROBES = [
  "Hello, world! It's 2026-12-01; x = [1, 2.5e-3]\n\n\tdone.  ",
  "naïve café — Größe 東京都 中文字 한국어 العربية 😀👍🏽 \u00a0 a \u0085b'll end",
  '{"name": "get_user", "arguments": {"user_id": "omar_rossi_1241"}}\n',
  "abababababababababababababababababababababababababababababab" + "x".repeat(300) + "z" + "é".repeat(90),
];

interface BpeModel {
  tokens_to_ids: Map<string, number>;
  vocab: Array<string | undefined>;
  merges: unknown[];
  bpe_ranks: Map<string, number>;
  bpe: (token: string) => string[];
  cache: { get(k: string): unknown; put(k: string, v: unknown): void };
  max_length_to_cache: number;
  unk_token?: string | null;
  unk_token_id?: number | undefined;
  end_of_word_suffix?: unknown;
  continuing_subword_suffix?: unknown;
}

function bpeModel(tok: Tokenizer): BpeModel {
  const m = (tok as unknown as { model?: Record<string, unknown> }).model;
  if (
    m === undefined ||
    !(m.tokens_to_ids instanceof Map) ||
    !Array.isArray(m.vocab) ||
    !Array.isArray(m.merges) ||
    !(m.bpe_ranks instanceof Map) ||
    typeof m.bpe !== "function" ||
    typeof m.cache !== "object" ||
    typeof m.max_length_to_cache !== "number"
  ) {
    throw new BpeTablesUnsupported("the model is not @huggingface/tokenizers' BPE");
  }
  if (m.end_of_word_suffix || m.continuing_subword_suffix) throw new BpeTablesUnsupported("end_of_word_suffix / continuing_subword_suffix are not supported");
  return m as unknown as BpeModel;
}

function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  return Math.imul(h, 0x45d9f3b) ^ (h >>> 13);
}

function hashPair(a: number, b: number): number {
  let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca6b);
  h ^= h >>> 15;
  return Math.imul(h, 0x2c1b3c6d) ^ (h >>> 12);
}

function pow2Above(n: number): number {
  let c = 16;
  while (c < 2 * n) c *= 2;
  return c;
}

function shared(bytes: number): SharedArrayBuffer {
  return new SharedArrayBuffer(Math.max(4, bytes));
}

/**
 * Builds the tables from `tok`'s BPE model (and `modelVocab`, tokenizer.json's `model.vocab`, to
 * know which ids it lists). Throws BpeTablesUnsupported when the model's Maps are not a
 * bijection between strings and ids, a merge names a token not in the vocabulary or yields one
 * not in it, or a merge is listed twice.
 */
export function buildBpeTables(tok: Tokenizer, modelVocab: unknown): BpeTables {
  const m = bpeModel(tok);
  if (modelVocab === null || typeof modelVocab !== "object" || Array.isArray(modelVocab)) throw new BpeTablesUnsupported("model.vocab is not an object");
  const vocab = m.vocab;
  const n = vocab.length;
  let total = 0;
  for (let id = 0; id < n; id++) {
    const t = vocab[id];
    if (t === undefined) continue;
    if (typeof t !== "string") throw new BpeTablesUnsupported(`vocab[${id}] is not a string`);
    if (m.tokens_to_ids.get(t) !== id) throw new BpeTablesUnsupported(`vocab[${id}] maps back to ${String(m.tokens_to_ids.get(t))}`);
    total += t.length;
  }
  for (const [t, id] of m.tokens_to_ids) {
    if (typeof id !== "number" || !Number.isInteger(id) || id < 0 || id >= n || vocab[id] !== t) throw new BpeTablesUnsupported(`token ${JSON.stringify(t)} → ${String(id)} is not vocab[${String(id)}]`);
  }
  const chars = shared(2 * total);
  const starts = shared(4 * (n + 1));
  const present = shared(n);
  const inModel = shared(n);
  const c16 = new Uint16Array(chars);
  const st = new Uint32Array(starts);
  const pr = new Uint8Array(present);
  const im = new Uint8Array(inModel);
  const cap = pow2Above(m.tokens_to_ids.size);
  const tokenSlots = shared(4 * cap);
  const slots = new Int32Array(tokenSlots).fill(-1);
  let at = 0;
  for (let id = 0; id < n; id++) {
    st[id] = at;
    const t = vocab[id];
    if (t === undefined) continue;
    pr[id] = 1;
    for (let i = 0; i < t.length; i++) c16[at++] = t.charCodeAt(i);
    let s = hashString(t) & (cap - 1);
    while ((slots[s] as number) >= 0) s = (s + 1) & (cap - 1);
    slots[s] = id;
  }
  st[n] = at;
  for (const [t, id] of Object.entries(modelVocab as Record<string, unknown>)) {
    if (typeof id !== "number" || m.tokens_to_ids.get(t) !== id) throw new BpeTablesUnsupported(`model.vocab ${JSON.stringify(t)} is not token ${String(id)}`);
    im[id] = 1;
  }

  const list = m.merges;
  const mc = list.length;
  if (mc >= MAX_RANK) throw new BpeTablesUnsupported(`${mc} merges (at most ${MAX_RANK})`);
  // the runtime ranked merge i as i, keyed by the pair: with no pair listed twice, pair i has rank i
  if (m.bpe_ranks.size !== mc) throw new BpeTablesUnsupported("a merge is listed twice");
  const mcap = pow2Above(mc);
  const mergeSlots = shared(12 * mcap);
  const ms = new Int32Array(mergeSlots).fill(-1);
  const merged = shared(4 * mc);
  const mg = new Int32Array(merged);
  let format: "pairs" | "strings" = "pairs";
  for (let r = 0; r < mc; r++) {
    const x = list[r];
    if (!Array.isArray(x) || x.length !== 2 || typeof x[0] !== "string" || typeof x[1] !== "string") throw new BpeTablesUnsupported(`merge ${r} is not a pair of strings`);
    const [a, b] = x as [string, string];
    const ia = m.tokens_to_ids.get(a);
    const ib = m.tokens_to_ids.get(b);
    const ic = m.tokens_to_ids.get(a + b);
    if (ia === undefined || ib === undefined || ic === undefined) throw new BpeTablesUnsupported(`merge ${r} (${JSON.stringify(a)}, ${JSON.stringify(b)}) is not within the vocabulary`);
    let s = hashPair(ia, ib) & (mcap - 1);
    while ((ms[3 * s] as number) >= 0) s = (s + 1) & (mcap - 1);
    ms[3 * s] = ia;
    ms[3 * s + 1] = ib;
    ms[3 * s + 2] = r;
    mg[r] = ic;
  }
  if (mc > 0) {
    // how the file wrote them: the runtime split "a b" strings into pairs
    const cfg = (m as unknown as { config?: { merges?: unknown[] } }).config;
    format = Array.isArray(cfg?.merges?.[0]) ? "pairs" : "strings";
    if (format === "strings") for (const x of list as string[][]) if ((x[0] as string).includes(" ") || (x[1] as string).includes(" ")) throw new BpeTablesUnsupported("a merge string has more than one space");
  }
  const probes = PROBES.map((text) => ({ text, ids: tok.encode(text, { add_special_tokens: false }).ids }));
  return Object.freeze({
    format: "deltatok-bpe/1",
    chars,
    starts,
    present,
    inModel,
    tokenSlots,
    mergeSlots,
    merged,
    vocabLength: n,
    tokenCount: m.tokens_to_ids.size,
    merges: mc,
    mergeFormat: format,
    probes,
  });
}

/** Total bytes of the tables' buffers. */
export function bpeTablesBytes(t: BpeTables): number {
  return [t.chars, t.starts, t.present, t.inModel, t.tokenSlots, t.mergeSlots, t.merged].reduce((s, b) => s + b.byteLength, 0);
}

/** Read-only lookups over attached tables. */
export class BpeTableView {
  readonly tables: BpeTables;
  readonly #chars: Uint16Array;
  readonly #starts: Uint32Array;
  readonly #present: Uint8Array;
  readonly #inModel: Uint8Array;
  readonly #slots: Int32Array;
  readonly #mask: number;
  readonly #ms: Int32Array;
  readonly #mmask: number;
  readonly #merged: Int32Array;

  constructor(t: BpeTables) {
    if (t.format !== "deltatok-bpe/1") throw new BpeTablesUnsupported(`unknown table format ${String(t.format)}`);
    this.tables = t;
    this.#chars = new Uint16Array(t.chars);
    this.#starts = new Uint32Array(t.starts);
    this.#present = new Uint8Array(t.present);
    this.#inModel = new Uint8Array(t.inModel);
    this.#slots = new Int32Array(t.tokenSlots);
    this.#mask = this.#slots.length - 1;
    this.#ms = new Int32Array(t.mergeSlots);
    this.#mmask = this.#ms.length / 3 - 1;
    this.#merged = new Int32Array(t.merged);
    if (this.#starts.length !== t.vocabLength + 1 || this.#merged.length !== t.merges) throw new BpeTablesUnsupported("table sizes do not match");
  }

  get vocabLength(): number {
    return this.tables.vocabLength;
  }

  /** The id of token `s`, or -1. */
  idOf(s: string): number {
    const slots = this.#slots;
    const chars = this.#chars;
    const starts = this.#starts;
    const len = s.length;
    let slot = hashString(s) & this.#mask;
    for (;;) {
      const id = slots[slot] as number;
      if (id < 0) return -1;
      const a = starts[id] as number;
      if ((starts[id + 1] as number) - a === len) {
        let i = 0;
        while (i < len && chars[a + i] === s.charCodeAt(i)) i++;
        if (i === len) return id;
      }
      slot = (slot + 1) & this.#mask;
    }
  }

  /** The token of `id`, or undefined. */
  tokenOf(id: number): string | undefined {
    if (!(id >= 0 && id < this.tables.vocabLength) || this.#present[id] !== 1) return undefined;
    const a = this.#starts[id] as number;
    const b = this.#starts[id + 1] as number;
    let s = "";
    for (let i = a; i < b; i += 4096) s += String.fromCharCode.apply(null, this.#chars.subarray(i, Math.min(b, i + 4096)) as unknown as number[]);
    return s;
  }

  /** Whether `id`'s token is listed in tokenizer.json's model.vocab. */
  inModelVocab(id: number): boolean {
    return id >= 0 && id < this.tables.vocabLength && this.#inModel[id] === 1;
  }

  /** The rank of merging `a` then `b`, or -1. */
  rank(a: number, b: number): number {
    const ms = this.#ms;
    let slot = hashPair(a, b) & this.#mmask;
    for (;;) {
      const x = ms[3 * slot] as number;
      if (x < 0) return -1;
      if (x === a && ms[3 * slot + 1] === b) return ms[3 * slot + 2] as number;
      slot = (slot + 1) & this.#mmask;
    }
  }

  /** The id of the token rank `r` merges into. */
  mergedId(r: number): number {
    return this.#merged[r] as number;
  }

  /** [left, right] ids of rank `r`'s merge (a scan: for rebuilding model.merges on demand). */
  mergeList(): Array<[number, number]> {
    const out = new Array<[number, number]>(this.tables.merges);
    const ms = this.#ms;
    for (let s = 0; s < ms.length; s += 3) if ((ms[s] as number) >= 0) out[ms[s + 2] as number] = [ms[s] as number, ms[s + 1] as number];
    return out;
  }
}

/** A generational string → id memo (hits are one Map lookup); at most 2 × capacity entries. */
class IdMemo {
  #cur = new Map<string, number>();
  #old = new Map<string, number>();
  constructor(readonly capacity: number) {}
  get(k: string): number | undefined {
    const v = this.#cur.get(k);
    if (v !== undefined) return v;
    const o = this.#old.get(k);
    if (o !== undefined) this.put(k, o);
    return o;
  }
  put(k: string, v: number): void {
    this.#cur.set(k, v);
    if (this.#cur.size >= this.capacity) {
      this.#old = this.#cur;
      this.#cur = new Map();
    }
  }
}

/** Tokens longer than this are looked up without being memoized (a memo key must not pin a long text). */
const MEMO_KEY_MAX = 64;

/**
 * `tokens_to_ids` over the tables: the Map methods the runtime and deltatok call (`get`, `has`,
 * `size`, iteration), read-only. Recent lookups are memoized per thread, so a token string the BPE
 * memo hands out again costs one Map lookup, as with the Map it replaces.
 */
export class SharedTokenMap implements ReadonlyMap<string, number> {
  readonly #view: BpeTableView;
  readonly #memo = new IdMemo(1 << 15);

  constructor(view: BpeTableView) {
    this.#view = view;
  }

  get(k: string): number | undefined {
    if (typeof k !== "string") return undefined;
    const hit = this.#memo.get(k);
    if (hit !== undefined) return hit < 0 ? undefined : hit;
    const id = this.#view.idOf(k);
    if (k.length <= MEMO_KEY_MAX) this.#memo.put(k, id);
    return id < 0 ? undefined : id;
  }

  has(k: string): boolean {
    return this.get(k) !== undefined;
  }

  /** Records what a lookup of `k` would find (the BPE below knows it already). */
  remember(k: string, id: number): void {
    if (k.length <= MEMO_KEY_MAX) this.#memo.put(k, id);
  }

  get size(): number {
    return this.#view.tables.tokenCount;
  }

  set(): never {
    throw new TypeError("the shared vocabulary is read-only");
  }

  delete(): never {
    throw new TypeError("the shared vocabulary is read-only");
  }

  clear(): never {
    throw new TypeError("the shared vocabulary is read-only");
  }

  *entries(): MapIterator<[string, number]> {
    const v = this.#view;
    for (let id = 0; id < v.vocabLength; id++) {
      const t = v.tokenOf(id);
      if (t !== undefined) yield [t, id];
    }
  }

  *keys(): MapIterator<string> {
    for (const [k] of this.entries()) yield k;
  }

  *values(): MapIterator<number> {
    for (const [, id] of this.entries()) yield id;
  }

  [Symbol.iterator](): MapIterator<[string, number]> {
    return this.entries();
  }

  forEach(f: (value: number, key: string, map: ReadonlyMap<string, number>) => void): void {
    for (const [k, id] of this.entries()) f(id, k, this);
  }
}

/** `vocab` (token by id) over the tables: index reads and `length`, read-only. */
function sharedVocabList(view: BpeTableView): Array<string | undefined> {
  const target: Array<string | undefined> = [];
  return new Proxy(target, {
    get(t, prop, receiver) {
      if (typeof prop === "string") {
        if (prop === "length") return view.vocabLength;
        const c = prop.charCodeAt(0);
        if (c >= 48 && c <= 57) {
          const id = Number(prop);
          if (Number.isInteger(id)) return view.tokenOf(id);
        }
      } else if (prop === Symbol.iterator) {
        return function* () {
          for (let id = 0; id < view.vocabLength; id++) yield view.tokenOf(id);
        };
      }
      return Reflect.get(t, prop, receiver);
    },
    set() {
      throw new TypeError("the shared vocabulary is read-only");
    },
    has(_t, prop) {
      if (prop === "length") return true;
      return typeof prop === "string" && /^\d+$/.test(prop) && view.tokenOf(Number(prop)) !== undefined;
    },
  });
}

/**
 * The model's `bpe(token)` on ids: each code point's id, then repeatedly the adjacent pair of
 * lowest rank (leftmost among equal ranks) merged, until no pair has a rank. Results are the
 * token's substrings, memoized in the model's cache like the original.
 */
function sharedBpe(model: BpeModel, view: BpeTableView, map: SharedTokenMap): (token: string) => string[] {
  // per thread scratch: ids, code-unit offsets, list links
  let ids = new Int32Array(256);
  let offs = new Int32Array(257);
  let next = new Int32Array(256);
  let prev = new Int32Array(256);
  let heap = new Float64Array(256);
  const unit = new Int32Array(65536).fill(-2); // single-code-unit ids, looked up once
  const grow = (n: number): void => {
    let c = ids.length;
    while (c < n) c *= 2;
    if (c === ids.length) return;
    ids = new Int32Array(c);
    offs = new Int32Array(c + 1);
    next = new Int32Array(c);
    prev = new Int32Array(c);
    heap = new Float64Array(c * 2);
  };
  const SCAN_MAX = 24;
  return function bpe(token: string): string[] {
    if (token.length === 0) return [];
    const cached = model.cache.get(token) as string[] | undefined;
    if (cached !== undefined) return cached;
    grow(token.length + 1);
    // symbols: code points
    let n = 0;
    for (let i = 0; i < token.length; ) {
      const c = token.charCodeAt(i);
      offs[n] = i;
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < token.length) {
        const d = token.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          ids[n++] = view.idOf(token.slice(i, i + 2));
          i += 2;
          continue;
        }
      }
      let id = unit[c] as number;
      if (id === -2) unit[c] = id = view.idOf(token[i] as string);
      ids[n++] = id;
      i++;
    }
    offs[n] = token.length;
    for (let i = 0; i < n; i++) {
      next[i] = i + 1 < n ? i + 1 : -1;
      prev[i] = i - 1;
    }
    if (n > 1) {
      if (n <= SCAN_MAX) {
        // short words: scan for the lowest (rank, position) each round
        for (;;) {
          let best = -1;
          let bestRank = MAX_RANK;
          for (let i = 0; i !== -1; i = next[i] as number) {
            const j = next[i] as number;
            if (j === -1) break;
            const a = ids[i] as number;
            const b = ids[j] as number;
            if (a < 0 || b < 0) continue;
            const r = view.rank(a, b);
            if (r >= 0 && r < bestRank) {
              bestRank = r;
              best = i;
            }
          }
          if (best < 0) break;
          const j = next[best] as number;
          ids[best] = view.mergedId(bestRank);
          const k = next[j] as number;
          next[best] = k;
          if (k !== -1) prev[k] = best;
        }
      } else {
        // long words: a heap of (rank, position) keys, stale entries skipped on pop
        let size = 0;
        const push = (key: number): void => {
          if (size === heap.length) {
            const h = new Float64Array(heap.length * 2);
            h.set(heap);
            heap = h;
          }
          let i = size++;
          while (i > 0) {
            const p = (i - 1) >> 1;
            if ((heap[p] as number) <= key) break;
            heap[i] = heap[p] as number;
            i = p;
          }
          heap[i] = key;
        };
        const pop = (): number => {
          const top = heap[0] as number;
          const last = heap[--size] as number;
          let i = 0;
          for (;;) {
            let c = 2 * i + 1;
            if (c >= size) break;
            if (c + 1 < size && (heap[c + 1] as number) < (heap[c] as number)) c++;
            if ((heap[c] as number) >= last) break;
            heap[i] = heap[c] as number;
            i = c;
          }
          if (size > 0) heap[i] = last;
          return top;
        };
        const P = 2147483648; // 2^31
        const consider = (i: number): void => {
          const j = next[i] as number;
          if (j === -1) return;
          const a = ids[i] as number;
          const b = ids[j] as number;
          if (a < 0 || b < 0) return;
          const r = view.rank(a, b);
          if (r >= 0) push(r * P + i);
        };
        for (let i = 0; i < n - 1; i++) consider(i);
        while (size > 0) {
          const key = pop();
          const r = Math.floor(key / P);
          const i = key - r * P;
          if (ids[i] === -3) continue; // merged away
          const j = next[i] as number;
          if (j === -1) continue;
          const a = ids[i] as number;
          const b = ids[j] as number;
          if (a < 0 || b < 0 || view.rank(a, b) !== r) continue; // stale
          ids[i] = view.mergedId(r);
          ids[j] = -3;
          const k = next[j] as number;
          next[i] = k;
          if (k !== -1) prev[k] = i;
          const p = prev[i] as number;
          if (p !== -1) consider(p);
          consider(i);
        }
      }
    }
    const result: string[] = [];
    for (let i = 0; i !== -1; i = next[i] as number) {
      const j = next[i] as number;
      const s = token.slice(offs[i] as number, j === -1 ? token.length : (offs[j] as number));
      result.push(s);
      map.remember(s, ids[i] as number);
    }
    if (token.length < model.max_length_to_cache) model.cache.put(token, result);
    return result;
  };
}

/**
 * Makes `tok` (built from tokenizer.json with an empty vocabulary and no merges) use the shared
 * tables. Returns the view. Throws BpeTablesUnsupported when the tokenizer is not a BPE model.
 * Call {@link checkBpeProbes} once the rest of the pipeline is in place.
 */
export function attachBpeTables(tok: Tokenizer, tables: BpeTables, unkToken: unknown): BpeTableView {
  const m = bpeModel(tok);
  const view = new BpeTableView(tables);
  for (const [t, id] of m.tokens_to_ids) {
    // the added tokens the runtime put into its (otherwise empty) Map must be the tables' too
    if (view.idOf(t) !== id) throw new BpeTablesUnsupported(`added token ${JSON.stringify(t)} is not token ${id} of the tables`);
  }
  const map = new SharedTokenMap(view);
  const model = m as unknown as Record<string, unknown>;
  model.tokens_to_ids = map;
  model.vocab = sharedVocabList(view);
  model.merges = Object.freeze([]);
  model.bpe_ranks = new Map();
  model.unk_token_id = typeof unkToken === "string" ? map.get(unkToken) : undefined;
  model.bpe = sharedBpe(m, view, map);
  return view;
}

/** Throws BpeTablesUnsupported unless `tok` encodes the tables' probe texts to the building model's ids. */
export function checkBpeProbes(tok: Tokenizer, tables: BpeTables): void {
  for (const p of tables.probes) {
    const got = tok.encode(p.text, { add_special_tokens: false }).ids;
    if (got.length !== p.ids.length || got.some((x: number, i: number) => x !== p.ids[i])) throw new BpeTablesUnsupported(`probe ${JSON.stringify(p.text.slice(0, 20))} encodes differently with the shared tables`);
  }
}
