/**
 * Trajectory tokenization for RL: token ids, which tokens belong to which message, and which
 * tokens the model produced (the assistant mask).
 *
 * Spans. The renderer reports where the template started rendering each message (the output
 * offset when its message loop began the iteration for that message). In token terms a message
 * starts at the token holding that character (a token that straddles the boundary belongs to
 * the later message), and ends where the next rendered message starts. So spans tile the ids
 * exactly: `prefix` = [0, first message start) holds what the template renders before the first
 * message it iterates (a system prompt or tool list it renders outside its loop, BOS), each
 * message's span follows, and `suffix` = [last message end, count) holds the generation prompt.
 * A message the template never iterated (e.g. a system message folded into the header) gets an
 * empty span at the point where the next message starts.
 *
 * Assistant mask. With `{% generation %}` in the template, exactly as transformers'
 * `return_assistant_tokens_mask`: for each generation span [a, b) of characters, the tokens from
 * the one holding character a to the one holding character b−1. Without it, from the spans of
 * assistant messages: the tokens after the assistant header — the longest start of the span that
 * is also a start of what that request's prompt held after its last message (the tail of
 * render(messages[:i], add_generation_prompt=True), e.g. `<|im_start|>assistant` + newline, or
 * DeepSeek's `<｜tool▁outputs▁end｜>` after tool results) or of the template's generation prompt
 * (role markers are never model output) — through
 * the last special token of the span (the end-of-turn token, e.g. `<|im_end|>`, which the model
 * produces); the template's line break after it is not masked. Content, reasoning and tool calls
 * the template renders inside the assistant turn are masked.
 */

export interface MessageSpan {
  /** Index of the message in the request's messages. */
  message: number;
  role: string;
  /** Token span [start, end). */
  start: number;
  end: number;
}

export interface Trajectory {
  ids: Uint32Array;
  count: number;
  /** [0, start of the first message). */
  prefix: [number, number];
  /** One per message, in message order. */
  spans: MessageSpan[];
  /** [end of the last rendered message, count): the generation prompt, if any. */
  suffix: [number, number];
  /** 1 for tokens the model produced. */
  assistantMask: Uint8Array;
  maskSource: "generation" | "assistant-spans";
  /** False when some token offsets had to be approximated (see tokenize/offsets.ts). */
  offsetsExact: boolean;
}

export interface TrajectoryInputs {
  text: string;
  ids: Uint32Array;
  /** Token [start, end) UTF-16 offsets into text. */
  starts: Uint32Array;
  ends: Uint32Array;
  offsetsExact: boolean;
  /** Per message index: the UTF-16 offset where the template began rendering it, or -1. */
  messageStarts: readonly number[];
  roles: readonly string[];
  /** {% generation %} spans (UTF-16 [start, end)), empty when the template has none. */
  generation: ReadonlyArray<readonly [number, number]>;
  /** Whether the template contains {% generation %} at all. */
  templateHasGeneration: boolean;
  /** The template's generation prompt text (what add_generation_prompt appends). */
  generationPrompt: string;
  /**
   * Per message index (assistant messages): the text its request's prompt had after its last
   * message (render(messages[:i], add_generation_prompt=True) past the last message
   * iteration) — what the model was given, not what it produced. Falls back to
   * `generationPrompt` where absent.
   */
  promptTails?: ReadonlyArray<string | undefined>;
  /** Whether this render ends with the generation prompt (add_generation_prompt was true). */
  endsWithGenerationPrompt: boolean;
  /** Whether a token is a special added token (end-of-turn candidates). */
  isSpecial: (id: number) => boolean;
}

/**
 * transformers' `char_to_token`: the first token whose [start, end) holds UTF-16 offset `c`
 * (several byte-level tokens can share one character); when none does (c falls on text no token
 * covers), the first token starting after c.
 */
