/**
 * The public entry point: a validating class over the render → cache → tokenize pipeline.
 *
 * ```ts
 * const dt = await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30" });
 * const isl = dt.countPrompt(messages.slice(0, k), { tools });   // prompt tokens of request k
 * const osl = dt.countMessage(messages[k]);                        // tokens of the answer
 * ```
 */
import { DeltatokError, toDeltatokError } from "../errors.js";
import { loadTokenizer, loadTokenizerWith, selectTemplate, shownFile, type LoadedTokenizer, type SharedTokenizer } from "../load/index.js";
import { naiveNow, parseDate } from "../load/date.js";
import { createRenderer, type ChatRenderer, type MarkedRender, type PreviousRender, type RenderWork } from "../render/renderer.js";
import { OffsetMapper } from "../tokenize/offsets.js";
import { assembleTrajectory, type Trajectory } from "./trajectory.js";
import { MessageRecall, parseToolArguments, readDocuments, readKwargs, readMessage, readMessages, readTools, type JsonParser } from "../render/messages.js";
import { RESERVED_TEMPLATE_KEYS, templateVariables } from "../render/variables.js";
import { ChainHasher } from "../cache/chain.js";
import { initHasher } from "../cache/hash.js";
import { TokenEncoder } from "../tokenize/encoder.js";
import { TokenSplicer, wholeText, type SplicerStats, type PromptTokens, type Rendered } from "../splice/splicer.js";
import type { CachedRender } from "../cache/store.js";
import { TemplateCache } from "./template-cache.js";
import { Framing } from "./osl.js";
import { checkLimit, countTextWithin, trimToFit, TrimMemo, type BudgetHost, type TrimOptions, type TrimResult } from "./budget.js";
import {
  checkPromptOptions,
  checkTrimOptions,
  resolveOptions,
  type DeltatokOptions,
  type MessageOptions,
  type PromptOptions,
  type ResolvedOptions,
  type RolloutOptions,
} from "./options.js";
import { pythonJsonParser } from "./json.js";
import { continueField, cutAtFinalMessage, markFinalMessage } from "./continue.js";
import { Vocabulary, type DecodeOptions, type TokenizerInfo } from "./vocabulary.js";
import type { Pipeline, Prepared } from "./pipeline.js";
import { buildRollout, readSampled, withoutSampled, type Rollout } from "./rollout.js";
import { CachedRolloutHost, WholeRolloutHost } from "./rollout-host.js";
import { ENCODE_WHOLE, STAGE_HOOKS, checkedIncrementalRender, hookRendered, hookTokenized, type StageHooks } from "./stages.js";
import { streamRuleFor } from "../tokenize/stream.js";
import {
  MessageCounter,
  openTextCounter,
  readCounterOptions,
  splitMessageCounterOptions,
  type MessageCounterOptions,
  type TextCounter,
  type TextCounterOptions,
} from "./stream.js";

/** Result of {@link Deltatok.tokenizePrompt}. */
export interface PromptResult {
  /** Number of tokens (ISL when add_generation_prompt is true). */
  count: number;
  /** Token ids, when asked for. */
  ids: Uint32Array | null;
  /** Tokens taken from the cache instead of being encoded. */
  reused: number;
  /** hit | partial | miss | fallback (see DESIGN.md). */
  outcome: PromptTokens["outcome"];
  /** Why a cached conversation could not be reused (outcome "fallback"). */
  reason?: PromptTokens["reason"];
}

export interface DeltatokStats extends SplicerStats {
  /** Milliseconds spent rendering templates. */
  renderMs: number;
  /** Milliseconds spent tokenizing (including cache work). */
  tokenizeMs: number;
  /**
   * Incremental rendering work (always present in Deltatok.stats(); optional for aggregators
   * built before it existed): units / iterations reused and executed, observations checked,
   * whole-value observations and fallbacks, and `trackingBudget`: incremental renders done
   * whole (fallback reason `tracking_budget`) because their tracking state would pass
   * `templateBudget.maxTrackBytes`.
   */
  render?: RenderWork;
  /**
   * Messages given as objects not seen before whose content was recognised as a message's read
   * before (render/messages.ts, MessageRecall): their snapshot and content version were reused.
   */
  messagesRecognised?: number;
}

function emptyWork(): RenderWork {
  return { unitsReused: 0, unitsExecuted: 0, iterationsReused: 0, iterationsExecuted: 0, checks: 0, wholeObservations: 0, fallbacks: 0, unchangedItems: 0, trackingBudget: 0 };
}

/** What encodes a tokenizer's text (Deltatok.tokenizerEngine). */
export type TokenizerEngineInfo = { readonly engine: "deltatok" } | { readonly engine: "fallback"; readonly unsupported: string };

/**
 * How `#tokenizeWith` tokenizes a prepared request; every public method that tokenizes a prompt
 * goes through it.
 */
