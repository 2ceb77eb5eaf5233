/**
 * The sidecar's fits / trim_to_fit answer as the library's fits / trimToFit do, in process and
 * through the pool (answered by the server thread's Deltatok), over stdio lines and in a batch;
 * bad params get the library's coded errors, and the connection stays usable.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Deltatok } from "../src/api/deltatok.js";
import { InProcessBackend } from "../src/serve/in-process.js";
import { PoolBackend } from "../src/serve/pool-backend.js";
import { stdioExchange as exchange } from "./helpers/serve.js";

const convo: Array<{ role: string; content: string }> = [{ role: "system", content: "You are terse." }];
for (let i = 0; i < 8; i++) convo.push({ role: "user", content: `Question ${i}: ${"why ".repeat(4 * i + 1)}?` }, { role: "assistant", content: `Answer ${i}.` });


for (const kind of ["in-process", "pool"] as const) {
  test(`${kind}: fits and trim_to_fit answer as the library`, async () => {
    const dt = await Deltatok.create({ date: "2026-11-30" });
    const backend = kind === "pool" ? await PoolBackend.create({ date: "2026-11-30" }, 1) : new InProcessBackend(await Deltatok.create({ date: "2026-11-30" }));
    const total = dt.countPrompt(convo);
    const limits = [total, total - 1, Math.floor(total * 0.6)];
    const lines: unknown[] = [];
    limits.forEach((limit, i) => {
      lines.push({ id: `f${i}`, method: "fits", params: { messages: convo, limit } });
      lines.push({ id: `t${i}`, method: "trim_to_fit", params: { messages: convo, limit, policy: "turns" } });
    });
    lines.push({ id: "b", method: "batch", params: { requests: [{ method: "trim_to_fit", params: { messages: convo, limit: limits[2] } }] } });
    lines.push({ id: "bad-limit", method: "fits", params: { messages: convo, limit: -3 } });
    lines.push({ id: "bad-policy", method: "trim_to_fit", params: { messages: convo, limit: 100, policy: "newest" } });
    lines.push({ id: "small", method: "trim_to_fit", params: { messages: convo, limit: 3 } });
    const answers = await exchange(backend, lines);
    limits.forEach((limit, i) => {
      assert.deepEqual(answers.get(`f${i}`)?.result, { fits: dt.fits(convo, limit) });
      const r = dt.trimToFit(convo, limit, { policy: "turns" });
      assert.deepEqual(answers.get(`t${i}`)?.result, { count: r.count, dropped: r.dropped });
    });
    const r = dt.trimToFit(convo, limits[2] as number);
    assert.ok(r.dropped.length > 0);
    assert.deepEqual(answers.get("b")?.result, { results: [{ result: { count: r.count, dropped: r.dropped } }] });
    assert.equal((answers.get("bad-limit")?.error as { code: string }).code, "DT_INVALID_REQUEST");
    assert.equal((answers.get("bad-policy")?.error as { code: string }).code, "DT_INVALID_OPTION");
    assert.equal((answers.get("small")?.error as { code: string }).code, "DT_CONTEXT_TOO_SMALL");
  });
}
