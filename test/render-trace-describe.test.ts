/**
 * A trace in readable form: the observations and writes a tracked render records decode into
 * named, typed fields (records.ts `observationsOf`, `writesOf`), and `Trace.describe()` prints a
 * trace unit by unit — what a newcomer reads to see why a unit was or was not replayed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { compileTemplate } from "../src/template/index.js";
import { observationsOf, writesOf, type Observation } from "../src/template/incremental/records.js";

const SOURCE = [
  "{%- set ns = namespace(n=0) -%}",
  "{%- for m in messages -%}",
  "{%- set ns.n = ns.n + 1 -%}",
  "<{{ m.role }}>{{ m.content }}{% if loop.last %}!{% endif %}",
  "{%- endfor -%}",
  "{%- if add_generation_prompt %}<assistant>{% endif -%}",
].join("\n");

const now = new Date(Date.UTC(2026, 0, 1));

test("a trace decodes into typed observations and writes, and describe() prints them", () => {
  const t = compileTemplate(SOURCE);
  const messages = [
    { role: "user", content: "hi" },
    { role: "assistant", content: "hello" },
  ];
  const r = t.renderIncremental({ messages, add_generation_prompt: true }, { now }, null);
  assert.equal(r.segments.join(""), "<user>hi<assistant>hello!<assistant>");
  const units = r.trace.top.filter((u) => u !== null);
  assert.ok(units.length >= 3, "a unit per top-level statement");

  const all: Observation[] = [];
  const walk = (rec: (typeof units)[number]): void => {
    if (rec === null) return;
    all.push(...observationsOf(rec.observations));
    for (const l of rec.loops ?? []) for (const it of l.iters) walk(it);
  };
  for (const u of units) walk(u);
  const paths = new Set(all.flatMap((o) => ("path" in o ? [o.path] : [])));
  assert.ok(paths.has('messages[0]["content"]') || [...paths].some((p) => p.endsWith('["content"]')), `a read of a message's content: ${[...paths].join(", ")}`);
  const withInputs = all.flatMap((o) => ("inputs" in o ? [o, ...o.inputs] : [o]));
  assert.ok(withInputs.some((o) => o.kind === "loop-attribute" && o.attribute === "last"), "loop.last is observed by name (an input of the `if`)");
  assert.ok(all.some((o) => o.kind === "condition"), "the `if` is a condition observation");
  assert.ok(all.every((o) => typeof o.kind === "string"), "every observation has a named kind");

  const loopUnit = units.find((u) => u.loops !== null) ?? null;
  assert.notEqual(loopUnit, null, "the for loop's unit records its iterations");
  const iters = loopUnit?.loops?.[0]?.iters ?? [];
  assert.equal(iters.length, 2);
  const nsWrites = iters.flatMap((it) => writesOf(it.writes));
  assert.ok(nsWrites.some((w) => w.kind === "namespace-set" && w.attribute === "n"), `ns.n is written: ${JSON.stringify(nsWrites.map((w) => w.kind))}`);

  const text = r.trace.describe();
  assert.match(text, /^trace: \d+ units/);
  assert.match(text, /loop \(node \d+\): 2 iterations/);
  assert.match(text, /input loop\d+\.last = (true|false)/);
  assert.match(text, /reads value messages\[1\]\["content"\] = "hello"/);
  assert.match(text, /writes namespace .*\.n = /);
});

test("observationsOf refuses an observation kind it does not know", () => {
  assert.throws(() => observationsOf([99, 0, null, null, null]), /unknown observation kind 99/);
});
