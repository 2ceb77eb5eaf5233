/**
 * Streaming counters held by a sidecar (methods text_counter_open, message_counter_open,
 * counter_append, counter_finish, counter_close): one registry per Deltatok, so the pool
 * backend's counters live on its main-thread Deltatok like the other tokenizer methods (a counter never moves
 * between workers).
 *
 * Handles are random 128-bit hex strings. At most `MAX_COUNTERS` are open per sidecar; opening
 * one more evicts the least recently used, and a counter idle for `IDLE_MS` is dropped on the
 * next access to the registry. A handle that is unknown, finished, closed or evicted answers
 * DT_COUNTER_UNKNOWN. Counters are not tied to a connection: they end with finish/close,
 * eviction, or the sidecar.
 *
 * Memory: the characters all open counters were given are bounded together (`MAX_OPEN_CHARS`,
 * 64 Mi; a counter holds a few bytes per character — its text, tail and, for a message, the
 * previous render). An append that would pass the bound is refused before it is applied
 * (DT_INPUT_TOO_LARGE, that append only; the counter keeps its state), so one client's counters
 * cannot take the sidecar's memory; finishing or closing counters frees their share.
 *
 * Layer: serve.
 */
import { randomBytes } from "node:crypto";
import { DeltatokError } from "../errors.js";
import { snakeKeys } from "../json/index.js";
import type { Deltatok } from "../api/deltatok.js";
import { MESSAGE_OPTION_NAMES } from "../api/options.js";
import type { MessageCounter, TextCounter } from "../api/stream.js";

export const MAX_COUNTERS = 1024;
export const IDLE_MS = 10 * 60 * 1000;
/** Characters all open counters of a sidecar may hold together (at least one counter's maxPromptChars). */
export const MAX_OPEN_CHARS = 64 * 1024 * 1024;

interface Entry {
  counter: TextCounter | MessageCounter;
  kind: "text" | "message";
  used: number;
  /** Characters appended to it so far (its share of MAX_OPEN_CHARS). */
  chars: number;
}

/** Characters a counter_append brings: the chunk, or a delta's strings (content, reasoning, tool-call fields). */
function charsOf(v: unknown, depth = 0): number {
  if (typeof v === "string") return v.length;
  if (typeof v !== "object" || v === null || depth > 8) return 0;
  let n = 0;
  for (const x of Array.isArray(v) ? v : Object.values(v)) n += charsOf(x, depth + 1);
  return n;
}

export class CounterRegistry {
  /** Insertion order is recency order (an access re-inserts). */
  readonly #open = new Map<string, Entry>();
  evicted = 0;
  /** Characters the open counters hold together. */
  chars = 0;
  constructor(
    readonly max = MAX_COUNTERS,
    readonly idleMs = IDLE_MS,
    readonly now: () => number = Date.now,
    readonly maxChars = MAX_OPEN_CHARS,
  ) {}

  get size(): number {
    return this.#open.size;
  }

  open(kind: Entry["kind"], counter: Entry["counter"]): string {
    this.#expire();
    while (this.#open.size >= this.max) {
      const oldest = this.#open.keys().next().value as string;
      this.close(oldest);
      this.evicted++;
    }
    const handle = randomBytes(16).toString("hex");
    this.#open.set(handle, { counter, kind, used: this.now(), chars: 0 });
    return handle;
  }

  get(handle: unknown): Entry {
    this.#expire();
    const e = typeof handle === "string" ? this.#open.get(handle) : undefined;
    if (e === undefined) {
      throw new DeltatokError("DT_COUNTER_UNKNOWN", "no open counter has this handle (never opened, finished, closed or evicted): open another", { path: "handle" });
    }
    this.#open.delete(handle as string);
    e.used = this.now();
    this.#open.set(handle as string, e);
    return e;
  }

  close(handle: string): void {
    const e = this.#open.get(handle);
    if (e === undefined) return;
    this.chars -= e.chars;
    this.#open.delete(handle);
  }

