/**
 * Agentic conversations in OpenAI chat format: system, user turns, assistant turns with and
 * without tool calls (string or object arguments, parallel calls), reasoning_content, tool
 * results, several user queries. `plain` gives strictly alternating user/assistant chats for
 * templates that allow nothing else (Gemma).
 */
import fc from "fast-check";
import { messageText } from "./text.js";

export type Message = Record<string, unknown>;

export interface ConversationShape {
  /** Only system? + alternating user/assistant with string content. */
  plain: boolean;
  /** Tool-call arguments as JSON strings (true), objects (false), or either (undefined). */
  stringArguments?: boolean;
  /** Allow null assistant content next to tool calls. */
  nullContent: boolean;
  /** At most one tool call per assistant message. */
  singleToolCall: boolean;
}

const TOOL_NAMES = ["get_user_details", "search_flights", "book_reservation", "calculate"];

function argumentsValue(): fc.Arbitrary<Record<string, unknown>> {
  return fc.dictionary(
    fc.constantFrom("user_id", "origin", "amount", "1", "nested", "flag", "ratio"),
    fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.integer({ min: -5, max: 1000 }),
      fc.constantFrom(0.5, 1.25, -3.75),
      fc.boolean(),
      fc.constant(null),
      fc.dictionary(fc.constantFrom("a", "b"), fc.integer({ min: 0, max: 9 }), { maxKeys: 2 }),
      fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 3 }),
    ),
    { maxKeys: 3 },
  );
}

function toolCall(shape: ConversationShape, i: number): fc.Arbitrary<Message> {
  return fc.tuple(fc.constantFrom(...TOOL_NAMES), argumentsValue(), fc.boolean()).map(([name, args, asString]) => {
    const s = shape.stringArguments ?? asString;
    return { id: `call_${i}abcdefg`.slice(0, 9), type: "function", function: { name, arguments: s ? JSON.stringify(args) : args } };
  });
}

/** One agent step: an assistant message with tool calls and the tool results that follow it. */
function toolStep(shape: ConversationShape, specials: readonly string[]): fc.Arbitrary<Message[]> {
  const text = messageText(specials);
  return fc
    .tuple(
      fc.array(fc.nat(), { minLength: 1, maxLength: shape.singleToolCall ? 1 : 3 }),
      shape.nullContent ? fc.option(text, { nil: null }) : text,
      fc.option(text, { nil: undefined }),
    )
    .chain(([calls, content, reasoning]) =>
      fc.tuple(fc.tuple(...calls.map((_, i) => toolCall(shape, i))), fc.array(text, { minLength: calls.length, maxLength: calls.length })).map(
        ([tcs, results]) => {
          const a: Message = { role: "assistant", content, tool_calls: tcs };
          if (reasoning !== undefined) a.reasoning_content = reasoning;
          const tools: Message[] = results.map((r, i) => ({
            role: "tool",
            content: r,
            tool_call_id: (tcs[i] as Message).id,
            name: ((tcs[i] as Message).function as Message).name,
          }));
          return [a, ...tools];
        },
      ),
    );
}

function assistantFinal(specials: readonly string[], withReasoning: boolean): fc.Arbitrary<Message> {
  const text = messageText(specials);
  return fc.tuple(text, withReasoning ? fc.option(text, { nil: undefined }) : fc.constant(undefined)).map(([content, reasoning]) => {
    const m: Message = { role: "assistant", content };
    if (reasoning !== undefined) m.reasoning_content = reasoning;
    return m;
  });
}

export function conversation(shape: ConversationShape, specials: readonly string[], maxTurns = 4): fc.Arbitrary<Message[]> {
  const text = messageText(specials);
  const system = fc.option(text.map((c) => ({ role: "system", content: c })), { nil: undefined });
  if (shape.plain) {
    const turn = fc.tuple(text, assistantFinal(specials, false)).map(([u, a]) => [{ role: "user", content: u }, a]);
    return fc.tuple(system, fc.array(turn, { minLength: 1, maxLength: maxTurns })).map(([s, turns]) => [...(s ? [s] : []), ...turns.flat()]);
  }
  const turn = fc
    .tuple(text, fc.array(toolStep(shape, specials), { maxLength: 2 }), assistantFinal(specials, true))
    .map(([u, steps, final]) => [{ role: "user", content: u }, ...steps.flat(), final]);
  return fc.tuple(system, fc.array(turn, { minLength: 1, maxLength: maxTurns })).map(([s, turns]) => [...(s ? [s] : []), ...turns.flat()]);
}
