/**
 * Child process of test/hostile-template.test.ts: one Deltatok on the default budgets renders some
 * of the worst templates known (argv: their indices in WORST), each incrementally, as a request
 * does, and whole, with a good request after each; prints `{ results, goodOk, maxRssMb }` (the
 * peak RSS of this process) as one JSON line. Run with --expose-gc, it collects the garbage of
 * each request before the next, so the peak is one render's (not V8's lazy collection across
 * several).
 */
import { Deltatok } from "../../src/api/deltatok.js";
import { DeltatokError } from "../../src/errors.js";

export const WORST: Array<[string, string]> = [
  ["replace doubling", "{% set ns=namespace(s='a') %}{% for i in range(40) %}{% set ns.s=ns.s|replace('a','aa') %}{% endfor %}{{ns.s|length}}"],
  ["empty-needle replace", "{{ ('a'*10**8).replace('','b') }}"],
  ["|list of 10^7 characters", "{{ ('ab'*5000000)|list|length }}"],
  ["10^7 nested iterations (tracking bound)", "{% for i in range(100000) %}{% for j in range(100) %}{% endfor %}{% endfor %}"],
  ["10^8 nested iterations", "{% for i in range(100000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}"],
  ["output written one character at a time", "{% for i in range(100000) %}{% for j in range(500) %}{{ 'x' }}{% endfor %}{% endfor %}"],
  ["big integers kept", "{% set x = 2**1000000 %}{% set ns=namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = [ns.l, -x] %}{% endfor %}"],
  ["loop contexts kept", "{% set ns=namespace(l=[]) %}{% for i in range(100000) %}{% for j in range(100000) %}{% set ns.l = [ns.l, loop] %}{% break %}{% endfor %}{% endfor %}"],
  ["ranges kept", "{% set ns=namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = [ns.l, range(100000)|list] %}{% endfor %}"],
  ["a shared structure printed", "{% set a = ['x' * 1000] * 1000 %}{% set b = [a] * 1000 %}{{ b }}"],
  ["a shared structure as JSON", "{% set a = ['x' * 1000] * 1000 %}{% set b = [a] * 1000 %}{{ b|tojson }}"],
];

const convo = [
  { role: "user", content: "What is 2+2?" },
  { role: "assistant", content: "4" },
  { role: "user", content: "And 3+3?" },
];

const dt = await Deltatok.create({ date: "2026-11-30" });
const good = dt.countPrompt(convo);
let goodOk = true;
const results: Array<{ what: string; code: string | null }> = [];
for (const i of process.argv.slice(2).map(Number)) {
  const [what, template] = WORST[i] as [string, string];
  let code: string | null = null;
  for (const f of [() => dt.countPrompt(convo, { chat_template: template }), () => dt.renderPrompt(convo, { chat_template: template })]) {
    (globalThis as { gc?: () => void }).gc?.();
    try {
      f();
    } catch (e) {
      code = e instanceof DeltatokError ? e.code : `not a DeltatokError: ${String(e)}`;
    }
  }
  results.push({ what, code });
  if (dt.countPrompt(convo) !== good) goodOk = false;
}
process.stdout.write(JSON.stringify({ results, goodOk, maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024) }) + "\n");
