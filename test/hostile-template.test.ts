/**
 * Hostile templates: nothing a chat template does takes the process down (issue 12, items 3–5).
 * Every operation that builds a string, a list or a dict is charged to the render's build budget
 * before it builds (DESIGN.md, "Budgets"): past it the request fails with DT_TEMPLATE_BUDGET, and
 * the same Deltatok then answers a good request exactly; within it the output is the one the
 * default budget gives (Python's). The incremental renderer's tracking state has its own bound:
 * past it the render is done whole — the same output — and counted. The worst reproductions run
 * in a child process whose peak RSS must stay under the documented ceiling.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Deltatok } from "../src/api/deltatok.js";
import { DeltatokError } from "../src/errors.js";
import { compileTemplate } from "../src/template/index.js";
import { jsonl, runCli } from "./helpers/cli.js";
import { repoPath } from "./helpers/paths.js";

const DATE = "2026-11-30";
const convo = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "What is 2+2?" },
  { role: "assistant", content: "4" },
  { role: "user", content: "And 3+3?" },
];

/** A Deltatok with small budgets (2 M build units, 8 MiB of tracking), and one with the defaults. */
const small = await Deltatok.create({ date: DATE, templateBudget: { maxBuildUnits: 2_000_000, maxTrackBytes: 8 * 1024 * 1024 } });
const dflt = await Deltatok.create({ date: DATE });
const goodCount = dflt.countPrompt(convo);

function budgetError(f: () => unknown, what: string): DeltatokError {
  let err: unknown = null;
  try {
    f();
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof DeltatokError, `${what}: expected a DeltatokError, got ${String(err)}`);
  assert.equal(err.code, "DT_TEMPLATE_BUDGET", `${what}: ${err.message}`);
  return err;
}

/** The Deltatok fails the hostile request (whole and incremental renders alike), then answers a good one exactly. */
function failsThenAnswers(dt: Deltatok, template: string, kwargs: Record<string, unknown>, what: string): void {
  const options = { chat_template: template, chat_template_kwargs: kwargs };
  budgetError(() => dt.renderPrompt(convo, options), `${what} (render)`);
  budgetError(() => dt.countPrompt(convo, options), `${what} (incremental)`);
  assert.equal(dt.countPrompt(convo), goodCount, `${what}: the next good request`);
}

// ---- the reproductions -------------------------------------------------------------

test("reproduction: doubling a string with |replace in a namespace loop stops at the build budget", () => {
  const t = "{% set ns=namespace(s='a') %}{% for i in range(40) %}{% set ns.s=ns.s|replace('a','aa') %}{% endfor %}{{ns.s|length}}";
  failsThenAnswers(dflt, t, {}, "replace doubling");
});

test("reproduction: str.replace with an empty needle on 10**8 characters", () => {
  failsThenAnswers(dflt, "{{ ('a'*10**8).replace('','b') }}", {}, "empty-needle replace");
});

test("reproduction: a long string's |list (one item per character is charged)", () => {
  failsThenAnswers(dflt, "{{ ('ab'*10**8)|list }}", {}, "|list of 2·10^8 characters");
  // the string alone fits this budget; its list of one-character strings does not
  failsThenAnswers(small, "{{ ('ab'*n)|list|length }}", { n: 200_000 }, "|list of 400,000 characters");
  assert.equal(small.renderPrompt(convo, { chat_template: "{{ ('ab'*n)|list|length }}", chat_template_kwargs: { n: 1000 } }), "2000");
});

test("reproduction: nested loops are bounded (tracking budget, then steps / build units), never the heap", async () => {
  const dt = await Deltatok.create({ date: DATE });
  const t = (n: number) => `{% for i in range(100000) %}{% for j in range(${n}) %}{% endfor %}{% endfor %}{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}`;
  // 10^7 iterations: tracked they would need gigabytes of records; untracked the render is small
  const whole = dt.renderPrompt(convo, { chat_template: t(100) });
  const before = dt.stats().render?.trackingBudget ?? 0;
  const inc = dt.countPrompt(convo, { chat_template: t(100) });
  const full = await Deltatok.create({ date: DATE, mode: "full" });
  assert.equal(inc, full.countPrompt(convo, { chat_template: t(100) }));
  assert.equal(dt.stats().render?.trackingBudget, before + 1, "counted as fallback tracking_budget");
  assert.ok(whole.endsWith("<|im_start|>user\nAnd 3+3?<|im_end|>\n"));
  // 10^8 iterations are refused like a whole render refuses them
  failsThenAnswers(dt, t(1000), {}, "10^8 nested iterations");
});

