/** Incremental renders of a conversation's requests, each checked against a full render. */
import assert from "node:assert/strict";
import { validateMessages } from "../../src/render/messages.js";
import type { CompiledTemplate, PreviousRender } from "../../src/template/index.js";

/**
 * Returns `request(vars, what)`: renders `vars` incrementally against the previous request's
 * render (with the messages' content versions, as the Deltatok passes them, when `withVersions`)
 * and asserts text and steps (what render budgets count) equal a full render's.
 */
export function incrementalRequests(
  t: CompiledTemplate,
  now: Date,
  withVersions: boolean,
): (vars: Record<string, unknown> & { messages: unknown[] }, what?: string) => void {
  let prev: PreviousRender | null = null;
  return (vars, what) => {
    const list = vars.messages;
    let itemVersions: { list: unknown[]; versions: number[] } | undefined;
    if (withVersions) {
      const versions: number[] = [];
      validateMessages(list, { maxPromptChars: 1 << 30 }, "messages", versions);
      itemVersions = { list, versions };
    }
    const r = t.renderIncremental(vars, { now, itemVersions }, prev);
    prev = { trace: r.trace, segments: r.segments };
    const w = t.render(vars, { now });
    assert.deepEqual({ text: r.segments.join(""), steps: r.steps }, { text: w.text, steps: w.steps }, what ?? `${list.length} messages`);
  };
}
