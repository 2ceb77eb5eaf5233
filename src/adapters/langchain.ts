/**
 * The LangChain.js adapter (`deltatok/adapters/langchain`): `@langchain/core` messages to OpenAI
 * chat format and back, so that a LangChain agent loop can count and trim its conversation with
 * deltatok before each model call.
 *
 *   fromLangChain(messages, options?) → ChatMessage[]
 *   toLangChain(chatMessages, classes) → BaseMessage[]    (classes: `@langchain/core/messages`)
 *
 * The mapping (src/adapters/README.md; what has no OpenAI form is DT_ADAPTER_UNSUPPORTED):
 * - SystemMessage → system, HumanMessage → user, ChatMessage → its role: the content as it is
 *   (a string, or text blocks as a list of `{type: "text"}` parts). Image, audio and file blocks
 *   are refused: their tokens depend on the model's processor.
 * - AIMessage → assistant: text blocks joined into `content`; reasoning — reasoning or thinking
 *   blocks, or `additional_kwargs.reasoning_content` (one of the two) — into `reasoning_content`;
 *   `tool_calls` with `args` → `function.arguments` (its JSON text, or the value with
 *   `toolArguments: "object"`); `invalid_tool_calls` keep their raw `args` text. Tool-use blocks
 *   that repeat a tool call are skipped. toLangChain builds an AIMessage with a string content,
 *   the reasoning in `additional_kwargs.reasoning_content` (as OpenAI-compatible chat models
 *   give it), tool calls whose arguments parse as JSON in `tool_calls` and the others in
 *   `invalid_tool_calls`: that is the canonical form, which round-trips exactly.
 * - ToolMessage → tool (`tool_call_id`, `name` when set, the content).
 * - `name` is carried on every message; ids, metadata, `status` and `artifact` are not (no
 *   template reads them).
 *
 * toLangChain takes the message classes instead of importing them, so that the messages it builds
 * are instances of the caller's own copy of `@langchain/core` (and deltatok needs none).
 *
 * Layer: adapters. Imports only types from `@langchain/core`.
 */
import type { AIMessage, AIMessageFields, BaseMessage, ChatMessage as LcChatMessage, HumanMessage, InvalidToolCall, SystemMessage, ToolCall, ToolMessage } from "@langchain/core/messages";
import { DeltatokError } from "../errors.js";
import {
  fromArguments,
  invalid,
  isRecord,
  list,
  resolveFromOptions,
  str,
  textsOf,
  toArguments,
  unsupported,
  type ChatMessage,
  type ChatTextPart,
  type ChatToolCall,
  type FromOptions,
  type ResolvedFromOptions,
} from "./chat.js";

export type { ChatMessage, ChatTextPart, ChatToolCall, FromOptions, JsonValue } from "./chat.js";

/** The `@langchain/core/messages` classes toLangChain builds (pass the module: `import * as lc from "@langchain/core/messages"`). */
export interface LangChainClasses {
  SystemMessage: typeof SystemMessage;
  HumanMessage: typeof HumanMessage;
  AIMessage: typeof AIMessage;
  ToolMessage: typeof ToolMessage;
  /** For roles other than system, user, assistant and tool (optional: without it they are refused). */
  ChatMessage?: typeof LcChatMessage;
}

/** The message's type: the `type` field of @langchain/core 1.x, or `_getType()` of older ones. */
function typeOf(m: Record<string, unknown>, at: string): string {
  if (typeof m.type === "string") return m.type;
  if (typeof m._getType === "function") return str((m._getType as () => unknown).call(m), `${at}.type`);
  throw invalid(`${at}.type`, "is missing: not a LangChain message");
}

/**
 * Converts LangChain messages to OpenAI chat format (a new list; the messages are not modified).
 * Throws a DeltatokError naming the path of the first value that cannot be converted.
 */
export function fromLangChain(messages: readonly BaseMessage[], options?: FromOptions): ChatMessage[] {
  const o = resolveFromOptions(options, "fromLangChain");
  const ms = list(messages, "messages", "DT_INVALID_MESSAGES");
  const out: ChatMessage[] = [];
  for (let i = 0; i < ms.length; i++) {
    const m = ms[i];
    const at = `messages[${i}]`;
    if (!isRecord(m)) throw invalid(at, "must be a LangChain message");
    const type = typeOf(m, at);
    let c: ChatMessage;
    switch (type) {
      case "system":
        c = { role: "system", content: plainContent(m.content, `${at}.content`, o) };
        break;
      case "human":
        c = { role: "user", content: plainContent(m.content, `${at}.content`, o) };
        break;
      case "generic":
        c = { role: str(m.role, `${at}.role`), content: plainContent(m.content, `${at}.content`, o) };
        break;
      case "ai":
        c = assistant(m, at, o);
        break;
      case "tool":
        c = { role: "tool", tool_call_id: str(m.tool_call_id, `${at}.tool_call_id`), content: plainContent(m.content, `${at}.content`, o) };
        break;
      default:
        throw unsupported(`${at}.type`, `a LangChain ${JSON.stringify(type)} message has no OpenAI chat-format equivalent`);
    }
    if (m.name !== undefined && m.name !== null) c.name = str(m.name, `${at}.name`);
    out.push(c);
  }
  return out;
}

