/**
 * Cache keys and message chains.
 *
 * The key partitions the cache by everything besides the messages that shapes a render:
 * tokenizer identity, template source, tools, documents, chat_template_kwargs,
 * add_generation_prompt, parse_tool_arguments, special tokens, and the date when the template
 * reads the clock. chain[i] = xxh64(hash(messages[i]), seed = chain[i-1]), chain[-1] = key.
 *
 * Per-object hashes are memoized by identity (WeakMap). That is safe even if a caller mutates a
 * message between calls: a stale hash only selects a worse candidate, and reuse is decided on
 * the rendered text (see splice/splicer.ts).
 */
import { hashableJson, hasher } from "./hash.js";

export class ChainHasher {
  readonly #memo = new WeakMap<object, bigint>();

  /** Hash of any JSON-like value; objects are memoized by identity. */
  valueHash(v: unknown): bigint {
    if (typeof v === "object" && v !== null) {
      const m = this.#memo.get(v);
      if (m !== undefined) return m;
      const h = hasher().h64(hashableJson(v));
      this.#memo.set(v, h);
      return h;
    }
    return hasher().h64(hashableJson(v));
  }

  /** Key of a request from its parts (strings or values; order matters). */
  key(parts: readonly unknown[]): bigint {
    const xx = hasher();
    let h = 0n;
    for (const p of parts) h = xx.h64(typeof p === "string" ? p : this.valueHash(p).toString(16), h);
    return h;
  }

  /**
   * chain[i] for i in [0, messages.length). A conversation's next request usually repeats the
   * previous request's message objects: the positions where the same key and the very same
   * objects recur take the previous request's chain (like the per-object memo, a caller mutating
   * a message in place can only make the chain select a worse candidate — DESIGN.md).
   */
  chain(key: bigint, messages: readonly unknown[]): bigint[] {
    const xx = hasher();
    const out = new Array<bigint>(messages.length);
    let h = key;
    let i = 0;
    const last = this.#recent.find((r) => r.key === key && r.messages[0] === messages[0] && messages.length > 0);
    if (last !== undefined) {
      const n = Math.min(messages.length, last.messages.length);
      while (i < n && messages[i] === last.messages[i]) {
        h = last.chain[i] as bigint;
        out[i] = h;
        i++;
      }
    }
    for (; i < messages.length; i++) {
      h = xx.h64(this.valueHash(messages[i]).toString(16), h);
      out[i] = h;
    }
    this.#remember(key, messages, out);
    return out;
  }

  /** The last few chains computed (conversations served interleaved each keep theirs). */
  readonly #recent: Array<{ key: bigint; messages: readonly unknown[]; chain: bigint[] }> = [];

  #remember(key: bigint, messages: readonly unknown[], chain: bigint[]): void {
    const r = this.#recent;
    const at = r.findIndex((x) => x.key === key && x.messages[0] === messages[0]);
    if (at >= 0) r.splice(at, 1);
    else if (r.length >= 8) r.pop();
    r.unshift({ key, messages, chain });
  }
}
