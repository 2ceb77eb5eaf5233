/**
 * Generates adversarial conversations with fast-check (fixed seed) for the template fuzz suite:
 * whitespace edges (reasoning ending in spaces/newlines), unicode incl. astral characters,
 * quotes, special-token text, floats/ints/big ints/nested dicts and integer-like keys in tool
 * arguments, empty and None content. Writes test/fixtures/template/fuzz/cases.json with
 * Python-faithful JSON (1.0 stays a float); scripts/template/gen-fuzz-expectations.py then
 * renders every case with the reference. Usage:
 *   node --import tsx scripts/template/gen-fuzz-cases.ts && python3 scripts/template/gen-fuzz-expectations.py
 */
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { dumps } from "../../src/json/dumps.js";
import { PyFloat, setKeyOrder } from "../../src/json/values.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");
const argv = process.argv.slice(2);
const flag = (name: string, dflt: string): string => (argv.includes(name) ? (argv[argv.indexOf(name) + 1] as string) : dflt);
/** --out DIR --seed N --conversations N --per-template N: a bigger local campaign, not vendored */
const out = resolve(flag("--out", join(root, "test/fixtures/template/fuzz")));
const SEED = Number(flag("--seed", "20261130"));
const CONVERSATIONS = Number(flag("--conversations", "60"));
const PER_TEMPLATE = Number(flag("--per-template", "10"));

const pieces = [
  "",
  " ",
  "  ",
  "\n",
  "\n\n",
  " \n",
  "\n ",
  "\t",
  "\r\n",
  "hello",
  "Hello, World!",
  "'single'",
  '"double"',
  "back\\slash",
  "it's",
  "<|im_end|>",
  "<|im_start|>assistant",
  "<think>",
  "</think>",
  "<tool_call>",
  "</tool_response>",
  "<tool_response>",
  "[INST]",
  "<|eot_id|>",
  "{{ x }}",
  "{% if %}",
  '{"a": 1}',
  "é",
  "naïve",
  "日本語",
  "😀",
  "👩‍💻",
  "𝔘𝔫𝔦",
  "\u00a0",
  "\u2028",
  "\u200b",
  "مرحبا",
  "a\u0301",
  "\u0000",
  "ß",
  "İ",
  "%s %d",
  "{}",
  "    indented",
  "trailing   ",
];

const text = fc.oneof(
  { weight: 4, arbitrary: fc.array(fc.constantFrom(...pieces), { maxLength: 6 }).map((xs) => xs.join("")) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);

const key = fc.oneof(fc.constantFrom("city", "n", "0", "1", "10", "b", "a", "é", "x y", "_k", "query"), fc.string({ maxLength: 5 }));

const pyNumber = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.constantFrom(0, 1, -1, 2 ** 53, 123456789012345678901234567890n, -(2n ** 70n)),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }).map((x) => (Number.isInteger(x) ? new PyFloat(x) : x)),
  fc.constantFrom(new PyFloat(1), new PyFloat(0), new PyFloat(-0), 1e-7, 1e16, 0.1, 2.5, new PyFloat(1e16), 1e300, 5e-324),
);

const { value: jsonValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    text,
    pyNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.array(fc.tuple(key, tie("value")), { maxLength: 3 }).map(mkDict),
  ),
}));

function mkDict(pairs: Array<[string, unknown]>): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  const order: string[] = [];
  for (const [k, v] of pairs) {
    if (!Object.prototype.hasOwnProperty.call(o, k)) order.push(k);
    o[k] = v;
  }
  setKeyOrder(o, order);
  return o;
}

const args = fc.oneof(
  fc.array(fc.tuple(key, jsonValue), { maxLength: 4 }).map(mkDict),
  fc.array(fc.tuple(key, jsonValue), { maxLength: 3 }).map((p) => dumps(mkDict(p), { ensure_ascii: false })),
  fc.constantFrom("{}", "", "not json", '{"a": 1.0}'),
);

const toolCall = fc.record({
  id: fc.constantFrom("call_9f8e7d6c5b4a", "abc123XYZ", "call_1", "toolu_01"),
  type: fc.constant("function"),
  function: fc.record({ name: fc.constantFrom("get_weather", "search", "book_flight", "x"), arguments: args }),
});

