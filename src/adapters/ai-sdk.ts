/**
 * The AI SDK adapter (`deltatok/adapters/ai-sdk`): the AI SDK's `ModelMessage`s (package `ai`)
 * to OpenAI chat format and back, so that an AI SDK agent loop can count and trim its
 * conversation with deltatok before each model call.
 *
 *   fromAiSdk(messages, options?) → ChatMessage[]     toAiSdk(chatMessages) → ModelMessage[]
 *
 * The mapping (src/adapters/README.md; what has no OpenAI form is DT_ADAPTER_UNSUPPORTED):
 * - system, user: the content as it is (a string, or text parts as a list of `{type: "text"}`
 *   parts). Image and file parts are refused: their tokens depend on the model's processor,
 *   which a tokenizer and template cannot count.
 * - assistant: text parts joined into `content`, reasoning parts joined into
 *   `reasoning_content`, tool-call parts as `tool_calls` (`input` → `function.arguments`: its JSON
 *   text, or the value with `toolArguments: "object"`). toAiSdk gives the parts back in that
 *   order (reasoning, text, tool calls); that order and one part of each kind is the canonical
 *   form, which round-trips exactly.
 * - tool: one OpenAI tool message per tool-result part (`tool_call_id`, `name` = toolName,
 *   `content` = the text, or the JSON text of a json/error-json output). toAiSdk joins
 *   consecutive tool messages into one, with `{type: "text"}` outputs: the OpenAI format has no
 *   place for a result's kind, so a json or error output comes back as its text.
 * - Tool-approval parts are skipped, as the AI SDK drops them before calling a model (one for a
 *   provider-executed tool is refused); providerOptions are not carried (no template reads them).
 *
 * Layer: adapters. Imports only types from `ai`: deltatok works without it installed.
 */