/** Content of a message other than an AI one: a string, or text blocks. */
function plainContent(c: unknown, path: string, o: ResolvedFromOptions): string | ChatTextPart[] {
  if (typeof c === "string") return c;
  const blocks = list(c, path);
  const texts: string[] = [];
  for (let j = 0; j < blocks.length; j++) {
    const b = blocks[j];
    const at = `${path}[${j}]`;
    if (!isRecord(b) || typeof b.type !== "string") throw invalid(at, "must be a content block with a string type", "DT_INVALID_CONTENT");
    if (b.type === "text") texts.push(str(b.text, `${at}.text`));
    else throw unsupported(at, `a ${JSON.stringify(b.type)} content block cannot be counted from the tokenizer and template (only text blocks can)`);
  }
  return o.textParts === "join" ? texts.join("\n") : texts.map((text) => ({ type: "text", text }));
}

/** An OpenAI tool call (its id, when LangChain has one, noted in `ids`). */
function toolCall(t: Record<string, unknown>, path: string, name: string, args: ChatToolCall["function"]["arguments"], ids: Set<string>): ChatToolCall {
  const fn = { name, arguments: args };
  if (t.id === undefined || t.id === null) return { type: "function", function: fn };
  const id = str(t.id, `${path}.id`);
  ids.add(id);
  return { id, type: "function", function: fn };
}

function assistant(m: Record<string, unknown>, at: string, o: ResolvedFromOptions): ChatMessage {
  const calls = m.tool_calls === undefined || m.tool_calls === null ? [] : list(m.tool_calls, `${at}.tool_calls`, "DT_INVALID_TOOL_CALLS");
  const bad = m.invalid_tool_calls === undefined || m.invalid_tool_calls === null ? [] : list(m.invalid_tool_calls, `${at}.invalid_tool_calls`, "DT_INVALID_TOOL_CALLS");
  const callIds = new Set<string>();
  const out: ChatToolCall[] = [];
  for (let j = 0; j < calls.length; j++) {
    const t = calls[j];
    const tp = `${at}.tool_calls[${j}]`;
    if (!isRecord(t)) throw invalid(tp, "must be a tool call object", "DT_INVALID_TOOL_CALLS");
    out.push(toolCall(t, tp, str(t.name, `${tp}.name`), toArguments(t.args, `${tp}.args`, o), callIds));
  }
  for (let j = 0; j < bad.length; j++) {
    const t = bad[j];
    const tp = `${at}.invalid_tool_calls[${j}]`;
    if (!isRecord(t)) throw invalid(tp, "must be a tool call object", "DT_INVALID_TOOL_CALLS");
    out.push(toolCall(t, tp, str(t.name, `${tp}.name`), t.args === undefined || t.args === null ? "" : str(t.args, `${tp}.args`), callIds));
  }
  let text = "";
  let reasoning: string | null = null;
  const c = m.content;
  if (typeof c === "string") text = c;
  else {
    const blocks = list(c, `${at}.content`);
    for (let j = 0; j < blocks.length; j++) {
      const b = blocks[j];
      const bp = `${at}.content[${j}]`;
      if (!isRecord(b) || typeof b.type !== "string") throw invalid(bp, "must be a content block with a string type", "DT_INVALID_CONTENT");
      if (b.type === "text") text += str(b.text, `${bp}.text`);
      else if (b.type === "reasoning") reasoning = (reasoning ?? "") + str(b.reasoning, `${bp}.reasoning`);
      else if (b.type === "thinking") reasoning = (reasoning ?? "") + str(b.thinking, `${bp}.thinking`);
      else if ((b.type === "tool_use" || b.type === "tool_call") && typeof b.id === "string" && callIds.has(b.id)) continue; // the same call as in tool_calls
      else throw unsupported(bp, `a ${JSON.stringify(b.type)} block has no place in an OpenAI assistant message`);
    }
  }
  const kw = m.additional_kwargs;
  if (isRecord(kw) && kw.reasoning_content !== undefined && kw.reasoning_content !== null) {
    if (reasoning !== null) throw unsupported(`${at}.additional_kwargs.reasoning_content`, "reasoning both in content blocks and in additional_kwargs: which one the model saw is ambiguous");
    reasoning = str(kw.reasoning_content, `${at}.additional_kwargs.reasoning_content`);
  }
  const msg: ChatMessage = { role: "assistant", content: text };
  if (reasoning !== null) msg.reasoning_content = reasoning;
  if (out.length > 0) msg.tool_calls = out;
  return msg;
}

