/**
 * Incremental rendering is exact on small synthetic templates built to stress what real chat
 * templates exercise only in passing: loops run backwards (positions shift on every append),
 * conditions on loop positions against namespace state and against message fields, previous /
 * next items and the loop's length, reads of other messages, look-ahead loops that grow, and
 * namespaces written by some iterations and read by others. Generated message lists and edit
 * scripts (append, rewind, in-place mutation, rewrite), with and without the messages' content
 * versions (which enable replaying runs of unchanged iterations): every request equals the full
 * render — text and steps.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { compileTemplate, type PreviousRender } from "../src/template/index.js";
import { validateMessages } from "../src/render/messages.js";

const TEMPLATES: Record<string, string> = {
  "positions, backwards": `{%- set ns = namespace(k=2) %}{%- for message in messages[::-1] %}{%- if loop.index0 > message.n %}A{%- elif loop.index0 > ns.k %}B{%- elif loop.index <= ns.k %}C{%- else %}D{%- endif %}{{ message.content }}{%- endfor %}`,
  "previous and next items": `{%- for m in messages %}{%- if loop.previtem and loop.previtem.role != "tool" %}<{%- endif %}{{ m.role }}:{{ m.content }}{%- if not loop.last and loop.nextitem.role != "tool" %}>{%- endif %}{%- endfor %}`,
  "last query, Qwen3-like": `{%- set ns = namespace(last=-1, flag=true) %}{%- for m in messages[::-1] %}{%- set i = messages|length - 1 - loop.index0 %}{%- if ns.flag and m.role == "user" %}{%- set ns.flag = false %}{%- set ns.last = i %}{%- endif %}{%- endfor %}{%- for m in messages %}{%- if loop.index0 > ns.last and m.role == "assistant" %}[{{ m.content }}]{%- elif m.role == "tool" and (loop.first or messages[loop.index0 - 1].role != "tool") %}<{{ m.content }}{%- else %}{{ m.content }}{%- endif %}{%- endfor %}`,
  "length and other messages": `{%- for m in messages %}{{ loop.revindex }}{%- if loop.index0 >= loop.length - 2 %}*{%- endif %}{%- if loop.index0 > 0 and messages[loop.index0 - 1].role == m.role %}={%- endif %}{{ m.content }}{%- if m.n > loop.index %}!{%- endif %}{%- endfor %}`,
  "growing look-ahead": `{%- for m in messages[::-1] %}[{{ m.content }}:{%- for x in messages[loop.index0:] %}{%- if x.role == "tool" and loop.last %}L{%- endif %}{%- endfor %}]{%- endfor %}`,
  "namespace per role": `{%- set ns = namespace(seen="", count=0) %}{%- for m in messages %}{%- if m.role != ns.seen %}{%- set ns.seen = m.role %}{%- set ns.count = ns.count + 1 %}|{{ ns.count }}{%- endif %}{%- if loop.index0 < ns.count %}^{%- endif %}{{ m.content }}{%- endfor %}`,
};

type Msg = { role: string; content: string; n: number };

const message: fc.Arbitrary<Msg> = fc.record({
  role: fc.constantFrom("user", "assistant", "tool"),
  content: fc.constantFrom("", "a", "b", "cc", "d d"),
  n: fc.integer({ min: 0, max: 9 }),
});

type Edit = { kind: "grow"; n: number } | { kind: "back"; n: number } | { kind: "mutate"; at: number; m: Msg } | { kind: "rewrite"; at: number; m: Msg };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 3 }).map((n) => ({ kind: "grow" as const, n })) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 2 }).map((n) => ({ kind: "back" as const, n })) },
  { weight: 2, arbitrary: fc.record({ at: fc.nat(), m: message }).map((r) => ({ kind: "mutate" as const, ...r })) },
  { weight: 1, arbitrary: fc.record({ at: fc.nat(), m: message }).map((r) => ({ kind: "rewrite" as const, ...r })) },
);

const now = new Date(Date.UTC(2026, 10, 30));

for (const [name, source] of Object.entries(TEMPLATES)) {
  test(`incremental render == full render (synthetic): ${name}`, () => {
    const t = compileTemplate(source);
    fc.assert(
      fc.property(
        fc.array(message, { minLength: 4, maxLength: 40 }),
        fc.array(edit, { minLength: 3, maxLength: 20 }),
        fc.boolean(),
        fc.array(fc.nat({ max: 7 }), { minLength: 8, maxLength: 8 }),
        (generated, script, withVersions, picks) => {
          const ms = generated.map((m) => ({ ...m }));
          let k = Math.min(2, ms.length);
          const history: PreviousRender[] = [];
          let last: PreviousRender | null = null;
          const request = (step: number): void => {
            const list = ms.slice(0, k);
            const vars = { messages: list };
            const versions: number[] = [];
            validateMessages(list, { maxPromptChars: 1 << 20 }, "messages", versions);
            const pick = picks[step % picks.length] as number;
            const prev = pick < 6 ? last : (history[pick % Math.max(1, history.length)] ?? null);
            const r = t.renderIncremental(vars, { now, itemVersions: withVersions ? { list, versions } : undefined }, prev);
            const w = t.render(vars, { now });
            assert.deepEqual({ text: r.segments.join(""), steps: r.steps }, { text: w.text, steps: w.steps }, `request ${step} (${k} messages)`);
            last = { trace: r.trace, segments: r.segments };
            history.push(last);
          };
          request(0);
          script.forEach((e, i) => {
            if (e.kind === "grow") k = Math.min(ms.length, k + e.n);
            else if (e.kind === "back") k = Math.max(1, k - e.n);
            else if (e.kind === "mutate") Object.assign(ms[e.at % k] as Msg, e.m);
            else ms[e.at % k] = { ...e.m };
            request(i + 1);
          });
        },
      ),
      { numRuns: Number(process.env.DELTATOK_PROPERTY_RUNS ?? 60) },
    );
  });
}
