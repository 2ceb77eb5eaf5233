/**
 * A surrogate pair split across appends is joined, never lost, in both streaming counters — the
 * text counter and the message counter (content, reasoning, tool-call arguments) — in the library
 * and through the sidecar's counters (JSON `\ud83d` escapes); a low half with no high half before
 * it, or a high half that never gets its pair, is DT_LONE_SURROGATE and the counter (and the
 * server) go on.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Deltatok } from "../src/api/deltatok.js";
import { InProcessBackend } from "../src/serve/in-process.js";
import { handleLine } from "../src/serve/protocol.js";

const dt = await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30" });
const HI = "\uD83D";
const LO = "\uDE00";

test("message counter: content, reasoning and tool arguments split inside a pair count as the whole message", () => {
  const m = dt.messageCounter();
  assert.equal(m.append({ content: "ok " + HI }), dt.countMessage({ role: "assistant", content: "ok " }));
  assert.equal(m.append({ content: LO }), dt.countMessage({ role: "assistant", content: "ok 😀" }));
  assert.equal(m.message().content, "ok 😀");
  m.append({ reasoning_content: "think " + HI });
  m.append({ reasoning_content: LO + " done", tool_calls: [{ index: 0, id: "c1", function: { name: "f", arguments: '{"a":"' + HI } }] });
  const n = m.append({ tool_calls: [{ index: 0, function: { arguments: LO + '"}' } }] });
  const whole = { role: "assistant", content: "ok 😀", reasoning_content: "think 😀 done", tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"a":"😀"}' } }] };
  assert.equal(n, dt.countMessage(whole));
  assert.deepEqual(m.message(), whole);
  assert.equal(m.finish(), n);
});

test("message counter: a low half with nothing before it is refused and changes nothing; an unpaired high half fails finish()", () => {
  const m = dt.messageCounter();
  const n = m.append({ content: "ok " });
  assert.throws(() => m.append({ content: LO }), { code: "DT_LONE_SURROGATE" });
  assert.equal(m.message().content, "ok ");
  m.append({ content: HI });
  assert.throws(() => m.append({ content: "x" }), { code: "DT_LONE_SURROGATE" }); // the held half is not followed by its pair
  assert.equal(m.count, n);
  assert.throws(() => m.finish(), { code: "DT_LONE_SURROGATE", path: "delta.content" });
  const other = dt.messageCounter();
  assert.equal(other.append({ content: "fine" }), dt.countMessage({ role: "assistant", content: "fine" }));
});

test("text counter: the same split is joined; a leading low half is refused", () => {
  const t = dt.textCounter();
  t.append("ok " + HI);
  assert.equal(t.append(LO), dt.countText("ok 😀"));
  assert.equal(t.text, "ok 😀");
  const u = dt.textCounter();
  u.append("ok ");
  assert.throws(() => u.append(LO), { code: "DT_LONE_SURROGATE" });
  assert.equal(u.append("!"), dt.countText("ok !"));
});

test("sidecar counters: the split arrives as JSON escapes and is joined; the server answers after a refusal", async () => {
  const backend = new InProcessBackend(dt);
  const ask = async (method: string, params: string) => (await handleLine(backend, `{"id":1,"method":"${method}","params":${params}}`)) as { result?: Record<string, unknown>; error?: { code: string } };
  const mh = (await ask("message_counter_open", "{}")).result?.handle as string;
  await ask("counter_append", `{"handle":"${mh}","delta":{"content":"ok \\ud83d"}}`);
  const r = await ask("counter_append", `{"handle":"${mh}","delta":{"content":"\\ude00"}}`);
  assert.equal(r.result?.count, dt.countMessage({ role: "assistant", content: "ok 😀" }));
  const th = (await ask("text_counter_open", "{}")).result?.handle as string;
  await ask("counter_append", `{"handle":"${th}","chunk":"ok \\ud83d"}`);
  assert.equal((await ask("counter_append", `{"handle":"${th}","chunk":"\\ude00"}`)).result?.count, dt.countText("ok 😀"));
  const bad = await ask("counter_append", `{"handle":"${th}","chunk":"\\ude00"}`);
  assert.equal(bad.error?.code, "DT_LONE_SURROGATE");
  assert.equal((await ask("counter_finish", `{"handle":"${mh}"}`)).result?.count, dt.countMessage({ role: "assistant", content: "ok 😀" }));
  assert.equal((await ask("count_text", '{"text":"hello"}')).result?.count, dt.countText("hello"));
});