test("reproduction: the hf-jinja renderer, which has no budgets, is not a public option", async () => {
  await assert.rejects(Deltatok.create({ renderer: "hf-jinja" }), (e: unknown) => e instanceof DeltatokError && e.code === "DT_INVALID_OPTION");
});

test("reproduction through the CLI: replay --template writes an error record per request and goes on", async () => {
  const dir = mkdtempSync(join(tmpdir(), "dt-hostile-"));
  try {
    const corpus = join(dir, "c.jsonl");
    writeFileSync(corpus, readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n")[0] + "\n");
    const tpl = join(dir, "t.jinja");
    writeFileSync(tpl, "{% set ns=namespace(s='a') %}{% for i in range(40) %}{% set ns.s=ns.s|replace('a','aa') %}{% endfor %}{{ns.s|length}}");
    const r = await runCli(["replay", corpus, "--template", tpl, "--date", DATE, "--no-osl"]);
    assert.equal(r.code, 0, r.stderr);
    const records = jsonl(r.stdout);
    const expected = (JSON.parse(readFileSync(corpus, "utf8")) as { messages: Array<{ role: string }> }).messages.filter((m) => m.role === "assistant").length;
    assert.equal(records.length, expected, "one record per request");
    for (const rec of records) assert.equal((rec.error as { code?: string } | undefined)?.code, "DT_TEMPLATE_BUDGET");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---- every builder that is charged ------------------------------------------------------------

/**
 * [what, template (sizes from the kwargs `n`), n within the small budget, n past it]. Within, the
 * render equals the default budget's; past, the request fails with DT_TEMPLATE_BUDGET.
 */
const BUILDERS: Array<[string, string, number, number]> = [
  ["~ concatenation (doubling)", "{% set ns = namespace(s='ab') %}{% for i in range(n) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}", 8, 30],
  ["+ of strings (doubling)", "{% set ns = namespace(s='ab') %}{% for i in range(n) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}", 8, 30],
  ["+ of lists (doubling)", "{% set ns = namespace(l=[1]) %}{% for i in range(n) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l|length }}", 8, 25],
  ["* of a string", "{{ ('ab' * n)|length }}", 1000, 2_000_000],
  ["* of a list", "{{ ([1, 2] * n)|length }}", 100, 200_000],
  ["str.replace with an empty needle", "{{ ('a' * n).replace('', 'b')|length }}", 100, 1_000_000],
  ["str.replace with a count", "{{ ('a' * n).replace('a', 'bbbb', n)|length }}", 100, 500_000],
  ["|replace", "{{ ('a' * n)|replace('a', 'bbb')|length }}", 100, 600_000],
  ["str.join", "{% set s = 'x' * n %}{{ ','.join([s, s, s])|length }}", 100, 500_000],
  ["|join", "{% set s = 'x' * n %}{{ [s, s, s]|join(',')|length }}", 100, 500_000],
  ["% formatting", "{% set s = 'x' * n %}{{ ('%s%s%s' % (s, s, s))|length }}", 100, 500_000],
  ["% formatting width", "{{ ('%*d' % (n, 1))|length }}", 10, 3_000_000],
  ["|format", "{% set s = 'x' * n %}{{ '%s%s%s'|format(s, s, s)|length }}", 100, 500_000],
  ["str.format", "{% set s = 'x' * n %}{{ '{}{}{}'.format(s, s, s)|length }}", 100, 500_000],
  ["str.format width", "{{ '{:>{w}}'.format(1, w=n)|length }}", 10, 3_000_000],
  ["str.format_map", "{% set s = 'x' * n %}{{ '{a}{a}{a}'.format_map({'a': s})|length }}", 100, 500_000],
  ["|list of a string", "{{ ('ab' * n)|list|length }}", 10, 100_000],
  ["a loop over a string's characters", "{% for c in 'ab' * n %}{% endfor %}ok", 10, 100_000],
  ["str.split", "{{ ('a ' * n).split()|length }}", 10, 150_000],
  ["str.rsplit", "{{ ('a,' * n).rsplit(',')|length }}", 10, 150_000],
  ["str.splitlines", "{{ ('a\\n' * n).splitlines()|length }}", 10, 150_000],
  ["case methods", "{% set s = 'ab' * n %}{{ (s.upper() ~ s.lower() ~ s.title() ~ s.swapcase() ~ s.capitalize() ~ s.casefold())|length }}", 10, 100_000],
  ["case filters", "{% set s = 'ab' * n %}{{ (s|upper ~ s|lower ~ s|title ~ s|capitalize)|length }}", 10, 150_000],
  ["center / ljust / rjust / zfill", "{{ ('x'.center(n) ~ 'x'.ljust(n) ~ 'x'.rjust(n) ~ '1'.zfill(n))|length }}", 10, 300_000],
  ["|center", "{{ 'x'|center(n)|length }}", 10, 3_000_000],
  ["|indent", "{{ ('a\\n' * n)|indent(8)|length }}", 10, 200_000],
  ["|wordwrap", "{{ ('word ' * n)|wordwrap(3)|length }}", 10, 100_000],
  ["|truncate", "{% set s = 'x' * n %}{{ s|truncate(n - 10, true)|length }}", 100, 1_200_000],
  ["|tojson of a shared structure", "{% set a = ['x' * n] * 10 %}{% set b = [a] * 10 %}{{ b|tojson|length }}", 10, 30_000],
  ["|tojson indent", "{{ [1, [2, [3]]]|tojson(indent=n)|length }}", 2, 1_000_000],
  ["|string (repr) of a shared structure", "{% set a = ['x' * n] * 10 %}{% set b = [a] * 10 %}{{ b|string|length }}", 10, 30_000],
  ["printing a shared structure", "{% set a = ['x' * n] * 10 %}{% set b = [a] * 10 %}{{ b }}", 10, 30_000],
  ["|pprint", "{% set a = ['x' * n] * 10 %}{% set b = [a] * 10 %}{{ b|pprint|length }}", 10, 30_000],
  ["%r", "{% set a = ['x' * n] * 10 %}{{ ('%r' % (a,))|length }}", 10, 300_000],
  ["range, materialized", "{% for i in range(n) %}{{ range(100000)|list|length }}{% endfor %}", 1, 10],
  ["dict.fromkeys and |dictsort", "{{ dict.fromkeys(range(n))|dictsort|length }}", 10, 30_000],
  ["|map", "{% for i in range(3) %}{{ range(n)|map('string')|list|length }}{% endfor %}", 10, 100_000],
  ["|batch fill", "{{ [1]|batch(n, 0)|list|first|length }}", 10, 1_000_000],
  ["|slice", "{% for i in range(5) %}{{ range(n)|slice(3)|list|length }}{% endfor %}", 10, 100_000],
  ["|sort", "{% for i in range(3) %}{{ range(n)|sort|length }}{% endfor %}", 10, 50_000],
  ["|groupby", "{{ range(n)|map('string')|groupby('0')|list|length }}", 10, 40_000],
  ["|unique", "{{ range(n)|map('string')|unique|list|length }}", 10, 60_000],
  ["|sum of lists", "{{ ([[1]] * n)|sum(start=[])|length }}", 10, 2000],
  ["|reverse", "{{ ('ab' * n)|reverse|length }}", 10, 100_000],
  ["|striptags", "{{ ('<a>x ' * n)|striptags|length }}", 10, 50_000],
  ["|urlencode", "{{ ('é' * n)|urlencode|length }}", 10, 300_000],
  ["|xmlattr", "{{ {'a': '<' * n}|xmlattr|length }}", 10, 400_000],
  ["str.expandtabs", "{{ ('\\t' * 10).expandtabs(n)|length }}", 10, 300_000],
  ["a string slice with a step", "{{ ('ab' * n)[::2]|length }}", 10, 600_000],
  ["list literals in a loop", "{% set ns = namespace(l=none) %}{% for i in range(n) %}{% set ns.l = [ns.l, i] %}{% endfor %}ok", 10, 100_000],
  ["dict literals in a loop", "{% set ns = namespace(d=none) %}{% for i in range(n) %}{% set ns.d = {'up': ns.d} %}{% endfor %}ok", 10, 30_000],
  ["tuple literals in a loop", "{% set ns = namespace(t=none) %}{% for i in range(n) %}{% set ns.t = (ns.t, i) %}{% endfor %}ok", 10, 50_000],
  ["dict() and namespace(**)", "{% set ns = namespace(**dict.fromkeys(range(n)|map('string'))) %}ok", 10, 20_000],
  ["the output buffer", "{% for i in range(n) %}{% for j in range(10) %}x{% endfor %}{% endfor %}", 10, 20_000],
  ["{% set %} captures", "{% set s = 'x' * 1000 %}{% for i in range(n) %}{% set c %}{{ s }}{% endset %}{% endfor %}ok", 1, 3000],
  ["macro calls and call blocks", "{% macro m() %}{{ caller() }}{{ caller() }}{% endmacro %}{% set s = 'x' * 1000 %}{% for i in range(n) %}{% call m() %}{{ s }}{% endcall %}{% endfor %}", 1, 1000],
  ["{% filter %} blocks", "{% set s = 'x' * 1000 %}{% for i in range(n) %}{% filter upper %}{{ s }}{% endfilter %}{% endfor %}", 1, 1000],
  ["{% generation %} spans", "{% for i in range(n) %}{% generation %}{% endgeneration %}{% endfor %}ok", 1, 50_000],
  ["strftime_now widths", "{{ strftime_now('%' ~ n ~ 'Y')|length }}", 6, 3_000_000],
  ["big integers kept", "{% set ns = namespace(l=none) %}{% for i in range(100) %}{% set ns.l = [ns.l, -(2 ** n)] %}{% endfor %}ok", 64, 1_000_000],
  ["|int of a long number", "{{ ('9' * n)|int % 10 }}", 10, 400_000],
  ["*args from a long list", "{{ cycler(*range(n)).next() }}", 10, 100_000],
  ["loop.length over an iterator", "{% for x in range(3) %}{% for y in range(n)|map('string') %}{{ loop.length if loop.first }}{% endfor %}{% endfor %}", 10, 60_000],
];

for (const [what, template, within, past] of BUILDERS) {
  test(`builder: ${what}`, () => {
    const ok = { chat_template: template, chat_template_kwargs: { n: within } };
    assert.equal(small.renderPrompt(convo, ok), dflt.renderPrompt(convo, ok), "within the budget: the default budget's render");
    small.countPrompt(convo, ok);
    failsThenAnswers(small, template, { n: past }, what);
  });
}

test("a whole render and an incremental one fail alike at the build budget, replayed units included", () => {
  // an incremental render replays unchanged units with their recorded charges: a render that
  // only passes the budget because of an appended message fails exactly as its whole render
  const t = compileTemplate("{% for m in messages %}{{ m.content * 1000 }}{% endfor %}");
  const budget = { maxBuildUnits: 50_000 };
  const msgs = [{ role: "user", content: "abcdefghij" }];
  let prev = null;
  for (let k = 0; k < 8; k++) {
    const vars = { messages: msgs.slice() };
    let whole: unknown = null;
    let text: string | null = null;
    try {
      text = t.render(vars, { budget }).text;
    } catch (e) {
      whole = e;
    }
    try {
      const r = t.renderIncremental(vars, { budget }, prev);
      assert.equal(whole, null, `render ${k}: the incremental render succeeded where the whole one failed`);
      assert.equal(r.segments.join(""), text);
      prev = { trace: r.trace, segments: r.segments };
    } catch (e) {
      assert.ok(whole instanceof DeltatokError && e instanceof DeltatokError, `render ${k}: ${String(e)}`);
      assert.equal(e.code, "DT_TEMPLATE_BUDGET");
      assert.equal(e.message, whole.message);
    }
    msgs.push({ role: "user", content: "abcdefghij" });
  }
});

// ---- the tracking bound ------------------------------------------------------------------------

test("past the tracking bound an incremental render is done whole: the same output, counted, and so are the conversation's next renders", () => {
  const t = compileTemplate("{% for m in messages %}{% for c in m.content %}[{{ c }}]{% endfor %}\n{% endfor %}");
  const budget = { maxTrackBytes: 200_000 };
  const msgs: Array<{ role: string; content: string }> = [];
  let prev = null;
  let untracked = 0;
  for (let k = 0; k < 6; k++) {
    msgs.push({ role: "user", content: "x".repeat(200 * (k + 1)) });
    const vars = { messages: msgs.slice() };
    const r = t.renderIncremental(vars, { budget }, prev);
    assert.equal(r.segments.join(""), t.render(vars, { budget }).text, `render ${k}`);
    assert.equal(r.steps, t.render(vars).steps);
    untracked += r.stats.trackingBudget;
    if (r.stats.trackingBudget > 0) assert.equal(r.stats.unitsExecuted + r.stats.iterationsExecuted, 0, "nothing tracked");
    prev = { trace: r.trace, segments: r.segments };
  }
  assert.ok(untracked >= 2, `renders past the bound: ${untracked}`);
  // the first renders fit: tracked
  const fresh = t.renderIncremental({ messages: [{ role: "user", content: "x" }] }, { budget }, null);
  assert.equal(fresh.stats.trackingBudget, 0);
});

test("the tracking bound through the Deltatok: stats().render.trackingBudget, and ids equal to a full render's", async () => {
  const template = "{% for m in messages %}<|im_start|>{{ m.role }}\n{% for c in m.content %}{{ c }}{% endfor %}<|im_end|>\n{% endfor %}";
  const dt = await Deltatok.create({ date: DATE, chatTemplate: template, templateBudget: { maxTrackBytes: 100_000 } });
  const full = await Deltatok.create({ date: DATE, chatTemplate: template, mode: "full" });
  const msgs = [...convo, { role: "assistant", content: "y".repeat(5000) }, { role: "user", content: "ok?" }];
  for (let k = 2; k <= msgs.length; k++) assert.deepEqual(dt.encodePrompt(msgs.slice(0, k)), full.encodePrompt(msgs.slice(0, k)), `request ${k}`);
  assert.ok((dt.stats().render?.trackingBudget ?? 0) >= 1);
});

test("template budget options are validated", async () => {
  for (const bad of [{ maxBuildUnits: 0 }, { maxBuildUnits: 2 ** 31 }, { maxSteps: 1.5 }, { maxTrackBytes: -1 }, { maxDepth: "9" }, { nope: 1 }]) {
    await assert.rejects(Deltatok.create({ templateBudget: bad as never }), (e: unknown) => e instanceof DeltatokError && e.code === "DT_INVALID_OPTION", JSON.stringify(bad));
  }
});

// ---- peak memory, in a child process ---------------------------------------------------------

/**
 * The documented ceiling (DESIGN.md, "Budgets"): peak RSS of a Deltatok process (tokenizer loaded)
 * rendering one of the worst templates on the default budgets, incrementally and whole (the
 * child collects garbage between requests: the peak is one render's).
 */
const RSS_CEILING_MB = 1024;

function child(indices: number[]): Promise<{ results: Array<{ what: string; code: string | null }>; goodOk: boolean; maxRssMb: number }> {
  const js = fileURLToPath(new URL("./helpers/hostile-child.js", import.meta.url));
  const argv = existsSync(js) ? [js] : ["--import", "tsx", fileURLToPath(new URL("./helpers/hostile-child.ts", import.meta.url))];
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ["--expose-gc", ...argv, ...indices.map(String)], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    c.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    c.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    c.on("error", reject);
    c.on("close", (code, signal) => {
      if (code !== 0) reject(new Error(`child exited ${code ?? signal}: ${stderr}`));
      else resolve(JSON.parse(stdout.trim().split("\n").pop() as string));
    });
  });
}

test(`peak RSS under ${RSS_CEILING_MB} MB on the default budgets, for each of the worst reproductions`, async () => {
  // grouped: the reproductions together, each of the heaviest alone (a process's RSS
  // also holds garbage V8 has not collected yet, so each group is measured in its own process);
  // two processes at a time
  const groups = [[0, 1, 2, 3], [4, 9, 10], [5], [6], [7], [8]];
  const reports: Array<Awaited<ReturnType<typeof child>>> = [];
  for (let i = 0; i < groups.length; i += 2) reports.push(...(await Promise.all(groups.slice(i, i + 2).map(child))));
  assert.equal(reports.flatMap((r) => r.results).length, 11);
  for (const report of reports) {
    for (const r of report.results) assert.ok(r.code === "DT_TEMPLATE_BUDGET" || r.code === null, `${r.what}: ${r.code}`);
    assert.ok(report.goodOk, "good requests answered between the hostile ones");
    assert.ok(report.maxRssMb < RSS_CEILING_MB, `peak RSS ${report.maxRssMb} MB: ${report.results.map((r) => r.what).join(", ")}`);
  }
});
