/**
 * `deltatok/jinja`, the template engine on its own: imported by name (the package's "exports"), it
 * compiles and renders with variables, a clock and budgets and reports Python's error strings;
 * packed with `npm pack` and unpacked into a scratch project *without* the package's
 * dependencies, the README example runs and prints what the README says.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoPath } from "./helpers/paths.js";

type JinjaModule = typeof import("../src/template/jinja/index.js");

const built = existsSync(repoPath("dist", "src", "template", "jinja", "index.js"));

async function jinja(): Promise<JinjaModule> {
  return (await import("deltatok/jinja" as string)) as JinjaModule;
}

test("deltatok/jinja renders a chat template with variables, a clock and budgets", { skip: !built && "not built" }, async () => {
  const { compile, DEFAULT_BUDGET, parseJson } = await jinja();
  const t = compile(
    "{% for m in messages %}{{ m.role }}: {{ m.content }}|{{ m.n * 2 }}\n{% endfor %}" +
      "{% generation %}{{ strftime_now('%Y-%m-%d') }}{% endgeneration %}",
  );
  assert.equal(t.readsClock, true);
  const vars = parseJson('{"messages": [{"role": "user", "content": "hi", "n": 1.0}, {"role": "assistant", "content": "yo", "n": 3}]}') as Record<string, unknown>;
  const r = t.render(vars, { now: new Date("2026-01-02T03:04:05Z"), budget: { maxSteps: 1000 } });
  // 1.0 stays a Python float (2.0), 3 an int (6)
  assert.equal(r.text, "user: hi|2.0\nassistant: yo|6\n2026-01-02");
  assert.deepEqual(r.generation, [[r.text.length - 10, r.text.length]]);
  assert.ok(r.steps > 0 && r.steps < DEFAULT_BUDGET.maxSteps);
});

test("deltatok/jinja reports coded errors carrying Python's error string", { skip: !built && "not built" }, async () => {
  const { compile, pythonErrorString, DeltatokError } = await jinja();
  const cases: Array<[string, string, string]> = [
    ["{% for x in %}", "DT_TEMPLATE_SYNTAX", "TemplateSyntaxError: Expected an expression, got 'end of statement block'"],
    ["{{ raise_exception('no system role') }}", "DT_TEMPLATE_RAISED", "TemplateError: no system role"],
    ["{{ [].append(1) }}", "DT_TEMPLATE_SANDBOX", "SecurityError: access to attribute 'append' of 'list' object is unsafe."],
    ["{{ 1 + 'a' }}", "DT_TEMPLATE_RUNTIME", "TypeError: unsupported operand type(s) for +: 'int' and 'str'"],
  ];
  for (const [src, code, py] of cases) {
    assert.throws(
      () => compile(src).render({}),
      (e: unknown) => e instanceof DeltatokError && e.code === code && pythonErrorString(e) === py,
      src,
    );
  }
  // a budget stops the render with its own code
  assert.throws(
    () => compile("{% for i in range(100) %}{{ i }}{% endfor %}").render({}, { budget: { maxSteps: 10 } }),
    (e: unknown) => e instanceof DeltatokError && e.code === "DT_TEMPLATE_BUDGET",
  );
});

test("Markup.format_map escapes its arguments as Python does", { skip: !built && "not built" }, async () => {
  const { compile } = await jinja();
  assert.equal(compile("{{ ('{a}|' | safe).format_map({'a': '<b>'}) }}").render({}).text, "&lt;b&gt;|");
});

/** The README's example (the first ```js block) and the output it states (the ```text block after it). */
function readmeExample(): { code: string; output: string } {
  const md = readFileSync(repoPath("src", "template", "jinja", "README.md"), "utf8");
  const code = /```js\n([\s\S]*?)```/.exec(md);
  const output = /```js\n[\s\S]*?```[\s\S]*?```text\n([\s\S]*?)```/.exec(md);
  assert.ok(code !== null && output !== null, "README example or its output not found");
  return { code: code[1] as string, output: output[1] as string };
}

test("the packed package's deltatok/jinja runs the README example without the package's dependencies", { skip: !built && "not built", timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "deltatok-jinja-"));
  try {
    const out = execFileSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", dir], { cwd: repoPath(), encoding: "utf8" }).trim();
    const tarball = join(dir, out.split("\n").pop() as string);
    assert.ok(existsSync(tarball), `npm pack wrote no ${tarball}`);
    const project = join(dir, "project");
    const pkg = join(project, "node_modules", "deltatok");
    mkdirSync(pkg, { recursive: true });
    execFileSync("tar", ["-xzf", tarball, "-C", pkg, "--strip-components=1"]);
    assert.ok(existsSync(join(pkg, "src", "template", "jinja", "README.md")), "the README ships");
    assert.deepEqual(readdirSync(join(project, "node_modules")), ["deltatok"]);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "scratch", private: true, type: "module" }));
    const { code, output } = readmeExample();
    writeFileSync(join(project, "example.mjs"), code);
    const printed = execFileSync(process.execPath, ["example.mjs"], { cwd: project, encoding: "utf8" });
    assert.equal(printed, output);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
