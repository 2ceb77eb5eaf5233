/**
 * The Deltatok's pipeline as the API's own modules see it (rollouts build on it): one validated
 * request at a time through render → cache → tokenize, with the time accounted as the public
 * methods account it. Internal: `Deltatok` hands it out to api/ modules only; it is not exported
 * from the package.
 */
import type { TokenSplicer, PromptTokens, Rendered } from "../splice/splicer.js";
import type { ChatRenderer, MarkedRender, PreviousRender } from "../render/renderer.js";
import type { TokenEncoder } from "../tokenize/encoder.js";
import type { PromptOptions } from "./options.js";

/** A validated request, ready to render. */
export interface Prepared {
  readonly renderer: ChatRenderer;
  readonly vars: Record<string, unknown>;
  readonly now: Date;
  /** Cache key: everything besides the messages that shapes the render. */
  readonly key: bigint;
  /** content versions of vars.messages' items (readMessages; -1 where parse_tool_arguments copied) */
  readonly versions: number[];
  /** The messages as validation read them (snapshots, before parse_tool_arguments). */
  readonly messages: readonly unknown[];
  /** With continue_final_message: the final message's text, where the render is cut (api/continue.ts). */
  readonly final: string | null;
}

export interface Pipeline {
  /** Whether requests reuse the cache (mode incremental with ids stored). */
  readonly reusesIds: boolean;
  readonly splicer: TokenSplicer;
  readonly encoder: TokenEncoder;
  /** Validates and prepares a request; with `versions`, `messages` are snapshots read already (their content versions). */
  prepare(messages: readonly unknown[], p: PromptOptions, versions?: readonly number[]): Prepared;
  /** The request's prompt through the one tokenize step every public method uses (tokenizePrompt's). */
  tokenizeCached(prepared: Prepared, withIds: boolean): PromptTokens;
  /** A whole render (the reference path). */
  render(prepared: Prepared): string;
  renderMarked(prepared: Prepared): MarkedRender;
  /** An incremental render against `prev` (any earlier render of the same template), else whole. */
  renderAgainst(prepared: Prepared, prev: PreviousRender | null): Rendered;
  /** The message chain of `messages` under a request key. */
  chain(key: bigint, messages: readonly unknown[]): bigint[];
  /** The text add_generation_prompt appends, for this request's template and kwargs. */
  generationPrompt(p: PromptOptions): string;
  decode(ids: ArrayLike<number>): string;
  inVocabulary(id: number): boolean;
  /** Adds tokenize time to the Deltatok's stats. */
  chargeTokenize(ms: number): void;
}
