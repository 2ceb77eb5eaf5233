/**
 * The estimated cost of replaying one corpus line, known before it runs: the offline scheduler
 * (src/pool/schedule.ts) starts the costliest conversations first by it. One structural skim of
 * the line (src/json/skim.ts: no values built, no line kept), a few counts, a linear model.
 *
 * What a worker does for a line is parse it, then for each assistant message (a request) count
 * the prompt before it — incrementally, so the new messages are rendered and tokenized and the
 * history is revalidated message by message — and count the message itself. Hence the terms:
 * a constant per request, per byte of the messages (parse, tokenize the appended text), per byte
 * of assistant messages (rendered and tokenized a second time, standalone, for the output
 * count), per byte of tool results (more tokens a byte than prose), and per message of history per request (the incremental render's validation pass over
 * the conversation so far: Σ over requests of the messages before it). The coefficients were
 * fitted on measured costs (`npm run bench -- --suite schedule --fit …`, bench/cost-model.ts);
 * only their ratios matter to the scheduler.
 *
 * A line the skim cannot follow (not a JSON object with a `messages` array) is estimated by its
 * bytes alone; the line then fails when parsed, which is cheap, and an estimate decides only the
 * order of work, never a result.
 */
import { eachElement, eachMember } from "../json/skim.js";

/** What the estimate is computed from. */
export interface LineFeatures {
  /** Assistant messages (one request each). */
  requests: number;
  /** UTF-16 code units of the `messages` array's elements (their JSON text). */
  messageChars: number;
  /** Of those, the assistant messages'. */
  assistantChars: number;
  /** Of those, the tool results' (role "tool": code, JSON, logs — more tokens a character). */
  toolChars: number;
  /** Σ over requests of the messages before it. */
  historyMessages: number;
}

/**
 * Coefficients, in CPU ms on the machine that fitted them (a shared 2-CPU VM, qwen3 template and
 * tokenizer; the least of 5 passes per conversation, bench/data/schedule-costs.json), fitted on
 * tau-bench-airline-gpt-4o and minisweagent-gemini-3-pro-swebench-verified-top50 (250
 * conversations) and checked on the other shared corpora (bench/README.md, "Scheduling").
 */
export const COST_MODEL: Readonly<{ perRequest: number; perChar: number; perAssistantChar: number; perToolChar: number; perHistoryMessage: number }> = Object.freeze({
  perRequest: 8.181e-2,
  perChar: 8.661e-5,
  perAssistantChar: 8.474e-4,
  perToolChar: 2.677e-4,
  perHistoryMessage: 4.488e-3,
});

const enum Role {
  Other,
  Assistant,
  Tool,
}

function roleOf(s: string, a: number): Role {
  let role = Role.Other;
  eachMember(s, a, (m) => {
    if (m.key !== "role") return true;
    // the role as JSON text; an escaped spelling is not worth decoding here
    if (m.end - m.start === 11 && s.startsWith('"assistant"', m.start)) role = Role.Assistant;
    else if (m.end - m.start === 6 && s.startsWith('"tool"', m.start)) role = Role.Tool;
    return false;
  });
  return role;
}

/** The counts of a corpus line (`{"id"?, "messages": [...], "tools"?, ...}`), or null. */
export function lineFeatures(text: string): LineFeatures | null {
  let f: LineFeatures | null = null;
  const ok = eachMember(text, 0, (m) => {
    if (m.key !== "messages") return true;
    const g: LineFeatures = { requests: 0, messageChars: 0, assistantChars: 0, toolChars: 0, historyMessages: 0 };
    let before = 0;
    const fine = eachElement(text, m.start, (a, b) => {
      const role = roleOf(text, a);
      if (role === Role.Assistant) {
        g.requests++;
        g.assistantChars += b - a;
        g.historyMessages += before;
      } else if (role === Role.Tool) g.toolChars += b - a;
      g.messageChars += b - a;
      before++;
      return true;
    });
    if (fine) f = g;
    return false;
  });
  return ok ? f : null;
}

/** The estimate from counts, in the model's unit (CPU ms where it was fitted). */
export function costOf(f: LineFeatures, model = COST_MODEL): number {
  return (
    model.perRequest * f.requests +
    model.perChar * f.messageChars +
    model.perAssistantChar * f.assistantChars +
    model.perToolChar * f.toolChars +
    model.perHistoryMessage * f.historyMessages
  );
}

/** The estimated cost of a corpus line; by its length alone when the skim cannot follow it. */
export function estimateLineCost(text: string, model = COST_MODEL): number {
  const f = lineFeatures(text);
  return f === null ? model.perChar * text.length : costOf(f, model);
}
