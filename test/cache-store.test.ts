import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { ConversationStore, cachedRenderBytes, type CachedRender } from "../src/cache/store.js";
import { TokenTrack } from "../src/cache/token-track.js";

function snap(chain: bigint[], text = "x".repeat(100)): CachedRender {
  const track = new TokenTrack(true, 16);
  track.ids?.pushAll(new Uint32Array(10));
  return { segments: [text], length: text.length, track, count: 10, nBounds: 0, chain, trace: null, traceBytes: 0 };
}

test("lookup finds the snapshot sharing the longest message prefix", () => {
  const s = new ConversationStore({ maxBytes: 1 << 20 });
  assert.equal(s.lookup([1n, 2n]), undefined);
  s.commit(snap([1n, 2n, 3n]), undefined);
  const f = s.lookup([1n, 2n, 3n, 4n, 5n]);
  assert.ok(f);
  assert.equal(f.sharedMessages, 3);
  assert.equal(s.lookup([9n]), undefined);
});

test("a continuation replaces its conversation's snapshot; a branch starts a new one", () => {
  const s = new ConversationStore({ maxBytes: 1 << 20 });
  s.commit(snap([1n, 2n]), undefined);
  const f1 = s.lookup([1n, 2n, 3n, 4n]);
  s.commit(snap([1n, 2n, 3n, 4n]), f1);
  assert.equal(s.lineages, 1, "continuation stays in one lineage");
  // a request sharing only the first two messages still finds the conversation
  const f2 = s.lookup([1n, 2n, 7n]);
  assert.ok(f2);
  assert.equal(f2.sharedMessages, 2);
  assert.deepEqual(f2.cached.chain, [1n, 2n, 3n, 4n]);
  s.commit(snap([1n, 2n, 7n]), f2);
  assert.equal(s.lineages, 2, "branch is a new lineage");
  assert.deepEqual(s.lookup([1n, 2n, 7n, 8n])?.cached.chain, [1n, 2n, 7n]);
  assert.deepEqual(s.lookup([1n, 2n, 3n, 4n, 5n])?.cached.chain, [1n, 2n, 3n, 4n]);
});

test("bytes held stay under the bound; evicted conversations are not found", () => {
  const one = cachedRenderBytes(snap([1n], "y".repeat(10_000))) + 64;
  const s = new ConversationStore({ maxBytes: one * 5 });
  for (let i = 1; i <= 50; i++) {
    s.commit(snap([BigInt(i)], "y".repeat(10_000)), undefined);
    assert.ok(s.bytes <= one * 5, `bytes ${s.bytes} over bound after ${i}`);
  }
  assert.equal(s.lineages, 5);
  assert.equal(s.evictions, 45);
  assert.equal(s.lookup([1n]), undefined);
  assert.ok(s.lookup([50n]));
});

test("a snapshot larger than the whole cache is not kept and leaves no alias", () => {
  const s = new ConversationStore({ maxBytes: 1000 });
  s.commit(snap([1n], "z".repeat(5000)), undefined);
  assert.equal(s.lookup([1n]), undefined);
  assert.equal(s.lineages, 0);
});

test("store behaves like a model map of chains under random commits (no eviction)", () => {
  // Model: every committed chain prefix maps to the latest snapshot committed through it,
  // unless a later branch took that prefix position.
  fc.assert(
    fc.property(fc.array(fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 6 }), { maxLength: 25 }), (convs) => {
      const s = new ConversationStore({ maxBytes: 1 << 30 });
      for (const c of convs) {
        // chain hashes: cumulative so prefixes are shared
        const chain: bigint[] = [];
        let h = 7n;
        for (const m of c) chain.push((h = h * 31n + BigInt(m)));
        const found = s.lookup(chain);
        if (found !== undefined) {
          // found snapshot shares exactly sharedMessages leading hashes with the request
          assert.equal(found.cached.chain[found.sharedMessages - 1], chain[found.sharedMessages - 1]);
        }
        s.commit(snap(chain), found);
        const again = s.lookup(chain);
        assert.ok(again);
        assert.equal(again.sharedMessages, chain.length);
        assert.equal(again.cached.chain, chain);
      }
    }),
    { numRuns: 300 },
  );
});
