/**
 * What a template puts around messages, measured once per request key: the OSL baseline (the
 * tokens of `[U, E]`, an empty user then an empty assistant message) that `countMessage`
 * subtracts, and the text `add_generation_prompt` appends (trajectories' assistant masks).
 *
 * OSL of a message m is count(render([U, m])) − count(render([U, E])), at least 0: no tools, no
 * generation prompt, m's null content as "" (MLCommons endpoints' definition; framing and the
 * end-of-turn token are not counted). Both memos hold at most `FRAMING_MEMO_MAX` keys and start
 * over when full; the key already names the template, its kwargs and options, so a memo can
 * only save work, never change an answer.
 */
import type { PromptOptions } from "./options.js";
import type { Prepared } from "./pipeline.js";

/** Keys kept per memo at most. */
export const FRAMING_MEMO_MAX = 32;

export const USER_EMPTY = Object.freeze({ role: "user", content: "" });
export const ASSISTANT_EMPTY = Object.freeze({ role: "assistant", content: "" });

/** What the Deltatok gives this module. */
export interface FramingHost {
  /** Reads (validates) one message. */
  readMessage(message: unknown): Record<string, unknown>;
  /** Prepares a request whose messages are snapshots already. */
  prepare(messages: readonly unknown[], p: PromptOptions): Prepared;
  /** A whole render (timed as rendering). */
  render(prepared: Prepared): string;
  /** Tokens of a text, one whole encode (timed as tokenizing). */
  countWhole(text: string): number;
}

export class Framing {
  readonly #host: FramingHost;
  readonly #baselines = new Map<string, number>();
  readonly #generationPrompts = new Map<bigint, string>();

  constructor(host: FramingHost) {
    this.#host = host;
  }

  /** countMessage's render of [U, m] and its baseline count (of [U, E]). */
  oslRender(message: unknown, p: PromptOptions): { text: string; baseline: number } {
    const host = this.#host;
    let m = host.readMessage(message);
    if (m.content === null || m.content === undefined) m = { ...m, content: "" };
    const base: PromptOptions = { add_generation_prompt: false, tools: null };
    if (p.chat_template !== undefined) base.chat_template = p.chat_template;
    if (p.chat_template_kwargs !== undefined) base.chat_template_kwargs = p.chat_template_kwargs;
    if (p.parse_tool_arguments !== undefined) base.parse_tool_arguments = p.parse_tool_arguments;
    const withMessage = host.prepare([USER_EMPTY, m], base);
    const text = host.render(withMessage);
    const baseKey = withMessage.key.toString(16);
    let baseline = this.#baselines.get(baseKey);
    if (baseline === undefined) {
      baseline = host.countWhole(host.render(host.prepare([USER_EMPTY, ASSISTANT_EMPTY], base)));
      if (this.#baselines.size >= FRAMING_MEMO_MAX) this.#baselines.clear();
      this.#baselines.set(baseKey, baseline);
    }
    return { text, baseline };
  }

  /** The text add_generation_prompt appends, for this request's template and kwargs. */
  generationPrompt(p: PromptOptions): string {
    const host = this.#host;
    const base = { ...p, tools: null, parse_tool_arguments: false };
    const probe = [USER_EMPTY];
    const prepared = host.prepare(probe, { ...base, add_generation_prompt: true });
    let g = this.#generationPrompts.get(prepared.key);
    if (g === undefined) {
      const withGen = host.render(prepared);
      const without = host.render(host.prepare(probe, { ...base, add_generation_prompt: false }));
      g = withGen.startsWith(without) ? withGen.slice(without.length) : "";
      if (this.#generationPrompts.size >= FRAMING_MEMO_MAX) this.#generationPrompts.clear();
      this.#generationPrompts.set(prepared.key, g);
    }
    return g;
  }
}
