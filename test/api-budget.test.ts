/**
 * Deltatok.fits / trimToFit at the API: options and limits validated (unknown option, bad
 * policy, bad limit → coded errors); fits stops encoding past the limit (tokens encoded counted,
 * not timed); an agent loop over the bundled tau-bench conversation that trims every turn stays
 * under the limit, reuses the previous turn's trim point and encodes about what each turn adds.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Deltatok } from "../src/api/deltatok.js";
import { toDeltatokError } from "../src/errors.js";
import { repoPath } from "./helpers/paths.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const code = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    return toDeltatokError(e).code;
  }
  return "none";
};

const line = JSON.parse(readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n")[0] as string) as { messages: unknown[]; tools: unknown[] };

async function deltatok(): Promise<Deltatok> {
  return Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30", renderer: TEST_RENDERER });
}

test("options and limits are validated with coded errors", async () => {
  const dt = await deltatok();
  const m = [{ role: "user", content: "hi" }];
  assert.equal(code(() => dt.fits(m, 10, { polcy: "oldest" } as never)), "DT_INVALID_OPTION");
  assert.equal(code(() => dt.fits(m, 10, { policy: "oldest" } as never)), "DT_INVALID_OPTION");
  assert.equal(code(() => dt.trimToFit(m, 10, { policy: "newest" as never })), "DT_INVALID_OPTION");
  assert.equal(code(() => dt.trimToFit(m, 10, { keep_first_user: 1 as never })), "DT_INVALID_OPTION");
  assert.equal(code(() => dt.trimToFit(m, 10, { addGenerationPrompt: true } as never)), "DT_INVALID_OPTION");
  for (const bad of [-1, 1.5, Number.NaN, "10", null]) {
    assert.equal(code(() => dt.fits(m, bad as never)), "DT_INVALID_REQUEST", String(bad));
    assert.equal(code(() => dt.trimToFit(m, bad as never)), "DT_INVALID_REQUEST", String(bad));
  }
  assert.equal(code(() => dt.fits([], 10)), "DT_INVALID_MESSAGES");
  assert.equal(code(() => dt.trimToFit(m, 1)), "DT_CONTEXT_TOO_SMALL");
});

test("fits stops encoding once the prompt passes the limit", async () => {
  const dt = await deltatok();
  // many messages of ordinary text: each is a piece of its own between special tokens
  const messages: unknown[] = [{ role: "system", content: "You are terse." }];
  for (let i = 0; i < 400; i++) messages.push({ role: i % 2 === 0 ? "user" : "assistant", content: `message ${i}: ${"lorem ipsum dolor sit amet ".repeat(20)}` });
  const s0 = dt.stats().tokensEncoded;
  assert.equal(dt.fits(messages, 500), false);
  const encoded = dt.stats().tokensEncoded - s0;
  assert.ok(encoded <= 500 + 200, `encoded ${encoded} tokens for a limit of 500`);
  const total = (await deltatok()).countPrompt(messages);
  assert.ok(total > 20 * encoded, `the whole prompt is ${total} tokens`);
  assert.equal(dt.fits(messages, total), true);
  assert.equal(dt.fits(messages, total - 1), false);
});

test("an agent loop that trims every turn stays under the limit and encodes what the turns add", async () => {
  const dt = await deltatok();
  const ref = await deltatok();
  const o = { tools: line.tools };
  const limit = 6000;
  let encodedLate = 0;
  let turns = 0;
  for (let k = 2; k <= line.messages.length; k++) {
    const req = structuredClone(line.messages.slice(0, k)); // new objects every turn
    const s0 = dt.stats().tokensEncoded;
    const r = dt.trimToFit(req, limit, o);
    const spent = dt.stats().tokensEncoded - s0;
    assert.ok(r.count <= limit);
    assert.equal(r.count, ref.countPrompt(r.messages, o));
    if (r.dropped.length > 0 && k > line.messages.length - 10) {
      encodedLate += spent;
      turns++;
    }
  }
  assert.ok(turns > 0, "the conversation outgrew the limit");
  // trimmed turns: about what the turn appended plus the one unit put back to check maximality
  // (the kept messages' ends are reused), not the kept conversation again
  assert.ok(encodedLate / turns < limit / 5, `${encodedLate / turns} tokens encoded per trimmed turn`);
});