import type { AssistantContent, ModelMessage, ToolContent, ToolResultPart, UserContent } from "ai";
import {
  fromArguments,
  invalid,
  isRecord,
  jsonText,
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

/**
 * Converts AI SDK messages to OpenAI chat format (a new list; the input is not modified). Throws
 * a DeltatokError naming the path of the first part that cannot be converted.
 */
export function fromAiSdk(messages: readonly ModelMessage[], options?: FromOptions): ChatMessage[] {
  const o = resolveFromOptions(options, "fromAiSdk");
  const ms = list(messages, "messages", "DT_INVALID_MESSAGES");
  const out: ChatMessage[] = [];
  for (let i = 0; i < ms.length; i++) {
    const m = ms[i];
    const at = `messages[${i}]`;
    if (!isRecord(m)) throw invalid(at, "must be an AI SDK ModelMessage object");
    const role = str(m.role, `${at}.role`);
    switch (role) {
      case "system":
        out.push({ role, content: str(m.content, `${at}.content`) });
        break;
      case "user":
        out.push({ role, content: userContent(m.content as UserContent, `${at}.content`, o) });
        break;
      case "assistant":
        out.push(assistant(m.content as AssistantContent, `${at}.content`, o));
        break;
      case "tool":
        toolResults(m.content as ToolContent, `${at}.content`, out);
        break;
      default:
        throw invalid(`${at}.role`, `is ${JSON.stringify(role)}: an AI SDK message is system, user, assistant or tool`);
    }
  }
  return out;
}

function userContent(c: UserContent, path: string, o: ResolvedFromOptions): string | ChatTextPart[] {
  if (typeof c === "string") return c;
  const parts = list(c, path);
  const texts: string[] = [];
  for (let j = 0; j < parts.length; j++) {
    const p = parts[j];
    const at = `${path}[${j}]`;
    if (!isRecord(p)) throw invalid(at, "must be a content part object", "DT_INVALID_CONTENT");
    if (p.type === "text") texts.push(str(p.text, `${at}.text`));
    else if (p.type === "image" || p.type === "file") throw unsupported(at, `an ${p.type} part cannot be counted from the tokenizer and template (its tokens depend on the model's processor)`);
    else throw invalid(at, `has type ${JSON.stringify(p.type)}, not a user content part (text, image, file)`, "DT_INVALID_CONTENT");
  }
  return o.textParts === "join" ? texts.join("\n") : texts.map((text) => ({ type: "text", text }));
}

function assistant(c: AssistantContent, path: string, o: ResolvedFromOptions): ChatMessage {
  if (typeof c === "string") return { role: "assistant", content: c };
  const parts = list(c, path);
  let text = "";
  let reasoning: string | null = null;
  const calls: ChatToolCall[] = [];
  for (let j = 0; j < parts.length; j++) {
    const p = parts[j];
    const at = `${path}[${j}]`;
    if (!isRecord(p)) throw invalid(at, "must be a content part object", "DT_INVALID_CONTENT");
    switch (p.type) {
      case "text":
        text += str(p.text, `${at}.text`);
        break;
      case "reasoning":
        reasoning = (reasoning ?? "") + str(p.text, `${at}.text`);
        break;
      case "tool-call":
        if (p.providerExecuted === true) throw unsupported(at, "a provider-executed tool call ran inside the provider: the OpenAI chat format has no place for it");
        calls.push({
          id: str(p.toolCallId, `${at}.toolCallId`),
          type: "function",
          function: { name: str(p.toolName, `${at}.toolName`), arguments: toArguments(p.input, `${at}.input`, o) },
        });
        break;
      case "tool-approval-request":
        break; // the AI SDK removes these before calling the model
      case "file":
      case "tool-result":
        throw unsupported(at, `an assistant ${p.type} part has no place in an OpenAI assistant message`);
      default:
        throw invalid(at, `has type ${JSON.stringify(p.type)}, not an assistant content part`, "DT_INVALID_CONTENT");
    }
  }
  const m: ChatMessage = { role: "assistant", content: text };
  if (reasoning !== null) m.reasoning_content = reasoning;
  if (calls.length > 0) m.tool_calls = calls;
  return m;
}

function toolResults(c: ToolContent, path: string, out: ChatMessage[]): void {
  const parts = list(c, path);
  for (let j = 0; j < parts.length; j++) {
    const p = parts[j];
    const at = `${path}[${j}]`;
    if (!isRecord(p)) throw invalid(at, "must be a tool content part object", "DT_INVALID_CONTENT");
    if (p.type === "tool-approval-response") {
      if (p.providerExecuted === true) throw unsupported(at, "an approval of a provider-executed tool is sent to the provider: the OpenAI chat format has no place for it");
      continue; // the AI SDK removes these before calling the model
    }
    if (p.type !== "tool-result") throw invalid(at, `has type ${JSON.stringify(p.type)}, not a tool content part`, "DT_INVALID_CONTENT");
    const r = p as unknown as ToolResultPart;
    out.push({
      role: "tool",
      tool_call_id: str(r.toolCallId, `${at}.toolCallId`),
      name: str(r.toolName, `${at}.toolName`),
      content: outputText(r.output, `${at}.output`),
    });
  }
}

/** The text a tool result's output is sent as. */
function outputText(out: unknown, path: string): string {
  if (!isRecord(out)) throw invalid(path, "must be a tool result output object");
  switch (out.type) {
    case "text":
    case "error-text":
      return str(out.value, `${path}.value`);
    case "json":
    case "error-json":
      return jsonText(out.value, `${path}.value`);
    case "execution-denied":
    case "content":
      throw unsupported(path, `a ${JSON.stringify(out.type)} tool output has no single OpenAI text form; give the tool a text or json output`);
    default:
      throw invalid(path, `has type ${JSON.stringify(out.type)}, not a tool result output`);
  }
}

/**
 * Converts OpenAI chat-format messages to AI SDK messages (a new list; the input is not
 * modified). Reads role, content, reasoning_content, tool_calls, tool_call_id and a tool
 * message's name; other fields have no place in a ModelMessage. A tool message without `name`
 * takes the name of the call it answers. Throws a DeltatokError at the first field that cannot
 * be converted (arguments that are not JSON: DT_INVALID_TOOL_ARGUMENTS).
 */
export function toAiSdk(messages: readonly ChatMessage[]): ModelMessage[] {
  const ms = list(messages, "messages", "DT_INVALID_MESSAGES");
  const out: ModelMessage[] = [];
  const toolNames = new Map<string, string>();
  let tools: ToolResultPart[] | null = null;
  for (let i = 0; i < ms.length; i++) {
    const m = ms[i];
    const at = `messages[${i}]`;
    if (!isRecord(m)) throw invalid(at, "must be a message object");
    const role = str(m.role, `${at}.role`);
    if (role !== "tool") tools = null;
    switch (role) {
      case "system":
        if (typeof m.content !== "string") throw unsupported(`${at}.content`, "an AI SDK system message holds a string");
        out.push({ role, content: m.content });
        break;
      case "user":
        if (typeof m.content === "string") out.push({ role, content: m.content });
        else out.push({ role, content: textsOf(list(m.content, `${at}.content`), `${at}.content`).map((text) => ({ type: "text" as const, text })) });
        break;
      case "assistant":
        out.push({ role, content: assistantParts(m, at, toolNames) });
        break;
      case "tool": {
        const id = str(m.tool_call_id, `${at}.tool_call_id`);
        const name = m.name === undefined || m.name === null ? toolNames.get(id) : str(m.name, `${at}.name`);
        if (name === undefined) throw invalid(`${at}.name`, `is missing and no earlier tool call has id ${JSON.stringify(id)} (an AI SDK tool result needs the tool's name)`);
        const value = typeof m.content === "string" ? m.content : textsOf(list(m.content, `${at}.content`), `${at}.content`).join("");
        const part: ToolResultPart = { type: "tool-result", toolCallId: id, toolName: name, output: { type: "text", value } };
        if (tools === null) {
          tools = [part];
          out.push({ role: "tool", content: tools });
        } else tools.push(part);
        break;
      }
      default:
        throw unsupported(`${at}.role`, `is ${JSON.stringify(role)}: an AI SDK message is system, user, assistant or tool`);
    }
  }
  return out;
}

function assistantParts(m: Record<string, unknown>, at: string, toolNames: Map<string, string>): Exclude<AssistantContent, string> {
  const parts: Exclude<AssistantContent, string> = [];
  const r = m.reasoning_content;
  if (r !== undefined && r !== null) parts.push({ type: "reasoning", text: str(r, `${at}.reasoning_content`) });
  const c = m.content;
  const text = c === null || c === undefined ? "" : typeof c === "string" ? c : textsOf(list(c, `${at}.content`), `${at}.content`).join("");
  const calls = m.tool_calls === undefined || m.tool_calls === null ? [] : list(m.tool_calls, `${at}.tool_calls`, "DT_INVALID_TOOL_CALLS");
  if (text !== "" || (parts.length === 0 && calls.length === 0)) parts.push({ type: "text", text });
  for (let j = 0; j < calls.length; j++) {
    const call = calls[j];
    const cp = `${at}.tool_calls[${j}]`;
    if (!isRecord(call) || !isRecord(call.function)) throw invalid(cp, "must be a tool call with a function object", "DT_INVALID_TOOL_CALLS");
    const id = str(call.id, `${cp}.id`);
    const name = str(call.function.name, `${cp}.function.name`);
    const input = (fromArguments(call.function.arguments, `${cp}.function.arguments`) as { value: unknown }).value;
    toolNames.set(id, name);
    parts.push({ type: "tool-call", toolCallId: id, toolName: name, input });
  }
  return parts;
}
