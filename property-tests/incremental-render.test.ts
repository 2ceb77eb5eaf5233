/**
 * Incremental rendering is exact: for generated conversations and edit sequences — append,
 * rewind, branch, rewrite an earlier message, mutate a message object in place, change
 * chat_template_kwargs, toggle add_generation_prompt, tools on/off — every request rendered
 * incrementally (against the previous request's render, an older one, or none) equals the full
 * render byte for byte (text, generation spans, steps), or fails with the same error, on every
 * vendored template. In half the runs each request also passes the messages' content versions
 * from validateMessages, as the Deltatok does (unchanged messages skip their per-field checks), so
 * in-place mutations and rewrites are checked against that proof too. fast-check prints the seed
 * and the shrunk counterexample on failure.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { DeltatokError } from "../src/errors.js";
import { compileTemplate, type CompiledTemplate, type PreviousRender } from "../src/template/index.js";
import { PyFloat } from "../src/json/values.js";
import { conversation, type Message } from "./arbitraries/conversation.js";
import { messageText } from "./arbitraries/text.js";
import { fixturesDir } from "../test/fixtures/template/harness.js";
import { validateMessages } from "../src/render/messages.js";

const dir = join(fixturesDir(), "golden");
const specialsByName = JSON.parse(readFileSync(join(dir, "specials.json"), "utf8")) as Record<string, Record<string, unknown>>;
const index = JSON.parse(readFileSync(join(dir, "templates", "_index.json"), "utf8")) as Array<{ short: string; render: { specials?: string } }>;
const templates = readdirSync(join(dir, "templates"))
  .filter((f) => f.endsWith(".jinja"))
  .map((f) => f.slice(0, -".jinja".length));
const now = new Date(Date.UTC(2026, 10, 30, 9, 15));

const TOOLS = [
  { type: "function", function: { name: "get_user_details", description: "Get user", parameters: { type: "object", properties: { user_id: { type: "string", description: "id" } }, required: ["user_id"] } } },
  { type: "function", function: { name: "calculate", description: "Math", parameters: { type: "object", properties: { expression: { type: "string" }, precise: { type: "boolean" } } } } },
];
const KWARGS: Array<Record<string, unknown> | null> = [null, { enable_thinking: false }, { enable_thinking: true }, { reasoning_effort: "low" }, { tools_in_user_message: false }];

type Edit =
  | { kind: "grow"; n: number }
  | { kind: "back"; n: number }
  | { kind: "rewrite"; at: number; text: string }
  | { kind: "mutate"; at: number; how: number; text: string }
  | { kind: "branch"; with: Message[] }
  | { kind: "kwargs"; i: number }
  | { kind: "agp" }
  | { kind: "tools" };

type Out = { text: string; generation: Array<[number, number]>; steps: number } | { error: string };

function full(t: CompiledTemplate, vars: Record<string, unknown>): Out {
  try {
    const r = t.render(vars, { now });
    return { text: r.text, generation: r.generation, steps: r.steps };
  } catch (e) {
    if (!(e instanceof DeltatokError)) throw e;
    return { error: `${e.code}: ${e.message}` };
  }
}

/** The content versions the Deltatok passes with a request's messages (none if they are invalid). */
function versionsOf(messages: unknown[]): { list: unknown[]; versions: number[] } | undefined {
  const versions: number[] = [];
  try {
    validateMessages(messages, { maxPromptChars: Number.MAX_SAFE_INTEGER }, "messages", versions);
  } catch {
    return undefined;
  }
  return { list: messages, versions };
}

function incremental(t: CompiledTemplate, vars: Record<string, unknown>, prev: PreviousRender | null, withVersions: boolean): [Out, PreviousRender | null] {
  try {
    const itemVersions = withVersions ? versionsOf(vars.messages as unknown[]) : undefined;
    const r = t.renderIncremental(vars, { now, itemVersions }, prev);
    return [{ text: r.segments.join(""), generation: r.generation, steps: r.steps }, { trace: r.trace, segments: r.segments }];
  } catch (e) {
    if (!(e instanceof DeltatokError)) throw e;
    return [{ error: `${e.code}: ${e.message}` }, null];
  }
}

/** Mutates a message object in place (what a careless caller may do between requests). */
function mutate(m: Message, how: number, text: string): void {
  const calls = m.tool_calls;
  switch (how % 4) {
    case 0:
      m.content = text;
      break;
    case 1: {
      // tool-call arguments: a value changes type (int → float), or a key is added
      const fn = Array.isArray(calls) ? ((calls[0] as Message | undefined)?.function as Message | undefined) : undefined;
      if (fn !== undefined && typeof fn.arguments === "object" && fn.arguments !== null) {
        const args = fn.arguments as Record<string, unknown>;
        const k = Object.keys(args)[0];
        if (k !== undefined && typeof args[k] === "number") args[k] = new PyFloat(args[k] as number);
        else args.added = 1;
      } else m.content = text;
      break;
    }
    case 2: {
      // a nested dict's key order changes
      const fn = Array.isArray(calls) ? ((calls[0] as Message | undefined)?.function as Message | undefined) : undefined;
      if (fn !== undefined && typeof fn.arguments === "object" && fn.arguments !== null) {
        const args = fn.arguments as Record<string, unknown>;
        const entries = Object.entries(args).reverse();
        for (const k of Object.keys(args)) delete args[k];
        for (const [k, v] of entries) args[k] = v;
        if (entries.length < 2) args.z = "late key";
      } else m.reasoning_content = text;
      break;
    }
    default:
      if (m.role === "assistant") m.role = "user";
      else m.content = text + text;
  }
}