  /**
   * Applies `append` to the counter of `e` if the open counters can hold `add` more characters,
   * else refuses it before it runs (DT_INPUT_TOO_LARGE; nothing changes).
   */
  charge<T>(e: Entry, add: number, append: () => T): T {
    const path = e.kind === "text" ? "chunk" : "delta";
    if (this.chars + add > this.maxChars) {
      throw new DeltatokError(
        "DT_INPUT_TOO_LARGE",
        `the sidecar's open counters hold ${this.chars} characters and this append brings ${add}: more than the ${this.maxChars} they may hold together; finish or close counters`,
        { path },
      );
    }
    const r = append();
    e.chars += add;
    this.chars += add;
    return r;
  }

  #expire(): void {
    const limit = this.now() - this.idleMs;
    for (const [h, e] of this.#open) {
      if (e.used >= limit) break; // recency order: the rest are newer
      this.close(h);
      this.evicted++;
    }
  }
}

const registries = new WeakMap<Deltatok, CounterRegistry>();

export function registryOf(dt: Deltatok): CounterRegistry {
  let r = registries.get(dt);
  if (r === undefined) {
    r = new CounterRegistry();
    registries.set(dt, r);
  }
  return r;
}

export type CounterMethod = "text_counter_open" | "message_counter_open" | "counter_append" | "counter_finish" | "counter_close";
export const COUNTER_METHODS: readonly CounterMethod[] = ["text_counter_open", "message_counter_open", "counter_append", "counter_finish", "counter_close"];

const OPEN_KEYS = new Set(["ids", "max_look_back"]);
const MESSAGE_KEYS = new Set<string>([...MESSAGE_OPTION_NAMES, "max_look_back"]);

/**
 * Runs `open`, naming the counter option in an error as the wire does (`max_look_back`, not the
 * library's `options.maxLookBack`).
 */
function wireNamed<T>(open: () => T): T {
  try {
    return open();
  } catch (e) {
    if (e instanceof DeltatokError && e.path === "options.maxLookBack") {
      throw new DeltatokError(e.code, e.message.replaceAll("maxLookBack", "max_look_back"), { path: "max_look_back" });
    }
    throw e;
  }
}

/** Answers a counter method with `dt`'s registry. */
export function counterCall(dt: Deltatok, method: CounterMethod, p: Record<string, unknown>, registry: CounterRegistry = registryOf(dt)): unknown {
  switch (method) {
    case "text_counter_open": {
      for (const k of Object.keys(p)) if (!OPEN_KEYS.has(k)) throw new DeltatokError("DT_INVALID_OPTION", `text_counter_open: unknown param ${k}`, { path: k });
      const o: { ids?: boolean; maxLookBack?: number } = {};
      if (p.ids !== undefined) o.ids = p.ids as boolean;
      if (p.max_look_back !== undefined) o.maxLookBack = p.max_look_back as number;
      return { handle: registry.open("text", wireNamed(() => dt.textCounter(o))) };
    }
    case "message_counter_open": {
      const o: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(p)) {
        if (!MESSAGE_KEYS.has(k)) throw new DeltatokError("DT_INVALID_OPTION", `message_counter_open: unknown param ${k}`, { path: k });
        o[k === "max_look_back" ? "maxLookBack" : k] = v;
      }
      return { handle: registry.open("message", wireNamed(() => dt.messageCounter(o))) };
    }
    case "counter_append": {
      const e = registry.get(p.handle);
      if (e.kind === "text") {
        const c = e.counter as TextCounter;
        const count = registry.charge(e, charsOf(p.chunk), () => c.append(p.chunk));
        const out: Record<string, unknown> = { count };
        if (p.ids === true) out.ids = Array.from(c.ids());
        return out;
      }
      return { count: registry.charge(e, charsOf(p.delta), () => (e.counter as MessageCounter).append(p.delta)) };
    }
    case "counter_finish": {
      const e = registry.get(p.handle);
      const count = e.counter.finish();
      const out: Record<string, unknown> = { count, stats: snakeKeys(e.counter.stats()) };
      if (e.kind === "text" && p.ids === true) out.ids = Array.from((e.counter as TextCounter).ids());
      registry.close(p.handle as string);
      return out;
    }
    case "counter_close": {
      registry.get(p.handle);
      registry.close(p.handle as string);
      return { closed: true };
    }
  }
}
