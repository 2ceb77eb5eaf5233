/**
 * `continue_final_message`, as transformers' `apply_chat_template` does it: the final message is
 * left open so the model continues it (prefill) instead of starting a new turn.
 *
 * transformers (render_jinja_template) copies the conversation, appends a sentinel,
 * "CONTINUE_FINAL_MESSAGE_TAG " (with its trailing space), to the final message's field — to
 * `content` (or the field named when the option is a string), or for a list of content parts to
 * the `text` of the last part that has one — renders, then cuts the render at the last
 * occurrence of the sentinel: right before it when the template kept it whole, else before it
 * with trailing whitespace removed (a template that trims message text also trimmed the
 * sentinel's space, and whatever whitespace preceded it). A render that no longer holds the
 * stripped final text, or the sentinel, is an error: the template dropped part of the message.
 *
 * Errors (DT_CONTINUE_FINAL_MESSAGE unless said) mirror transformers' ValueErrors: the final
 * message lacks the field; the field's name does not occur in the template source; a list has no
 * part with text; the field (or the part's text) is not a string (DT_INVALID_MESSAGE: Python's
 * TypeError); the render does not hold the message.
 */
import { DeltatokError } from "../errors.js";
import { pyStrip } from "../template/jinja/pystr.js";
import { KEY_ORDER, setKeyOrder } from "../json/values.js";

/** The sentinel transformers appends to the final message (the trailing space is part of it). */
export const CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG ";
const TAG_CORE = CONTINUE_TAG.trim();

/** A conversation with its final message marked, and what to cut the render with. */
export interface MarkedFinal {
  /** The messages to render: the caller's snapshots, the last replaced by a marked copy. */
  readonly messages: readonly unknown[];
  /** The final message's text before the sentinel (the continued text). */
  readonly final: string;
}

/** The field continued: `content`, or the one the option names. */
export function continueField(option: boolean | string): string {
  return typeof option === "string" ? option : "content";
}

/**
 * Copies `messages` (validated snapshots, never modified) with the sentinel appended to the final
 * message's `field`; `source` is the template source (the field's name must occur in it).
 */
export function markFinalMessage(messages: readonly unknown[], field: string, source: string): MarkedFinal {
  const last = messages.length - 1;
  const path = `messages[${last}].${field}`;
  const m = messages[last] as Record<string, unknown>;
  const value = Object.hasOwn(m, field) ? m[field] : undefined;
  if (value === undefined || value === null) {
    throw new DeltatokError("DT_CONTINUE_FINAL_MESSAGE", `continue_final_message is set but the final message has no "${field}" to continue`, { path });
  }
  if (!source.includes(field)) {
    throw new DeltatokError("DT_CONTINUE_FINAL_MESSAGE", `continue_final_message is set to "${field}" but the chat template never names that field`, {
      path: "continue_final_message",
    });
  }
  let marked: unknown;
  let final: string;
  if (Array.isArray(value)) {
    const parts = value.slice();
    let i = parts.length - 1;
    for (; i >= 0; i--) {
      const part = parts[i];
      // Python: `"text" in part` — a key test on a dict, a substring test on a string
      if (typeof part === "string" ? part.includes("text") : typeof part === "object" && part !== null && !Array.isArray(part) && Object.hasOwn(part, "text")) break;
    }
    if (i < 0) {
      throw new DeltatokError("DT_CONTINUE_FINAL_MESSAGE", "continue_final_message is set but we could not find any text to continue in the final message", { path });
    }
    const part = parts[i];
    const text = typeof part === "object" && part !== null ? (part as Record<string, unknown>).text : undefined;
    if (typeof text !== "string") {
      throw new DeltatokError("DT_INVALID_MESSAGE", `TypeError: the text of ${path}[${i}] must be a string to be continued`, { path: `${path}[${i}]` });
    }
    final = text;
    parts[i] = withEntry(part as Record<string, unknown>, "text", text + CONTINUE_TAG);
    marked = parts;
  } else if (typeof value === "string") {
    final = value;
    marked = value + CONTINUE_TAG;
  } else {
    throw new DeltatokError("DT_INVALID_MESSAGE", `TypeError: ${path} must be a string or a list of content parts to be continued`, { path });
  }
  const copy = messages.slice();
  copy[last] = withEntry(m, field, marked);
  return { messages: copy, final };
}

/** A copy of a snapshot object with one entry replaced, keeping its Python key order. */
function withEntry(obj: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...obj };
  Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
  const order = (obj as { [KEY_ORDER]?: unknown })[KEY_ORDER];
  if (Array.isArray(order)) setKeyOrder(copy, order as string[]);
  return copy;
}

/** Cuts the render of a marked conversation where the final message ends. */
export function cutAtFinalMessage(rendered: string, final: string, lastIndex: number): string {
  if (!rendered.includes(pyStrip(final, null, true, true)) || !rendered.includes(TAG_CORE)) {
    throw new DeltatokError(
      "DT_CONTINUE_FINAL_MESSAGE",
      "continue_final_message is set but the final message does not appear in the chat after applying the chat template " +
        "(the template deletes part of it)",
      { path: `messages[${lastIndex}]` },
    );
  }
  const at = rendered.lastIndexOf(TAG_CORE);
  if (rendered.startsWith(CONTINUE_TAG, at)) return rendered.slice(0, at);
  return pyStrip(rendered.slice(0, at), null, false, true);
}