function edits(specials: readonly string[]): fc.Arbitrary<Edit[]> {
  const text = messageText(specials);
  const edit: fc.Arbitrary<Edit> = fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 1, max: 3 }).map((n) => ({ kind: "grow" as const, n })) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }).map((n) => ({ kind: "back" as const, n })) },
    { weight: 1, arbitrary: fc.record({ at: fc.nat(), text }).map((r) => ({ kind: "rewrite" as const, ...r })) },
    { weight: 1, arbitrary: fc.record({ at: fc.nat(), how: fc.nat(), text }).map((r) => ({ kind: "mutate" as const, ...r })) },
    { weight: 1, arbitrary: conversation({ plain: false, nullContent: false, singleToolCall: false }, specials, 1).map((w) => ({ kind: "branch" as const, with: w })) },
    { weight: 1, arbitrary: fc.nat().map((i) => ({ kind: "kwargs" as const, i })) },
    { weight: 1, arbitrary: fc.constant({ kind: "agp" as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: "tools" as const }) },
  );
  return fc.array(edit, { minLength: 4, maxLength: 14 });
}

/** Deep copy of generated messages (edits mutate them). */
function copy(ms: Message[]): Message[] {
  return JSON.parse(JSON.stringify(ms)) as Message[];
}

for (const name of templates) {
  test(`incremental render == full render: ${name}`, () => {
    const t = compileTemplate(readFileSync(join(dir, "templates", `${name}.jinja`), "utf8"));
    const sname = index.find((e) => e.short === name)?.render.specials ?? "";
    const specials = specialsByName[sname] ?? {};
    const specialTexts = Object.values(specials).flatMap((v) => (typeof v === "string" ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []));
    let compared = 0;
    fc.assert(
      fc.property(
        fc.boolean().chain((plain) => fc.tuple(fc.constant(plain), conversation({ plain, nullContent: !plain, singleToolCall: false }, specialTexts, 3))),
        edits(specialTexts),
        fc.boolean(),
        fc.constantFrom(...KWARGS),
        fc.boolean(),
        fc.array(fc.nat(), { minLength: 16, maxLength: 16 }),
        fc.boolean(),
        ([, generated], script, withTools0, kwargs0, agp0, prevPicks, withVersions) => {
          const msgs = copy(generated);
          let k = Math.min(2, msgs.length);
          let kwargs = kwargs0;
          let agp = agp0;
          let withTools = withTools0;
          const history: Array<PreviousRender | null> = [null];
          let last: PreviousRender | null = null;
          const request = (step: number): void => {
            const vars: Record<string, unknown> = {
              messages: msgs.slice(0, k),
              tools: withTools ? TOOLS : null,
              documents: null,
              add_generation_prompt: agp,
              ...specials,
              ...(kwargs ?? {}),
            };
            const want = full(t, vars);
            // mostly the previous request's render (what the Deltatok finds), sometimes an older one or none
            const pick = (prevPicks[step % prevPicks.length] as number) % 8;
            const prev = pick < 6 ? last : (history[pick % history.length] ?? null);
            const [got, trace] = incremental(t, vars, prev, withVersions);
            assert.deepEqual(got, want, `request ${step} (${k} messages)`);
            if (trace !== null) {
              last = trace;
              history.push(trace);
            }
            compared++;
          };
          request(0);
          script.forEach((e, i) => {
            switch (e.kind) {
              case "grow":
                k = Math.min(msgs.length, k + e.n);
                break;
              case "back":
                k = Math.max(1, k - e.n);
                break;
              case "rewrite": {
                const j = e.at % k;
                msgs[j] = { ...(msgs[j] as Message), content: e.text };
                break;
              }
              case "mutate":
                mutate(msgs[e.at % k] as Message, e.how, e.text);
                break;
              case "branch":
                msgs.splice(k, msgs.length - k, ...copy(e.with).filter((m) => m.role !== "system"));
                k = Math.min(msgs.length, k + 1);
                break;
              case "kwargs":
                kwargs = KWARGS[e.i % KWARGS.length] ?? null;
                break;
              case "agp":
                agp = !agp;
                break;
              case "tools":
                withTools = !withTools;
                break;
            }
            request(i + 1);
          });
        },
      ),
      { numRuns: Number(process.env.DELTATOK_PROPERTY_RUNS ?? 60) },
    );
    assert.ok(compared > 0);
  });
}
