/**
 * `deltatok check-template`: a line per probe on stderr while it runs (also when stderr is not a
 * terminal, unless --no-progress), so a check of a multi-megabyte template says where it is; and
 * a large template is checked, every probe answered.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./helpers/cli.js";

// a ChatML template carrying ~1 MB of literal text before the conversation
function bigTemplate(): string {
  const words = ["alpha", "beta", "gamma", "delta", "tool", "call", "weather", "Paris", "result", "json"];
  const parts: string[] = [];
  for (let i = 0, n = 0; n < 1_000_000; i++) {
    const w = words[(i * 7 + (i >> 3)) % words.length] as string;
    parts.push(w);
    n += w.length + 1;
  }
  return (
    `{{ '${parts.join(" ")}' }}` +
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}" +
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
  );
}

test("check-template says which probe runs, and answers every probe of a large template", async () => {
  const dir = mkdtempSync(join(tmpdir(), "deltatok-check-template-"));
  const file = join(dir, "big.jinja");
  writeFileSync(file, bigTemplate());
  const r = await runCli(["check-template", "--tokenizer", "qwen3", "--template", file], { timeoutMs: 300_000 });
  assert.equal(r.code, 0, r.stderr);
  const check = JSON.parse(r.stdout) as { probes: Array<{ probe: string; keeps_prefix: boolean | null }> };
  assert.equal(check.probes.length, 5);
  for (const p of check.probes) assert.equal(p.keeps_prefix, true, p.probe);
  const lines = r.stderr.split("\n").filter((l) => l.startsWith("check-template: probe "));
  assert.deepEqual(
    lines.map((l) => l.slice(0, "check-template: probe 1/5".length)),
    [1, 2, 3, 4, 5].map((i) => `check-template: probe ${i}/5`),
  );
  assert.ok(lines.every((l, i) => l.endsWith(check.probes[i]?.probe as string)));

  const quiet = await runCli(["check-template", "--tokenizer", "qwen3", "--template", file, "--no-progress"], { timeoutMs: 300_000 });
  assert.equal(quiet.code, 0, quiet.stderr);
  assert.ok(!quiet.stderr.includes("check-template: probe"), quiet.stderr);
});
