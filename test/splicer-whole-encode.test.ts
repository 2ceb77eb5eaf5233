/**
 * The splicer's answers equal a whole-text encode for every request, whatever the cache holds:
 * growing conversations, rewritten history, repeats, branches, texts without boundary tokens,
 * counts-only mode. Outcomes and stats are counted as documented.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { TokenSplicer, wholeText, type Rendered } from "../src/splice/splicer.js";
import { encoderFor } from "./helpers/tokenizers.js";
import { hostileText } from "./helpers/texts.js";

const enc = encoderFor("qwen3");
const turn = (role: string, content: string) => `<|im_start|>${role}\n${content}<|im_end|>\n`;
const GEN = "<|im_start|>assistant\n";

function render(msgs: Array<[string, string]>, gen = true): string {
  return msgs.map(([r, c]) => turn(r, c)).join("") + (gen ? GEN : "");
}
const chainOf = (n: number, salt = 0n) => Array.from({ length: n }, (_, i) => BigInt(i + 1) * 1000n + salt);

/** As one segment, or split at message turns (like an incremental renderer) with the leading segments equal to the cached snapshot's reported as reused. */
function rendered(splicer: TokenSplicer, text: string, chain: bigint[], segmented: boolean): Rendered {
  if (!segmented) return wholeText(text);
  const segments = text.split(/(?<=<\|im_end\|>\n)/);
  const prev = splicer.lookup(chain)?.cached.segments ?? [];
  let reused = 0;
  while (reused < Math.min(prev.length, segments.length) && prev[reused] === segments[reused]) reused++;
  return { segments, reusedSegments: reused, trace: null, traceBytes: 0 };
}

function check(splicer: TokenSplicer, text: string, chain: bigint[], wantIds = true, segmented = false) {
  const r = splicer.tokenize(rendered(splicer, text, chain, segmented), chain, wantIds, splicer.lookup(chain));
  const whole = enc.encodeWhole(text);
  assert.equal(r.count, whole.length);
  if (wantIds) assert.deepEqual(Array.from(r.ids ?? []), whole);
  return r;
}

test("a growing conversation reuses its prefix and stays exact", () => {
  const splicer = new TokenSplicer(enc, { storeIds: true, maxBytes: 64 << 20 });
  const msgs: Array<[string, string]> = [["system", "You are helpful."], ["user", "Hi there"]];
  let r = check(splicer, render(msgs), chainOf(2));
  assert.equal(r.outcome, "miss");
  let total = r.count;
  for (let i = 0; i < 10; i++) {
    msgs.push(["assistant", `Answer ${i} with some words.`], ["user", `Question ${i}?`]);
    r = check(splicer, render(msgs), chainOf(msgs.length));
    assert.equal(r.outcome, "partial");
    assert.ok(r.reused > 0);
    total += r.count;
  }
  const s = splicer.stats();
  assert.equal(s.requests, 11);
  assert.equal(s.misses, 1);
  assert.equal(s.partial, 10);
  assert.equal(s.conversations, 1, "one lineage for one growing conversation");
  assert.equal(s.tokensReused + s.tokensEncoded, total, "every prompt token is either reused or encoded, once");
  assert.ok(s.tokensReused > s.tokensEncoded, "most tokens of a growing conversation are reused");
});

test("the same render again is a hit; a rewritten history is still exact", () => {
  const splicer = new TokenSplicer(enc, { storeIds: true, maxBytes: 64 << 20 });
  const msgs: Array<[string, string]> = [["system", "S"], ["user", "u1"], ["assistant", "<think>\nr\n</think>\n\na1"], ["user", "u2"]];
  check(splicer, render(msgs), chainOf(4));
  assert.equal(check(splicer, render(msgs), chainOf(4)).outcome, "hit");
  // Qwen3-style rewrite: earlier reasoning disappears once a new user turn arrives
  const rewritten: Array<[string, string]> = [["system", "S"], ["user", "u1"], ["assistant", "a1"], ["user", "u2"], ["assistant", "a2"], ["user", "u3"]];
  const r = check(splicer, render(rewritten), chainOf(6));
  assert.equal(r.outcome, "partial");
});

test("no boundary inside the common prefix falls back, counted with its reason", () => {
  const splicer = new TokenSplicer(enc, { storeIds: true, maxBytes: 64 << 20 });
  check(splicer, "plain text without special tokens", chainOf(1));
  const r = check(splicer, "plain text without special tokens, continued", chainOf(2));
  assert.equal(r.outcome, "fallback");
  assert.equal(r.reason, "no_safe_boundary");
  assert.equal(splicer.stats().fallbacks.no_safe_boundary, 1);
});

test("counts-only mode stores no ids; asking for ids re-encodes, counted", () => {
  const splicer = new TokenSplicer(enc, { storeIds: false, maxBytes: 64 << 20 });
  const msgs: Array<[string, string]> = [["user", "one"]];
  check(splicer, render(msgs), chainOf(1), false);
  msgs.push(["assistant", "two"], ["user", "three"]);
  const r = check(splicer, render(msgs), chainOf(3), false);
  assert.equal(r.outcome, "partial");
  assert.equal(r.ids, null);
  msgs.push(["assistant", "four"], ["user", "five"]);
  const r2 = check(splicer, render(msgs), chainOf(5), true);
  assert.equal(r2.outcome, "fallback");
  assert.equal(r2.reason, "ids_not_stored");
});