export function charToToken(ends: Uint32Array, c: number): number {
  // first token ending after c
  let lo = 0;
  let hi = ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((ends[mid] as number) <= c) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Length of the longest start of `text[from:]` that is also a start of `head`. */
function sharedStart(text: string, from: number, head: string): number {
  let h = 0;
  while (h < head.length && from + h < text.length && head.charCodeAt(h) === text.charCodeAt(from + h)) h++;
  return h;
}

/** Token index where a message starting at character offset c begins. */
function tokenAt(inp: TrajectoryInputs, c: number): number {
  if (c >= inp.text.length) return inp.ids.length;
  return charToToken(inp.ends, c);
}

export function assembleTrajectory(inp: TrajectoryInputs): Trajectory {
  const count = inp.ids.length;
  const n = inp.messageStarts.length;
  // the generation prompt, when appended, is the suffix
  let suffixStart = count;
  const g = inp.generationPrompt;
  if (inp.endsWithGenerationPrompt && g.length > 0 && inp.text.endsWith(g)) suffixStart = tokenAt(inp, inp.text.length - g.length);
  // rendered messages in output order; each runs to the next one's start
  const rendered = [...Array(n).keys()].filter((i) => (inp.messageStarts[i] as number) >= 0);
  rendered.sort((a, b) => (inp.messageStarts[a] as number) - (inp.messageStarts[b] as number) || a - b);
  const spans: MessageSpan[] = new Array<MessageSpan>(n);
  for (let k = 0; k < rendered.length; k++) {
    const i = rendered[k] as number;
    const start = Math.min(tokenAt(inp, inp.messageStarts[i] as number), suffixStart);
    const nextStart = k + 1 < rendered.length ? tokenAt(inp, inp.messageStarts[rendered[k + 1] as number] as number) : suffixStart;
    spans[i] = { message: i, role: inp.roles[i] ?? "", start, end: Math.max(start, Math.min(nextStart, suffixStart)) };
  }
  // a message never rendered: an empty span where the next message (by index) starts
  let at = suffixStart;
  for (let i = n - 1; i >= 0; i--) {
    const sp = spans[i];
    if (sp !== undefined) at = sp.start;
    else spans[i] = { message: i, role: inp.roles[i] ?? "", start: at, end: at };
  }
  const first = rendered.length === 0 ? suffixStart : Math.min(...rendered.map((i) => (spans[i] as MessageSpan).start));
  const prefix: [number, number] = [0, first];
  const suffix: [number, number] = [suffixStart, count];

  const mask = new Uint8Array(count);
  let maskSource: Trajectory["maskSource"];
  if (inp.templateHasGeneration) {
    maskSource = "generation";
    for (const [a, b] of inp.generation) {
      if (b <= a) continue;
      const s = charToToken(inp.ends, a);
      const e = charToToken(inp.ends, b - 1);
      for (let t = s; t <= e; t++) mask[t] = 1;
    }
  } else {
    maskSource = "assistant-spans";
    for (const sp of spans) {
      if (sp.role !== "assistant" || sp.end <= sp.start) continue;
      // header: the longest start of the span's text that is also a start of what the request's
      // prompt already held after its last message (else the template's generation prompt)
      // (or, where the template's history and prompt formats disagree, of its generation prompt)
      const from = inp.starts[sp.start] as number;
      const h = Math.max(sharedStart(inp.text, from, inp.promptTails?.[sp.message] ?? ""), sharedStart(inp.text, from, g));
      let firstTok = sp.start;
      while (firstTok < sp.end && (inp.ends[firstTok] as number) <= from + h) firstTok++;
      // through the last special token of the span (the end-of-turn token)
      let last = sp.end - 1;
      while (last >= firstTok && !inp.isSpecial(inp.ids[last] as number)) last--;
      if (last < firstTok) last = sp.end - 1;
      for (let t = firstTok; t <= last; t++) mask[t] = 1;
    }
  }
  return { ids: inp.ids, count, prefix, spans, suffix, assistantMask: mask, maskSource, offsetsExact: inp.offsetsExact };
}

/** Token ranges [start, end) where the mask is 1. */
export function maskRanges(mask: Uint8Array): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let run = -1;
  for (let i = 0; i <= mask.length; i++) {
    if (i < mask.length && mask[i] === 1) {
      if (run < 0) run = i;
    } else if (run >= 0) {
      out.push([run, i]);
      run = -1;
    }
  }
  return out;
}

/** JSON form of a trajectory (the sidecar answers the same shape). */
export function trajectoryJson(t: Trajectory): Record<string, unknown> {
  return {
    count: t.count,
    ids: Array.from(t.ids),
    prefix: t.prefix,
    spans: t.spans,
    suffix: t.suffix,
    assistant_mask: maskRanges(t.assistantMask),
    mask_source: t.maskSource,
    offsets_exact: t.offsetsExact,
  };
}