const contentParts = fc.array(
  fc.oneof(
    fc.record({ type: fc.constant("text"), text }),
    fc.constant({ type: "image" }),
    fc.constant({ type: "image_url", image_url: { url: "http://x/y.png" } }),
  ),
  { minLength: 1, maxLength: 3 },
);

const content = fc.oneof(
  { weight: 6, arbitrary: text },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constant("") },
  { weight: 1, arbitrary: contentParts },
);

const assistant = fc
  .record(
    {
      role: fc.constant("assistant"),
      content,
      reasoning_content: text,
      tool_calls: fc.array(toolCall, { minLength: 1, maxLength: 2 }),
    },
    { requiredKeys: ["role", "content"] },
  )
  .map((m) => ({ ...m }));

const user = fc.record({
  role: fc.constant("user"),
  content: fc.oneof({ weight: 6, arbitrary: text }, { weight: 1, arbitrary: fc.constant("") }, { weight: 1, arbitrary: contentParts }),
});
const tool = fc.record({ role: fc.constant("tool"), content: text, tool_call_id: fc.constantFrom("call_9f8e7d6c5b4a", "abc123XYZ"), name: fc.constantFrom("get_weather", "search") });
const system = fc.record({ role: fc.constant("system"), content: text });

const conversation = fc.record({
  system: fc.option(system, { nil: undefined }),
  turns: fc.array(fc.oneof({ weight: 3, arbitrary: user }, { weight: 3, arbitrary: assistant }, { weight: 2, arbitrary: tool }), { minLength: 1, maxLength: 6 }),
  tools: fc.option(
    fc.array(
      fc.record({
        type: fc.constant("function"),
        function: fc.record({
          name: fc.constantFrom("get_weather", "search"),
          description: text,
          parameters: fc.constant({ type: "object", properties: { city: { type: "string", description: "City" }, n: { type: "integer", minimum: 0.0 } }, required: ["city"] }),
        }),
      }),
      { minLength: 1, maxLength: 2 },
    ),
    { nil: null },
  ),
  addGenerationPrompt: fc.boolean(),
  kwargs: fc.oneof(
    fc.constant({}),
    fc.constant({ enable_thinking: false }),
    fc.constant({ enable_thinking: true }),
    fc.constant({ thinking: true }),
    fc.constant({ reasoning_effort: "high", builtin_tools: ["browser", "python"] }),
    fc.constant({ tools_in_user_message: false, date_string: "26 Jul 2024" }),
    fc.constant({ custom_tools: [], thinking_budget: 0, add_vision_id: true }),
  ),
  documents: fc.option(fc.array(fc.record({ title: text, text }), { minLength: 1, maxLength: 2 }), { nil: null }),
});

function main(): void {
  const templates = readdirSync(join(root, "test/fixtures/template/golden/templates"))
    .filter((f) => f.endsWith(".jinja"))
    .map((f) => f.slice(0, -".jinja".length))
    .sort();
  const convs = fc.sample(conversation, { seed: SEED, numRuns: CONVERSATIONS }).map((c) => {
    const messages: unknown[] = [];
    if (c.system !== undefined) messages.push(c.system);
    // make the conversation start with a user turn most of the time (templates expect it)
    if (c.turns[0]?.role !== "user") messages.push({ role: "user", content: "start" });
    messages.push(...c.turns);
    return { messages, tools: c.tools, documents: c.documents, add_generation_prompt: c.addGenerationPrompt, kwargs: c.kwargs };
  });
  const cases: Array<{ template: string; conversation: number }> = [];
  templates.forEach((t, ti) => {
    for (let j = 0; j < PER_TEMPLATE; j++) cases.push({ template: t, conversation: (ti * 7 + j * 13) % CONVERSATIONS });
  });
  mkdirSync(out, { recursive: true });
  const doc = { generated_by: "scripts/template/gen-fuzz-cases.ts", seed: SEED, conversations: convs, cases };
  writeFileSync(join(out, "cases.json"), dumps(doc, { ensure_ascii: true, indent: 1 }) + "\n");
  console.error(`${out}/cases.json: ${convs.length} conversations, ${cases.length} cases`);
}

main();