/**
 * Builds LangChain messages from OpenAI chat-format messages, with the caller's classes (a new
 * list; the input is not modified). Reads role, content, name, reasoning_content, tool_calls and
 * tool_call_id. Throws a DeltatokError at the first field that cannot be converted.
 */
export function toLangChain(messages: readonly ChatMessage[], classes: LangChainClasses): BaseMessage[] {
  for (const k of ["SystemMessage", "HumanMessage", "AIMessage", "ToolMessage"] as const) {
    if (typeof (classes as unknown as Record<string, unknown> | null | undefined)?.[k] !== "function") {
      throw new DeltatokError("DT_INVALID_OPTION", `toLangChain: classes.${k} must be the @langchain/core/messages class (pass the module: import * as lc from "@langchain/core/messages")`, {
        path: `classes.${k}`,
      });
    }
  }
  const ms = list(messages, "messages", "DT_INVALID_MESSAGES");
  const out: BaseMessage[] = [];
  for (let i = 0; i < ms.length; i++) {
    const m = ms[i];
    const at = `messages[${i}]`;
    if (!isRecord(m)) throw invalid(at, "must be a message object");
    const role = str(m.role, `${at}.role`);
    const name = m.name === undefined || m.name === null ? undefined : str(m.name, `${at}.name`);
    const named = name === undefined ? {} : { name };
    switch (role) {
      case "system":
        out.push(new classes.SystemMessage({ content: blocks(m.content, `${at}.content`), ...named }));
        break;
      case "user":
        out.push(new classes.HumanMessage({ content: blocks(m.content, `${at}.content`), ...named }));
        break;
      case "assistant":
        out.push(aiMessage(m, at, classes, named));
        break;
      case "tool":
        out.push(new classes.ToolMessage({ content: blocks(m.content, `${at}.content`), tool_call_id: str(m.tool_call_id, `${at}.tool_call_id`), ...named }));
        break;
      default:
        if (classes.ChatMessage === undefined) throw unsupported(`${at}.role`, `is ${JSON.stringify(role)}: pass classes.ChatMessage to build a LangChain ChatMessage for it`);
        out.push(new classes.ChatMessage({ content: blocks(m.content, `${at}.content`), role, ...named }));
    }
  }
  return out;
}

/** A content as LangChain holds it: a string, or text blocks. */
function blocks(c: unknown, path: string): string | Array<{ type: "text"; text: string }> {
  if (typeof c === "string") return c;
  return textsOf(list(c, path), path).map((text) => ({ type: "text" as const, text }));
}

function aiMessage(m: Record<string, unknown>, at: string, classes: LangChainClasses, named: { name?: string }): AIMessage {
  const c = m.content;
  const content = c === null || c === undefined ? "" : typeof c === "string" ? c : textsOf(list(c, `${at}.content`), `${at}.content`).join("");
  const calls = m.tool_calls === undefined || m.tool_calls === null ? [] : list(m.tool_calls, `${at}.tool_calls`, "DT_INVALID_TOOL_CALLS");
  const toolCalls: ToolCall[] = [];
  const invalidCalls: InvalidToolCall[] = [];
  for (let j = 0; j < calls.length; j++) {
    const call = calls[j];
    const cp = `${at}.tool_calls[${j}]`;
    if (!isRecord(call) || !isRecord(call.function)) throw invalid(cp, "must be a tool call with a function object", "DT_INVALID_TOOL_CALLS");
    const name = str(call.function.name, `${cp}.function.name`);
    const id = call.id === undefined || call.id === null ? {} : { id: str(call.id, `${cp}.id`) };
    const parsed = fromArguments(call.function.arguments, `${cp}.function.arguments`, true);
    if (parsed !== null && isRecord(parsed.value)) toolCalls.push({ ...id, name, args: parsed.value, type: "tool_call" });
    else if (parsed === null) invalidCalls.push({ ...id, name, args: call.function.arguments as string, type: "invalid_tool_call" });
    else throw unsupported(`${cp}.function.arguments`, "LangChain tool-call args are an object");
  }
  const fields: AIMessageFields = { content, ...named };
  if (toolCalls.length > 0) fields.tool_calls = toolCalls;
  if (invalidCalls.length > 0) fields.invalid_tool_calls = invalidCalls;
  const r = m.reasoning_content;
  if (r !== undefined && r !== null) fields.additional_kwargs = { reasoning_content: str(r, `${at}.reasoning_content`) };
  return new classes.AIMessage(fields);
}