interface TokenizeHow {
  /** Return the ids (else counts only). */
  readonly ids: boolean;
  /** Stop encoding once the count passes this (fits, trimToFit): null past it, nothing stored. */
  readonly limit?: number;
  /** trimToFit's reference cached render, whose text may end as this render does (TokenSplicer.tokenizeWithin). */
  readonly ref?: CachedRender | null;
  /** A render the caller made already (a trajectory's marked render), tokenized as a whole render. */
  readonly text?: string;
}

export class Deltatok {
  readonly #opts: ResolvedOptions;
  readonly #loaded: LoadedTokenizer;
  readonly #encoder: TokenEncoder;
  readonly #splicer: TokenSplicer;
  readonly #chains = new ChainHasher();
  /** The message lists read last: new message objects with their content are recognised (render/messages.ts). */
  readonly #recall = new MessageRecall();
  readonly #trims = new TrimMemo();
  /** Compiled templates by source (and compile failures), bounded. */
  readonly #templates: TemplateCache;
  /** OSL baselines and generation prompts per request key. */
  readonly #framing: Framing;
  readonly #parseJson: JsonParser = pythonJsonParser;
  #offsets: OffsetMapper | null = null;
  #special: Set<number> | null = null;
  #renderMs = 0;
  #tokenizeMs = 0;
  readonly #work: RenderWork = emptyWork();

