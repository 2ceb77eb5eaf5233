/**
 * Conversation prefixes for long-lived services (the sidecar, pool workers). A request body may
 * say `{"conversation_id": "c7", "state": 8, "prefix": {"state": 7, "length": 12}, "messages":
 * [...]}`: its messages are the first 12 messages of the request that named itself state 7 of
 * conversation c7, followed by `messages`; this request's messages become state 8. The server
 * holds each conversation's latest state only; a prefix naming any other state (requests that
 * arrived out of order, an evicted or moved conversation) fails with DT_PREFIX_UNKNOWN, so two
 * requests can never be spliced together by mistake. A request with a prefix and no `tools`
 * member uses the tools of the state it extends (tool schemas are often the largest part of a
 * request that does not change); `"tools": null` means no tools. A growing trajectory
 * then crosses the wire once, and the Deltatok sees the same message objects turn after turn
 * (its per-object hashes and pointer-equal strings make reuse cheap). Unknown or evicted
 * prefixes are an error (DT_PREFIX_UNKNOWN) the client answers by resending everything; nothing
 * is guessed.
 *
 * Bounded: at most `maxConversations` conversations and `maxBytes` estimated bytes (message
 * string lengths × 2), least recently used first out.
 */
import { LRUCache } from "lru-cache";
import { DeltatokError } from "../errors.js";

interface Held {
  /** The state id the client gave these messages. */
  state: unknown;
  messages: unknown[];
  tools: unknown;
  /** sizes[i] = estimated bytes of messages[0..i). */
  sizes: number[];
}

function messageBytes(m: unknown): number {
  if (typeof m !== "object" || m === null) return 16;
  let n = 64;
  for (const v of Object.values(m as Record<string, unknown>)) {
    if (typeof v === "string") n += v.length * 2;
    else if (v !== null && typeof v === "object") n += 256;
  }
  return n;
}

export interface ConversationStoreOptions {
  /** @defaultValue 10000 */
  maxConversations?: number;
  /** @defaultValue 536870912 (512 MiB) */
  maxBytes?: number;
}

export class ConversationMessages {
  readonly #held: LRUCache<string, Held>;

  constructor(o: ConversationStoreOptions = {}) {
    this.#held = new LRUCache<string, Held>({
      max: o.maxConversations ?? 10_000,
      maxSize: o.maxBytes ?? 512 * 1024 * 1024,
      sizeCalculation: (h) => (h.sizes[h.sizes.length - 1] ?? 0) + 64 + (h.tools === undefined || h.tools === null ? 0 : 4096),
    });
  }

  /**
   * The full messages and tools of a request body (conversation_id, state, prefix, messages,
   * tools — `tools` undefined when the body has no tools member). With a conversation id and a
   * state, the result is remembered as that conversation's latest state.
   * Throws DT_PREFIX_UNKNOWN / DT_INVALID_REQUEST.
   */
  resolve(conversationId: unknown, state: unknown, prefix: unknown, messages: unknown, tools: unknown): { messages: unknown; tools: unknown } {
    const remember = typeof conversationId === "string" && (typeof state === "string" || typeof state === "number");
    if (prefix === undefined || prefix === null) {
      if (remember && Array.isArray(messages)) this.#remember(conversationId as string, state, messages, tools, 0, null);
      return { messages, tools };
    }
    if (typeof conversationId !== "string") {
      throw new DeltatokError("DT_INVALID_REQUEST", "prefix needs a string conversation_id", { path: "conversation_id" });
    }
    const p = prefix as { state?: unknown; length?: unknown };
    if (typeof prefix !== "object" || !Number.isSafeInteger(p.length) || (p.length as number) < 0 || (typeof p.state !== "string" && typeof p.state !== "number")) {
      throw new DeltatokError("DT_INVALID_REQUEST", "prefix must be {state: string|number, length: integer ≥ 0}", { path: "prefix" });
    }
    if (!Array.isArray(messages)) throw new DeltatokError("DT_INVALID_MESSAGES", "messages must be an array", { path: "messages" });
    const held = this.#held.get(conversationId);
    const n = p.length as number;
    if (held === undefined || held.state !== p.state || held.messages.length < n) {
      throw new DeltatokError(
        "DT_PREFIX_UNKNOWN",
        `conversation ${JSON.stringify(conversationId)}: state ${JSON.stringify(p.state)} is not the one held ` +
          `(${held === undefined ? "none" : `state ${JSON.stringify(held.state)}, ${held.messages.length} messages`}); resend all messages`,
        { path: "prefix" },
      );
    }
    const full = n === held.messages.length ? held.messages.concat(messages) : held.messages.slice(0, n).concat(messages);
    const t = tools === undefined ? held.tools : tools;
    if (remember) this.#remember(conversationId, state, full, t, n, held);
    return { messages: full, tools: t };
  }

  #remember(id: string, state: unknown, messages: unknown[], tools: unknown, keep: number, held: Held | null): void {
    const sizes = held === null ? [0] : held.sizes.slice(0, keep + 1);
    for (let i = keep; i < messages.length; i++) sizes.push((sizes[i] as number) + messageBytes(messages[i]));
    this.#held.set(id, { state, messages, tools, sizes });
  }

  get conversations(): number {
    return this.#held.size;
  }
}