test("the cut point keeps a margin of the longest added token before the common prefix ends", () => {
  // "<|im_start|>" is cached right at the end; the new text continues it into a longer
  // sequence. Reuse must stop at a boundary whose following window is fully shared.
  const splicer = new TokenSplicer(enc, { storeIds: true, maxBytes: 64 << 20 });
  const a = "<|im_start|>user\nx<|im_end|>\n<|im_start|>";
  const b = "<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n<|im_end|>";
  check(splicer, a, chainOf(1));
  check(splicer, b, chainOf(2));
});

test("property: any sequence of requests (appends, edits, branches, repeats), whole or segmented, equals whole encodes", () => {
  const specials = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<tool_call>", "<think>"];
  const message = fc.tuple(fc.constantFrom("system", "user", "assistant", "tool"), hostileText(specials, 8));
  const op = fc.oneof(
    fc.record({ kind: fc.constant("append" as const), msgs: fc.array(message, { minLength: 1, maxLength: 3 }) }),
    fc.record({ kind: fc.constant("edit" as const), at: fc.nat(), msg: message }),
    fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
    fc.record({ kind: fc.constant("gen" as const), on: fc.boolean() }),
    fc.record({ kind: fc.constant("revisit" as const), at: fc.nat() }),
  );
  fc.assert(
    fc.property(fc.array(op, { minLength: 1, maxLength: 14 }), fc.boolean(), fc.boolean(), (ops, storeIds, segmented) => {
      const splicer = new TokenSplicer(enc, { storeIds, maxBytes: 64 << 20 });
      let msgs: Array<[string, string]> = [["system", "sys"]];
      let salts: bigint[] = [1n];
      let gen = true;
      const seen: Array<[Array<[string, string]>, bigint[]]> = [];
      for (const o of ops) {
        if (o.kind === "append") {
          msgs = [...msgs, ...o.msgs];
          salts = [...salts, ...o.msgs.map(() => BigInt(Math.floor(Math.random() * 1e9)))];
        } else if (o.kind === "edit" && msgs.length > 0) {
          const i = o.at % msgs.length;
          msgs = msgs.map((m, j) => (j === i ? o.msg : m));
          salts = salts.map((s, j) => (j === i ? s + 1n : s));
        } else if (o.kind === "truncate" && msgs.length > 1) {
          const n = 1 + (o.at % msgs.length);
          msgs = msgs.slice(0, n);
          salts = salts.slice(0, n);
        } else if (o.kind === "gen") gen = o.on;
        else if (o.kind === "revisit" && seen.length > 0) [msgs, salts] = seen[o.at % seen.length] as [typeof msgs, bigint[]];
        seen.push([msgs, salts]);
        let h = 17n;
        const chain = salts.map((s) => (h = (h * 1_000_003n + s) % (1n << 62n)));
        check(splicer, render(msgs, gen), chain, storeIds, segmented);
      }
    }),
    { numRuns: 150 },
  );
});

test("a growing conversation keeps one track and extends it in place", () => {
  const splicer = new TokenSplicer(enc, { storeIds: true, maxBytes: 64 << 20 });
  const msgs: Array<[string, string]> = [["system", "S"], ["user", "q0"]];
  check(splicer, render(msgs), chainOf(2), true, true);
  const track = splicer.lookup(chainOf(2))?.cached.track;
  for (let i = 1; i < 6; i++) {
    msgs.push(["assistant", `a${i}`], ["user", `q${i}`]);
    check(splicer, render(msgs), chainOf(msgs.length), true, true);
    assert.equal(splicer.lookup(chainOf(msgs.length))?.cached.track, track, "same track object");
  }
  // a branch from an earlier point copies, leaving the main line intact
  const branch: Array<[string, string]> = [...msgs.slice(0, 4), ["user", "other"]];
  const bchain = [...chainOf(4), 999n];
  check(splicer, render(branch), bchain, true, true);
  assert.notEqual(splicer.lookup(bchain)?.cached.track, track);
  check(splicer, render(msgs), chainOf(msgs.length), true, true);
});

test("a cut near the end of the shared text is taken when the scan provably decided it on shared text", () => {
  // P and N share the system turn and "\n<|im_start|>user\n", nothing more. "<|im_end|>" starts
  // 28 characters before the common prefix ends, more than the longest raw added token (20): safe
  // by the length bound. "<|im_start|>" starts only 17 before it, but no raw token can start at any
  // of the positions from there on and reach past the shared text (the trie walk from each stops
  // inside it), so that cut is safe too and the splicer takes it.
  const splicer = new TokenSplicer(enc, { storeIds: true, maxBytes: 64 << 20 });
  const system = turn("system", "You are a careful assistant. ".repeat(20));
  check(splicer, system + turn("user", "Hello there") + GEN, chainOf(2));
  const r = check(splicer, system + turn("user", "Good morning") + GEN, [chainOf(1)[0] as bigint, 99n]); // same first message
  assert.equal(r.outcome, "partial");
  const through = enc.encodeWhole(system + "<|im_start|>").length; // through the user turn's <|im_start|>
  assert.equal(r.reused, through);
});