  private constructor(opts: ResolvedOptions, loaded: LoadedTokenizer) {
    this.#opts = opts;
    this.#loaded = loaded;
    this.#encoder = new TokenEncoder(loaded);
    this.#splicer = new TokenSplicer(this.#encoder, { storeIds: opts.storeIds, maxBytes: opts.cacheBytes, splice: opts.incrementalSplice });
    this.#templates = new TemplateCache((source) => createRenderer(opts.renderer, source, opts.templateBudget));
    this.#framing = new Framing({
      readMessage: (m) => readMessage(m, "message", opts.maxPromptChars),
      prepare: (messages, p) => this.#prepare(messages, p, true),
      render: (prepared) => this.#render(prepared),
      countWhole: (text) => {
        const t0 = performance.now();
        try {
          return this.#encoder.encodeWhole(text).length;
        } finally {
          this.#tokenizeMs += performance.now() - t0;
        }
      },
    });
  }

  /** @internal The stage seam (api/stages.ts): triage observes each stage of a prompt request, tests make one wrong. */
  [STAGE_HOOKS]: StageHooks | null = null;

  /** @internal One encode of a render with this Deltatok's encoder, no cache (triage's "one encode"). */
  [ENCODE_WHOLE](text: string): Uint32Array {
    return Uint32Array.from(this.#encoder.encodeWhole(text));
  }

  /**
   * Loads the tokenizer and templates. Rejects with a coded DeltatokError.
   * @param internal `sharedTokenizer`: @internal tables shared by a pool's main thread
   *   (src/load/shared-core.ts), used instead of reading tokenizer.json.
   */
  static async create(options: DeltatokOptions = {}, internal: { sharedTokenizer?: SharedTokenizer } = {}): Promise<Deltatok> {
    try {
      const opts = resolveOptions(options, parseDate);
      await initHasher();
      const loadOpts: { chatTemplate?: string; chatTemplateFile?: string; pattern?: string; cacheDir?: string } = {};
      if (opts.pattern !== undefined) loadOpts.pattern = opts.pattern;
      if (opts.tokenizerCacheDir !== undefined) loadOpts.cacheDir = opts.tokenizerCacheDir;
      if (opts.chatTemplate !== undefined) loadOpts.chatTemplate = opts.chatTemplate;
      if (opts.chatTemplateFile !== undefined) loadOpts.chatTemplateFile = opts.chatTemplateFile;
      const loaded =
        internal.sharedTokenizer === undefined
          ? await loadTokenizer(opts.tokenizer, loadOpts)
          : await loadTokenizerWith(opts.tokenizer, loadOpts, undefined, internal.sharedTokenizer);
      const dt = new Deltatok(opts, loaded);
      dt.#compileDefault();
      return dt;
    } catch (e) {
      throw toDeltatokError(e);
    }
  }

  /**
   * Compiles the template a request without `chat_template` and without tools renders with (the
   * override, or the tokenizer's default), so a template that does not parse fails `create`
   * with DT_TEMPLATE_SYNTAX instead of every request. Templates chosen per request (by name,
   * as source, or `tool_use` for tools) compile on first use and fail that request only.
   */
  #compileDefault(): void {
    const { templates, templateSources } = this.#loaded;
    if (templates.size === 0) return; // countText still works; prompts fail DT_TEMPLATE_NOT_FOUND
    let source: string;
    try {
      source = selectTemplate(this.#loaded, { chatTemplate: undefined, hasTools: false });
    } catch {
      return; // several templates and no "default": each request names one
    }
    try {
      this.#templates.get(source);
    } catch (e) {
      const err = toDeltatokError(e);
      let name = "default";
      for (const [n, t] of templates) if (t === source) name = n;
      const where = shownFile(this.#loaded, templateSources.get(name) ?? name);
      throw new DeltatokError(err.code, `chat template ${where}: ${err.message}`, { cause: err });
    }
  }

  /** The resolved options. */
  get options(): ResolvedOptions {
    return this.#opts;
  }

  /** The loaded tokenizer (identity, files, templates). */
  get tokenizer(): LoadedTokenizer {
    return this.#loaded;
  }

  /**
   * What encodes text: `"deltatok"` (deltatok's own encoder), or `"fallback"` — the library's
   * stock pipeline, for a tokenizer.json using a component deltatok's encoder does not implement
   * (`unsupported` names it; the load warned with `DELTATOK_TOKENIZER_FALLBACK`).
   */
  get tokenizerEngine(): TokenizerEngineInfo {
    const t = this.#loaded.tokenizer;
    return t.engine === "deltatok" ? { engine: "deltatok" } : { engine: "fallback", unsupported: t.unsupported ?? "?" };
  }

  /** ISL: tokens of the rendered prompt (generation prompt included by default). */
  countPrompt(messages: readonly unknown[], options?: PromptOptions): number {
    return this.tokenizePrompt(messages, options, false).count;
  }

  /** Token ids of the rendered prompt. */
  encodePrompt(messages: readonly unknown[], options?: PromptOptions): Uint32Array {
    return this.tokenizePrompt(messages, options, true).ids as Uint32Array;
  }

  /** Count (and ids when `withIds`) of a prompt, with how the cache answered. */
  tokenizePrompt(messages: readonly unknown[], options?: PromptOptions, withIds = false): PromptResult {
    try {
      const p = checkPromptOptions(options, withIds ? "encodePrompt" : "countPrompt");
      return this.#tokenizeWith(this.#prepare(messages, p), { ids: withIds }) as PromptTokens;
    } catch (e) {
      throw toDeltatokError(e);
    }
  }

  /**
   * The one path from a prepared request to its tokens: full mode renders whole and encodes
   * once; incremental mode finds the cached conversation sharing the longest message prefix,
   * renders against its trace where it can (`#renderWith`) and splices its ids. The stage hooks
   * (api/stages.ts) see every render and every answer here. Null only with `how.limit`, past it.
   */
  #tokenizeWith(prepared: Prepared, how: TokenizeHow): PromptTokens | null {
    const hooks = this[STAGE_HOOKS];
    if (this.#opts.mode === "full") {
      let text = how.text ?? this.#render(prepared);
      if (hooks !== null) text = hookRendered(hooks, wholeText(text), false).segments.join("");
      const t0 = performance.now();
      try {
        if (how.limit === undefined) return hookTokenized(hooks, this.#splicer.tokenizeFull(text, how.ids));
        const n = countTextWithin(this.#encoder, text, how.limit);
        return n === null ? null : hookTokenized(hooks, { count: n, ids: null, reused: 0, outcome: "miss" });
      } finally {
        this.#tokenizeMs += performance.now() - t0;
      }
    }
    const chain = this.#chains.chain(prepared.key, prepared.messages);
    const found = this.#splicer.lookup(chain);
    const rendered =
      how.text === undefined
        ? this.#renderWith(prepared, found === undefined ? null : { trace: found.cached.trace, segments: found.cached.segments })
        : hookRendered(hooks, wholeText(how.text), false);
    const t0 = performance.now();
    try {
      const r = how.limit === undefined ? this.#splicer.tokenize(rendered, chain, how.ids, found) : this.#splicer.tokenizeWithin(rendered, chain, found, how.limit, how.ref ?? null);
      return r === null ? null : hookTokenized(hooks, r);
    } finally {
      this.#tokenizeMs += performance.now() - t0;
    }
  }

  /**
   * The render of a prepared prompt: incremental against `prev` (an earlier render of the same
   * template) where it can be, else whole; seen by the render hook.
   */
  #renderWith(prepared: Prepared, prev: PreviousRender | null): Rendered {
    // a continued final message is cut out of its render: rendered whole (its trace would not describe the text)
    const incremental = this.#opts.incrementalRender && prepared.renderer.renderIncremental !== undefined && prepared.final === null;
    const r = incremental ? this.#renderIncremental(prepared, prev) : wholeText(this.#render(prepared));
    return hookRendered(this[STAGE_HOOKS], r, incremental);
  }

  /**
   * Whether the prompt fits: exactly `countPrompt(messages, options) <= limit`, but encoding
   * stops once the count passes the limit (api/budget.ts). Incremental across turns like
   * countPrompt (a prompt that fits is cached as countPrompt caches it).
   */
  fits(messages: readonly unknown[], limit: number, options?: PromptOptions): boolean {
    try {
      const p = checkPromptOptions(options, "fits");
      return this.#within(this.#prepare(messages, p), checkLimit(limit), undefined) !== null;
    } catch (e) {
      throw toDeltatokError(e);
    }
  }

  /**
   * Drops the oldest turns until the prompt fits `limit` (policy and what is always kept:
   * api/budget.ts, README "Context budgets"): the kept messages (the caller's objects), their exact
   * count, and the indices dropped. DT_CONTEXT_TOO_SMALL when the pinned messages alone do not fit.
   */
  trimToFit(messages: readonly unknown[], limit: number, options?: TrimOptions): TrimResult {
    try {
      const t = checkTrimOptions(options);
      return trimToFit(this.#budgetHost(), messages, checkLimit(limit), t.prompt, t.policy, t.keepFirstUser);
    } catch (e) {
      throw toDeltatokError(e);
    }
  }

  #budgetHost(): BudgetHost {
    const limit = this.#opts.maxPromptChars;
    return {
      read: (messages, p) => {
        const versions: number[] = [];
        const read = readMessages(messages, { maxPromptChars: limit }, "messages", versions, undefined, this.#recall);
        const options = { ...p, tools: readTools(p.tools, limit), documents: readDocuments(p.documents, limit), chat_template_kwargs: readKwargs(p.chat_template_kwargs, limit) };
        return { messages: read, versions, options };
      },
      within: (messages, versions, p, max, ref) => this.#within(this.#prepare(messages, p, versions), max, ref),
      memo: this.#trims,
    };
  }

  /**
   * countPrompt of a prepared prompt when at most `limit`, else null (encoding stops past the
   * limit), with its cached render (`ref`: one such cached render, whose text may end as this one's).
   */
  #within(prepared: Prepared, limit: number, ref: unknown): { count: number; ref: unknown } | null {
    const r = this.#tokenizeWith(prepared, { ids: false, limit, ref: (ref ?? null) as CachedRender | null });
    if (r === null) return null;
    return { count: r.count, ref: this.#opts.mode === "full" ? null : (this.#splicer.last?.cached ?? null) };
  }

  /** The rendered prompt text, exactly as transformers' apply_chat_template renders it. */
  renderPrompt(messages: readonly unknown[], options?: PromptOptions): string {
    try {
      return this.#render(this.#prepare(messages, checkPromptOptions(options, "renderPrompt")));
    } catch (e) {
      throw toDeltatokError(e);
    }
  }

  /**
   * OSL of a structured assistant message: count(render([U, m])) − count(render([U, E])),
   * at least 0, with U an empty user message, E an empty assistant message, m's null content as
   * "", no tools and no generation prompt (MLCommons endpoints' definition; framing and the
   * end-of-turn token are not counted).
   */
  countMessage(message: unknown, options?: MessageOptions): number {
    try {
      const { text, baseline } = this.#framing.oslRender(message, checkPromptOptions(options, "countMessage"));
      const t0 = performance.now();
      const full = this.#encoder.encodeWhole(text).length;
      this.#tokenizeMs += performance.now() - t0;
      return Math.max(0, full - baseline);
    } catch (e) {
      throw toDeltatokError(e);
    }
  }

  /**
   * A counter for a text that arrives in chunks: `append(chunk)` returns the exact countText of
   * everything appended so far, re-encoding only the characters after the last safe cut
   * (tokenize/stream.ts; api/stream.ts has the options).
   */
  textCounter(options?: TextCounterOptions): TextCounter {
    try {
      return openTextCounter(this.#encoder, streamRuleFor(this.#loaded), readCounterOptions(options, this.#opts.maxPromptChars, "textCounter"));
    } catch (e) {
      throw toDeltatokError(e);
    }
  }

  /**
   * A counter for an assistant message that arrives as OpenAI-style deltas (content,
   * reasoning_content, tool_calls): `append(delta)` returns the exact countMessage of the
   * message so far (api/stream.ts).
   */
  messageCounter(options?: MessageCounterOptions): MessageCounter {
    try {
      const { counter, message } = splitMessageCounterOptions(options);
      const p = checkPromptOptions(message, "countMessage");
      if (p.parse_tool_arguments === true) {
        // a streamed tool call's arguments are a JSON text cut anywhere until the call ends: no
        // delta before its last could be rendered, so no count could be exact; refused at once
        // rather than failing (or dropping) every delta of a tool call
        throw new DeltatokError(
          "DT_INVALID_OPTION",
          "messageCounter does not take parse_tool_arguments: a streamed tool call's arguments are incomplete JSON until the call ends; stream without it, or count the finished message with countMessage(message, { parse_tool_arguments: true })",
          { path: "parse_tool_arguments" },
        );
      }
      const text = openTextCounter(this.#encoder, streamRuleFor(this.#loaded), readCounterOptions(counter, this.#opts.maxPromptChars, "messageCounter"));
      return new MessageCounter(text, (m) => this.#framing.oslRender(m, p));
    } catch (e) {
      throw toDeltatokError(e);
    }
  }

  /** Tokens of plain text (add_special_tokens=False). */
  countText(text: string): number {
    try {
      this.#checkText(text);
      const t0 = performance.now();
      const n = this.#encoder.encodeWhole(text).length;
      this.#tokenizeMs += performance.now() - t0;
      return n;
    } catch (e) {
      throw toDeltatokError(e);
    }
  }

  /**
   * Token ids of plain text; with `add_special_tokens` wrapped as a plain transformers `encode`
   * wraps them (api/vocabulary.ts). Default: no special tokens, as countText.
   */
  encodeText(text: string, options?: { add_special_tokens?: boolean }): Uint32Array {
    try {
      const add = readFlags(options, ["add_special_tokens"], "encodeText").add_special_tokens ?? false;
      this.#checkText(text);
      const t0 = performance.now();
      const ids = this.#encoder.encodeWhole(text);
      this.#tokenizeMs += performance.now() - t0;
      return Uint32Array.from(add ? this.#vocabulary().withSpecialTokens(ids) : ids);
    } catch (e) {
      throw toDeltatokError(e);
    }
  }

  /**
   * Token ids of many texts, in order: `encodeText` of each (one `add_special_tokens` for all).
   * Every text is checked before any is encoded; a bad one fails the call with its code and
   * `path` `texts[i]` (as the Rust binding's `encode_batch` fails whole). `onProgress(done,
   * total)` is called after each text. `DeltatokPool.encodeTexts` spreads a batch over workers.
   */
  encodeTexts(texts: readonly string[], options?: { add_special_tokens?: boolean; onProgress?: (done: number, total: number) => void }): Uint32Array[] {
    try {
      if (!Array.isArray(texts)) throw new DeltatokError("DT_INVALID_REQUEST", "texts must be an array of strings", { path: "texts" });
      const { onProgress, ...flags } = options ?? {};
      if (onProgress !== undefined && typeof onProgress !== "function") throw new DeltatokError("DT_INVALID_OPTION", "encodeTexts: onProgress must be a function", { path: "onProgress" });
      const add = readFlags(options === undefined ? undefined : flags, ["add_special_tokens"], "encodeTexts").add_special_tokens ?? false;
      for (let i = 0; i < texts.length; i++) {
        try {
          this.#checkText(texts[i]);
        } catch (e) {
          const d = toDeltatokError(e);
          throw new DeltatokError(d.code, `texts[${i}]: ${d.message}`, { path: `texts[${i}]` });
        }
      }
      const t0 = performance.now();
      const out = new Array<Uint32Array>(texts.length);
      for (let i = 0; i < texts.length; i++) {
        const ids = this.#encoder.encodeWhole(texts[i] as string);
        out[i] = Uint32Array.from(add ? this.#vocabulary().withSpecialTokens(ids) : ids);
        onProgress?.(i + 1, texts.length);
      }
      this.#tokenizeMs += performance.now() - t0;
      return out;
    } catch (e) {
      throw toDeltatokError(e);
    }
  }

  /** Text of token ids, as transformers' `decode` (api/vocabulary.ts). */
  decode(ids: ArrayLike<number>, options?: DecodeOptions): string {
    try {
      const o = readFlags(options, ["skip_special_tokens", "clean_up_tokenization_spaces"], "decode");
      return this.#vocabulary().decode(idList(ids, this.#opts.maxPromptChars), o);
    } catch (e) {
      throw toDeltatokError(e);
    }
  }

  /** Token strings of ids (null for an id no token has), as transformers' `convert_ids_to_tokens`. */
  idsToTokens(ids: ArrayLike<number>, options?: { skip_special_tokens?: boolean }): Array<string | null> {
    try {
      const skip = readFlags(options, ["skip_special_tokens"], "idsToTokens").skip_special_tokens ?? false;
      return this.#vocabulary().idsToTokens(idList(ids, this.#opts.maxPromptChars), skip);
    } catch (e) {
      throw toDeltatokError(e);
    }
  }

  /** Ids of token strings (null for a token not in the vocabulary). */
  tokensToIds(tokens: readonly string[]): Array<number | null> {
    try {
      if (!Array.isArray(tokens)) throw new DeltatokError("DT_INVALID_REQUEST", "tokens must be a list of strings", { path: "tokens" });
      return this.#vocabulary().tokensToIds(tokens);
    } catch (e) {
      throw toDeltatokError(e);
    }
  }

  /** Every token by id (null where no token has the id). */
  tokenList(): Array<string | null> {
    return this.#vocabulary().tokenList();
  }

  /** What transformers exposes about the tokenizer: vocab_size, len, special tokens, ... */
  tokenizerInfo(): TokenizerInfo {
    return this.#vocabulary().info();
  }

  #vocab: Vocabulary | null = null;
  #vocabulary(): Vocabulary {
    this.#vocab ??= new Vocabulary(this.#loaded);
    return this.#vocab;
  }

  /** The checks countText makes on its text (type, surrogates, size). */
  #checkText(text: unknown): void {
    if (typeof text !== "string") throw new DeltatokError("DT_INVALID_REQUEST", `text must be a string, got ${typeof text}`, { path: "text" });
    if (!text.isWellFormed()) throw new DeltatokError("DT_LONE_SURROGATE", "text contains a lone UTF-16 surrogate", { path: "text" });
    if (text.length > this.#opts.maxPromptChars) {
      throw new DeltatokError("DT_INPUT_TOO_LARGE", `text is longer than ${this.#opts.maxPromptChars} characters`, { path: "text" });
    }
  }

  /**
   * A whole trajectory for RL: token ids, each message's token span, and the assistant mask
   * (see api/trajectory.ts for exactly which tokens count). `add_generation_prompt` defaults to
   * false here (a finished trajectory). Ids come through the splicer, so a growing
   * trajectory reuses its prefix. Needs the python renderer.
   */
  tokenizeTrajectory(messages: readonly unknown[], options?: PromptOptions): Trajectory {
    try {
      const p = checkPromptOptions(options, "tokenizeTrajectory");
      if (p.continue_final_message !== undefined && p.continue_final_message !== false) {
        // transformers: continue_final_message is not compatible with return_assistant_tokens_mask
        throw new DeltatokError("DT_INVALID_OPTION", "continue_final_message is not compatible with trajectories (assistant masks)", {
          path: "continue_final_message",
        });
      }
      const prepared = this.#prepare(messages, { ...p, add_generation_prompt: p.add_generation_prompt ?? false });
      const snaps = prepared.messages;
      const renderer = prepared.renderer;
      if (renderer.renderMarked === undefined) {
        throw new DeltatokError("DT_INVALID_OPTION", `trajectory tokenization needs the python renderer (this Deltatok uses ${renderer.kind})`, {
          path: "options.renderer",
        });
      }
      const t0 = performance.now();
      let marked: MarkedRender;
      try {
        marked = renderer.renderMarked(prepared.vars, prepared.now);
      } finally {
        this.#renderMs += performance.now() - t0;
      }
      const ids = (this.#tokenizeWith(prepared, { ids: true, text: marked.text }) as PromptTokens).ids as Uint32Array;
      this.#offsets ??= new OffsetMapper(this.#loaded);
      const off = this.#offsets.offsets(marked.text, ids);
      this.#special ??= new Set(this.#loaded.tokenizerJson.added_tokens.filter((t) => t.special === true).map((t) => t.id));
      const special = this.#special;
      return assembleTrajectory({
        text: marked.text,
        ids,
        starts: off.starts,
        ends: off.ends,
        offsetsExact: off.exact,
        messageStarts: marked.messageStarts,
        roles: snaps.map((m) => String((m as { role?: unknown }).role ?? "")),
        generation: marked.generation,
        templateHasGeneration: /\{%[-+]?\s*generation\b/.test(renderer.source),
        generationPrompt: this.#framing.generationPrompt(p),
        promptTails: this.#promptTails(snaps, p, marked.messageStarts),
        endsWithGenerationPrompt: p.add_generation_prompt === true,
        isSpecial: (id) => special.has(id),
      });
    } catch (e) {
      throw toDeltatokError(e);
    }
  }

  /**
   * For each rendered assistant message i: the prompt of request i (messages[:i] with the
   * generation prompt) past its last message iteration — the framing the model was given before
   * it produced message i. undefined where that prompt cannot be rendered.
   */
  #promptTails(messages: readonly unknown[], p: PromptOptions, starts: readonly number[]): Array<string | undefined> {
    const tails = new Array<string | undefined>(messages.length);
    for (let i = 1; i < messages.length; i++) {
      if ((messages[i] as { role?: unknown }).role !== "assistant" || (starts[i] as number) < 0) continue;
      try {
        const prepared = this.#prepare(messages.slice(0, i), { ...p, add_generation_prompt: true }, true);
        const r = (prepared.renderer.renderMarked as NonNullable<ChatRenderer["renderMarked"]>).call(prepared.renderer, prepared.vars, prepared.now);
        const last = Math.max(0, ...r.messageEnds);
        tails[i] = r.text.slice(last);
      } catch {
        // this prefix alone does not render (e.g. a template that requires a user turn last):
        // the template's generation prompt stands in
      }
    }
    return tails;
  }

  /**
   * An RL rollout: the training sequences of a multi-turn conversation whose assistant messages
   * may carry the ids the server sampled (`sampled_ids`, `sampled_logprobs`), split where the
   * template rewrites history, with drift between sampled and canonical ids (api/rollout.ts has
   * the definitions). Costs what each turn appended, as countPrompt does.
   */
  tokenizeRollout(messages: readonly unknown[], options?: RolloutOptions): Rollout {
    try {
      const p = checkPromptOptions(options, "tokenizeRollout");
      // read once (snapshots); each turn then slices the same copies without the sampled fields
      const limits = { maxPromptChars: this.#opts.maxPromptChars };
      const read = readMessages(messages, limits, "messages", undefined, undefined, this.#recall);
      const sampled = readSampled(read, this.#inVocabulary());
      // the copies without sampled fields, read once more for their content versions: every
      // turn then renders slices of the same objects without validating them again
      const versions: number[] = [];
      const plain = readMessages(withoutSampled(read, sampled), limits, "messages", versions, undefined, this.#recall);
      const assistant: number[] = [];
      for (let i = 0; i < plain.length; i++) if ((plain[i] as { role?: unknown }).role === "assistant") assistant.push(i);
      const pipe = this.#pipeline();
      // the options' data read once too
      const limit = this.#opts.maxPromptChars;
      const o: PromptOptions = { ...p, tools: readTools(p.tools, limit), documents: readDocuments(p.documents, limit), chat_template_kwargs: readKwargs(p.chat_template_kwargs, limit) };
      const host = pipe.reusesIds ? new CachedRolloutHost(pipe, plain, o, versions) : new WholeRolloutHost(pipe, plain, o, versions);
      return buildRollout(host, assistant, sampled);
    } catch (e) {
      throw toDeltatokError(e);
    }
  }

  /** Whether an id is a token of the tokenizer (vocabulary or added token). */
  #inVocabulary(): (id: number) => boolean {
    const tok = this.#loaded.tokenizer;
    return (id) => tok.hasId(id);
  }

  /** The pipeline's steps for api/ modules (rollouts). */
  #pipeline(): Pipeline {
    const reusesIds = this.#opts.mode === "incremental" && this.#opts.storeIds;
    return {
      reusesIds,
      splicer: this.#splicer,
      encoder: this.#encoder,
      prepare: (messages, p, versions) => this.#prepare(messages, p, versions ?? false),
      tokenizeCached: (prepared, withIds) => this.#tokenizeWith(prepared, { ids: withIds }) as PromptTokens,
      render: (prepared) => this.#render(prepared),
      renderMarked: (prepared) => {
        const renderer = prepared.renderer;
        if (renderer.renderMarked === undefined) {
          throw new DeltatokError("DT_INVALID_OPTION", `this needs the python renderer (this Deltatok uses ${renderer.kind})`, { path: "options.renderer" });
        }
        const t0 = performance.now();
        try {
          return renderer.renderMarked(prepared.vars, prepared.now);
        } finally {
          this.#renderMs += performance.now() - t0;
        }
      },
      renderAgainst: (prepared, prev: PreviousRender | null) => this.#renderWith(prepared, prev),
      chain: (key, messages) => this.#chains.chain(key, messages),
      generationPrompt: (p) => this.#framing.generationPrompt(p),
      decode: (ids) => this.#loaded.tokenizer.decode(Array.from(ids)),
      inVocabulary: this.#inVocabulary(),
      chargeTokenize: (ms) => {
        this.#tokenizeMs += ms;
      },
    };
  }

  /** Cache and work counters. */
  stats(): DeltatokStats {
    return { ...this.#splicer.stats(), renderMs: this.#renderMs, tokenizeMs: this.#tokenizeMs, render: { ...this.#work }, messagesRecognised: this.#recall.recognised };
  }

  /** Drops every cached conversation. */
  clearCache(): void {
    this.#splicer.clear();
  }

  /**
   * Validates the request, selects and compiles the template, builds its variables and key.
   * Validation reads the caller's values once and the render uses what it read (snapshots).
   * `snapshots`: false to read `messages` (validating them), true when they are snapshots read
   * already (versions unknown), or their content versions when the caller read them itself —
   * and then the options' tools, documents and kwargs are snapshots read already too.
   */
  #prepare(messages: readonly unknown[], p: PromptOptions, snapshots: boolean | readonly number[] = false): Prepared {
    const limit = this.#opts.maxPromptChars;
    let versions: number[] = [];
    const snap = snapshots === false ? readMessages(messages, { maxPromptChars: limit }, "messages", versions, undefined, this.#recall) : messages;
    if (snapshots === true) for (let i = 0; i < snap.length; i++) versions.push(-1);
    else if (snapshots !== false) versions = snapshots.slice(0, snap.length);
    const read = Array.isArray(snapshots);
    const tools = read ? ((p.tools ?? null) as unknown[] | null) : readTools(p.tools, limit);
    const documents = read ? ((p.documents ?? null) as unknown[] | null) : readDocuments(p.documents, limit);
    const kwargs = read ? ((p.chat_template_kwargs ?? null) as Record<string, unknown> | null) : readKwargs(p.chat_template_kwargs, limit);
    if (kwargs !== null) {
      for (const k of RESERVED_TEMPLATE_KEYS) {
        if (Object.hasOwn(kwargs, k)) {
          throw new DeltatokError("DT_INVALID_KWARGS", `chat_template_kwargs may not set "${k}" (apply_chat_template passes it itself)`, {
            path: `chat_template_kwargs.${k}`,
          });
        }
      }
    }
    const cfm = p.continue_final_message ?? false;
    const agp = p.add_generation_prompt ?? cfm === false;
    const pta = p.parse_tool_arguments ?? false;
    const explicit = p.chat_template ?? undefined;
    if (explicit !== undefined && explicit.length > limit) {
      throw new DeltatokError("DT_INPUT_TOO_LARGE", `chat_template is longer than ${limit} characters`, { path: "chat_template" });
    }
    const source = selectTemplate(this.#loaded, { chatTemplate: explicit, hasTools: tools !== null });
    let renderer: ChatRenderer;
    try {
      renderer = this.#templates.get(source);
    } catch (e) {
      const err = toDeltatokError(e);
      if (explicit === undefined || err.path !== undefined) throw err;
      throw new DeltatokError(err.code, `chat_template: ${err.message}`, { path: "chat_template", cause: err });
    }
    let msgs = pta ? parseToolArguments(snap, this.#parseJson) : snap;
    let final: string | null = null;
    if (cfm !== false) {
      const marked = markFinalMessage(msgs, continueField(cfm), source);
      msgs = marked.messages;
      final = marked.final;
    }
    // a copy made by parse_tool_arguments (or the continued final message) is not the object validated
    if (msgs !== snap) for (let i = 0; i < msgs.length; i++) if (msgs[i] !== snap[i]) versions[i] = -1;
    const now = this.#opts.date ?? naiveNow();
    const vars = templateVariables({ messages: msgs, tools, documents, add_generation_prompt: agp, chat_template_kwargs: kwargs }, this.#loaded.specialTokens);
    const dateKey = renderer.readsClock ? (this.#opts.dateKey ?? now.toISOString().slice(0, 10)) : "";
    const key = this.#chains.key([
      this.#loaded.id,
      this.#loaded.specialTokens,
      source,
      tools,
      documents,
      kwargs,
      agp ? "g1" : "g0",
      pta ? "p1" : "p0",
      dateKey,
      ...(cfm === false ? [] : [`c:${continueField(cfm)}`]),
    ]);
    return { renderer, vars, now, key, versions, messages: snap, final };
  }

  #render(p: Prepared): string {
    const t0 = performance.now();
    let text: string;
    try {
      text = p.renderer.render(p.vars, p.now).text;
      if (p.final !== null) text = cutAtFinalMessage(text, p.final, p.messages.length - 1);
    } finally {
      this.#renderMs += performance.now() - t0;
    }
    if (text.length > this.#opts.maxPromptChars * 4) {
      throw new DeltatokError("DT_INPUT_TOO_LARGE", `rendered prompt is ${text.length} characters, over 4 × maxPromptChars`);
    }
    return text;
  }

  /** Renders reusing `prev`, any earlier render of the same template (replay checks every observation). */
  #renderIncremental(p: Prepared, prev: PreviousRender | null): Rendered {
    const t0 = performance.now();
    let r;
    try {
      const hints = { messageVersions: p.versions };
      r = this.#opts.checkIncrementalRender
        ? checkedIncrementalRender(p.renderer, p.vars, p.now, prev, hints)
        : (p.renderer.renderIncremental as NonNullable<ChatRenderer["renderIncremental"]>).call(p.renderer, p.vars, p.now, prev, hints);
    } finally {
      this.#renderMs += performance.now() - t0;
    }
    const w = this.#work;
    w.unitsReused += r.work.unitsReused;
    w.unitsExecuted += r.work.unitsExecuted;
    w.iterationsReused += r.work.iterationsReused;
    w.iterationsExecuted += r.work.iterationsExecuted;
    w.checks += r.work.checks;
    w.wholeObservations += r.work.wholeObservations;
    w.fallbacks += r.work.fallbacks;
    w.unchangedItems += r.work.unchangedItems;
    w.trackingBudget += r.work.trackingBudget;
    let length = 0;
    for (const s of r.segments) length += s.length;
    if (length > this.#opts.maxPromptChars * 4) {
      throw new DeltatokError("DT_INPUT_TOO_LARGE", `rendered prompt is ${length} characters, over 4 × maxPromptChars`);
    }
    return { segments: r.segments, reusedSegments: r.reusedSegments, trace: r.trace, traceBytes: r.traceBytes };
  }

}

/** Boolean options of the small methods (decode, encodeText): read once, unknown ones refused. */
function readFlags<K extends string>(o: unknown, keys: readonly K[], method: string): Partial<Record<K, boolean>> {
  if (o === undefined) return {};
  if (typeof o !== "object" || o === null || Array.isArray(o)) {
    throw new DeltatokError("DT_INVALID_OPTION", `the options of ${method} must be an object`);
  }
  const out: Partial<Record<K, boolean>> = {};
  for (const k of Object.keys(o)) {
    if (!(keys as readonly string[]).includes(k)) {
      throw new DeltatokError("DT_INVALID_OPTION", `unknown option of ${method}: "${k}"; its options are ${keys.join(", ")}`, { path: k });
    }
    const v = (o as Record<string, unknown>)[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== "boolean") throw new DeltatokError("DT_INVALID_OPTION", `${k} must be a boolean`, { path: k });
    out[k as K] = v;
  }
  return out;
}

/** Token ids as a plain list, checked for size (each id is checked where it is used). */
function idList(ids: ArrayLike<number>, max: number): number[] {
  if (ids === null || typeof ids !== "object" || typeof (ids as { length?: unknown }).length !== "number") {
    throw new DeltatokError("DT_INVALID_REQUEST", "ids must be a list of token ids", { path: "ids" });
  }
  if (ids.length > max) throw new DeltatokError("DT_INPUT_TOO_LARGE", `more than ${max} ids`, { path: "ids" });
  return Array.from(ids);
}
