/**
 * The sidecar's tokenizer methods (encode_text, decode, tokenizer_info, vocab) answer as the
 * library does, and encode_prompt's `ids_delta` sends only the ids after those the client holds
 * for the prefix state: previous[:ids_from] + ids equals the whole answer on every turn, in
 * process and through the pool (stdio lines take the pool's raw path, batches the parsed one);
 * when the server does not hold that state's ids (another state, none yet), ids_from is 0.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Deltatok } from "../src/api/deltatok.js";
import { InProcessBackend } from "../src/serve/in-process.js";
import { commonPrefix } from "../src/serve/ids-delta.js";
import { PoolBackend } from "../src/serve/pool-backend.js";
import { stdioExchange as exchange } from "./helpers/serve.js";

const convo: Array<{ role: string; content: string }> = [{ role: "system", content: "You are terse." }];
for (let i = 0; i < 6; i++) convo.push({ role: "user", content: `Question ${i}: ${"why ".repeat(i + 1)}?` }, { role: "assistant", content: `Answer ${i}.` });


for (const kind of ["in-process", "pool"] as const) {
  test(`${kind}: ids_delta rebuilds every turn's ids exactly; tokenizer methods equal the library`, async () => {
    const dt = await Deltatok.create({ date: "2026-11-30" });
    const backend = kind === "pool" ? await PoolBackend.create({ date: "2026-11-30" }, 1) : new InProcessBackend(await Deltatok.create({ date: "2026-11-30" }));
    // one request per user turn, each extending the previous state; one out-of-order reference
    const lines: unknown[] = [];
    const turns: number[] = [];
    for (let k = 2, state = 1; k <= convo.length; k += 2, state++) {
      turns.push(k);
      const params: Record<string, unknown> = { conversation_id: "c", state, ids_delta: true, add_generation_prompt: true };
      if (state % 3 === 0) params.ids_encoding = "base64";
      if (state === 1) params.messages = convo.slice(0, k);
      else Object.assign(params, { prefix: { state: state - 1, length: k - 2 }, messages: convo.slice(k - 2, k) });
      lines.push(state % 2 === 0 ? { id: state, method: "batch", params: { requests: [{ method: "encode_prompt", params }] } } : { id: state, method: "encode_prompt", params });
    }
    lines.push({ id: "text", method: "encode_text", params: { text: "Hello world", add_special_tokens: true } });
    lines.push({ id: "decode", method: "decode", params: { ids: Array.from(dt.encodePrompt(convo)), skip_special_tokens: true } });
    lines.push({ id: "info", method: "tokenizer_info", params: {} });
    lines.push({ id: "vocab", method: "vocab", params: {} });
    const answers = await exchange(backend, lines);
    let held: number[] = [];
    turns.forEach((k, i) => {
      const a = answers.get(i + 1) as Record<string, unknown>;
      const r = (i + 1) % 2 === 0 ? ((a.result as { results: Array<{ result: Record<string, unknown> }> }).results[0] as { result: Record<string, unknown> }).result : (a.result as Record<string, unknown>);
      assert.ok(r !== undefined, JSON.stringify(a));
      const from = r.ids_from as number;
      const raw = r.ids as number[] | string;
      // base64: little-endian uint32
      const tail = typeof raw === "string" ? Array.from(new Uint32Array(new Uint8Array(Buffer.from(raw, "base64")).buffer)) : raw;
      assert.equal(typeof raw === "string", (i + 1) % 3 === 0);
      const ids = held.slice(0, from).concat(tail);
      const want = Array.from(dt.encodePrompt(convo.slice(0, k)));
      assert.deepEqual(ids, want, `turn ${k}`);
      assert.equal(r.count, want.length);
      if (i === 0) assert.equal(from, 0);
      else assert.ok(from > held.length - 8 && tail.length < want.length / 2, `turn ${k}: only the appended ids cross (${from}, ${tail.length})`);
      held = ids;
    });
    assert.deepEqual((answers.get("text")?.result as { ids: number[] }).ids, Array.from(dt.encodeText("Hello world", { add_special_tokens: true })));
    assert.equal((answers.get("decode")?.result as { text: string }).text, dt.decode(dt.encodePrompt(convo), { skip_special_tokens: true }));
    assert.deepEqual(answers.get("info")?.result, JSON.parse(JSON.stringify(dt.tokenizerInfo())));
    assert.deepEqual((answers.get("vocab")?.result as { tokens: unknown[] }).tokens, dt.tokenList());
  });
}

test("ids_delta sends everything when the server lacks the prefix state's ids", async () => {
  const backend = new InProcessBackend(await Deltatok.create({ date: "2026-11-30" }));
  const base = { conversation_id: "d", ids_delta: true };
  const answers = await exchange(backend, [
    // state 1 counted without ids: nothing to diff against
    { id: 1, method: "count_prompt", params: { ...base, state: 1, messages: convo.slice(0, 2) } },
    { id: 2, method: "encode_prompt", params: { ...base, state: 2, prefix: { state: 1, length: 2 }, messages: convo.slice(2, 4) } },
    { id: 3, method: "encode_prompt", params: { ...base, state: 3, prefix: { state: 2, length: 4 }, messages: convo.slice(4, 6) } },
    // without ids_delta: the whole ids, no ids_from
    { id: 4, method: "encode_prompt", params: { conversation_id: "d", state: 4, prefix: { state: 3, length: 6 }, messages: [] } },
  ]);
  const r = (id: number) => answers.get(id)?.result as Record<string, unknown>;
  assert.equal(r(2).ids_from, 0);
  assert.ok((r(3).ids_from as number) > 0);
  assert.equal(r(4).ids_from, undefined);
  assert.equal((r(4).ids as number[]).length, r(4).count);
});

test("commonPrefix equals an id-by-id scan (every length, mismatch place and alignment)", () => {
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let t = 0; t < 2000; t++) {
    const n = Math.floor(rnd() * 700);
    const buf = new Uint32Array(n + 3);
    for (let i = 0; i < buf.length; i++) buf[i] = Math.floor(rnd() * 5);
    const a = buf.subarray(t % 3, t % 3 + n); // unaligned views too
    const m = Math.floor(rnd() * (n + 40));
    const b = new Uint32Array(Math.max(0, m));
    b.set(a.subarray(0, Math.min(n, b.length)));
    if (b.length > 0 && rnd() < 0.7) {
      const at = Math.floor(rnd() * b.length);
      b[at] = ((b[at] as number) ^ (1 + Math.floor(rnd() * 3))) >>> 0;
    }
    let naive = 0;
    while (naive < Math.min(a.length, b.length) && a[naive] === b[naive]) naive++;
    assert.equal(commonPrefix(a, b), naive, `case ${t}`);
  }
});
