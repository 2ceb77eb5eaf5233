/**
 * `deltatok check-template [--tokenizer T] [--template F] [corpus.jsonl]`: does a chat template
 * keep the token prefix across the turns of an agentic conversation? Built-in probe
 * conversations append, after an assistant turn, a user turn or a tool result, with and without
 * reasoning in the assistant turn, and after a tool result an assistant turn; each probe asks
 * whether the training sequence so far (prompt + canonical completion, api/rollout.ts) is a token
 * prefix of the next request's prompt and, where not, why and at which token. It also says
 * whether the generation prompt survives into the next prompt (the template renders the turn
 * the model completed as a continuation of its generation prompt).
 *
 * Tool-call arguments are tried as objects, then as JSON strings (templates want one or the
 * other). With a corpus, the split counts of rolling it out are added.
 */
import { DeltatokError, toDeltatokError } from "../errors.js";
import type { Deltatok } from "../api/deltatok.js";
import type { Rollout } from "../api/rollout.js";
import type { RolloutSummary } from "./rollout.js";

type Msg = Record<string, unknown>;

export interface ProbeResult {
  probe: string;
  /** The sequence through the probed completion is a token prefix of the next prompt. */
  keepsPrefix: boolean | null;
  reason?: string;
  /** Token where they first differ, and the decoded context on both sides. */
  at?: number;
  context?: { sequence: string; prompt: string };
  /** The template could not render the probe (its coded error). */
  error?: { code: string; message: string };
}

export interface TemplateCheck {
  tokenizer: string;
  template: string;
  probes: ProbeResult[];
  /** Whether the completed turn continues the generation prompt's text in every probe that rendered. */
  generationPromptKept: boolean | null;
  corpus?: RolloutSummary;
}

const WEATHER = { location: "Paris", unit: "celsius" };

function toolCall(stringArgs: boolean): Msg {
  return { id: "call_0001a", type: "function", function: { name: "get_weather", arguments: stringArgs ? JSON.stringify(WEATHER) : WEATHER } };
}

const TOOLS = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather for a location",
      parameters: { type: "object", properties: { location: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } }, required: ["location"] },
    },
  },
];

interface Probe {
  name: string;
  /** The conversation; the probed transition is from the assistant message at `from` to the next assistant message. */
  messages(stringArgs: boolean): Msg[];
  tools: boolean;
}

const SYSTEM: Msg = { role: "system", content: "You are a helpful assistant." };

const PROBES: Probe[] = [
  {
    name: "user turn after an assistant turn",
    tools: false,
    messages: () => [SYSTEM, { role: "user", content: "Hi! What can you do?" }, { role: "assistant", content: "I can help with many things." }, { role: "user", content: "Tell me a joke." }, { role: "assistant", content: "Why did the chicken cross the road?" }],
  },
  {
    name: "user turn after an assistant turn with reasoning",
    tools: false,
    messages: () => [
      SYSTEM,
      { role: "user", content: "What is 17 * 3?" },
      { role: "assistant", content: "51.", reasoning_content: "17 * 3 = 51." },
      { role: "user", content: "And 18 * 3?" },
      { role: "assistant", content: "54.", reasoning_content: "18 * 3 = 54." },
    ],
  },
  {
    name: "tool result after a tool call",
    tools: true,
    messages: (s) => [
      SYSTEM,
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: "", tool_calls: [toolCall(s)] },
      { role: "tool", tool_call_id: "call_0001a", name: "get_weather", content: '{"temperature": 18}' },
      { role: "assistant", content: "It is 18 degrees in Paris." },
    ],
  },
  {
    name: "tool result after a tool call with reasoning",
    tools: true,
    messages: (s) => [
      SYSTEM,
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: "", reasoning_content: "I should call the weather tool.", tool_calls: [toolCall(s)] },
      { role: "tool", tool_call_id: "call_0001a", name: "get_weather", content: '{"temperature": 18}' },
      { role: "assistant", content: "It is 18 degrees in Paris." },
    ],
  },
  {
    name: "user turn after a tool-using exchange",
    tools: true,
    messages: (s) => [
      SYSTEM,
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: "", tool_calls: [toolCall(s)] },
      { role: "tool", tool_call_id: "call_0001a", name: "get_weather", content: '{"temperature": 18}' },
      { role: "assistant", content: "It is 18 degrees in Paris." },
      { role: "user", content: "Thanks! And tomorrow?" },
      { role: "assistant", content: "I cannot see tomorrow's forecast." },
    ],
  },
];

/** Rolls a probe out with object arguments, then with string arguments if that failed. */
function rollProbe(dt: Deltatok, p: Probe): { r: Rollout; messages: Msg[] } | { error: DeltatokError } {
  let first: DeltatokError | null = null;
  for (const stringArgs of p.tools ? [false, true] : [false]) {
    const messages = p.messages(stringArgs);
    try {
      return { r: dt.tokenizeRollout(messages, { tools: p.tools ? TOOLS : null }), messages };
    } catch (e) {
      first ??= toDeltatokError(e);
    }
  }
  return { error: first as DeltatokError };
}

/**
 * Runs the probes; `onProbe` hears of each before it runs (a large template renders each probe's
 * prompts in full, so a long check says where it is).
 */
export function checkTemplate(dt: Deltatok, templateName: string, onProbe?: (index: number, total: number, probe: string) => void): TemplateCheck {
  const probes: ProbeResult[] = [];
  let genKept: boolean | null = null;
  for (const [i, p] of PROBES.entries()) {
    onProbe?.(i, PROBES.length, p.name);
    const out = rollProbe(dt, p);
    if ("error" in out) {
      probes.push({ probe: p.name, keepsPrefix: null, error: { code: out.error.code, message: out.error.message } });
      continue;
    }
    const { r, messages } = out;
    // the probed transition: into the conversation's last assistant message
    const last = messages.length - 1;
    const split = r.splits.find((s) => s.index === last);
    const res: ProbeResult = { probe: p.name, keepsPrefix: split === undefined };
    if (split !== undefined) {
      res.reason = split.reason;
      res.at = split.at;
      res.context = split.context;
    }
    probes.push(res);
    // the generation prompt is kept when every completed turn continued its prompt's text
    const kept = r.sequences.every((s) => s.turns.every((t) => t.inContext));
    genKept = (genKept ?? true) && kept;
  }
  return { tokenizer: dt.options.tokenizer, template: templateName, probes, generationPromptKept: genKept };
}

/** The short human table for stderr. */
export function checkTable(c: TemplateCheck): string {
  const rows = c.probes.map((p) => {
    const verdict = p.error !== undefined ? `renders no (${p.error.code})` : p.keepsPrefix === true ? "keeps prefix" : `splits: ${p.reason} at token ${p.at}`;
    return `  ${p.probe.padEnd(48)} ${verdict}`;
  });
  const gen = c.generationPromptKept === null ? "n/a" : c.generationPromptKept ? "yes" : "no";
  return [`check-template ${c.template} (tokenizer ${c.tokenizer})`, ...rows, `  ${"generation prompt survives into the next prompt".padEnd(48)} ${gen}`].join("\n") + "\n";
}
