/**
 * The check-template table of docs/ROLLOUTS.md: every template of ../shared/corpus/templates
 * with its matching tokenizer (Qwen3's where none is bundled), probed by `deltatok
 * check-template`'s probes. Prints markdown. Usage (after npm run build):
 *   node dist/scripts/check-template-table.js [../shared/corpus/templates]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Deltatok } from "../src/api/deltatok.js";
import { checkTemplate } from "../src/cli/check-template.js";

const dir = process.argv[2] ?? join("..", "shared", "corpus", "templates");
const index = JSON.parse(readFileSync(join(dir, "_index.json"), "utf8")) as Array<{ short: string; file: string; tokenizer: string }>;
const BUNDLED = new Set(["qwen3", "deepseek_v3", "llama3_1", "gemma3", "gptoss"]);
const cell = (p: ReturnType<typeof checkTemplate>["probes"][number]) =>
  p.error !== undefined ? `— (${p.error.code.replace("DT_TEMPLATE_", "").toLowerCase()})` : p.keepsPrefix === true ? "keeps" : `**${p.reason}** @${p.at}`;
let header = false;
for (const t of index) {
  const tokenizer = BUNDLED.has(t.tokenizer) ? t.tokenizer : "qwen3";
  const dt = await Deltatok.create({ tokenizer, chatTemplateFile: join(dir, t.file.replace(/^templates\//, "")), date: "2026-11-30" });
  const c = checkTemplate(dt, t.short);
  if (!header) {
    console.log(`| template | tokenizer | ${c.probes.map((p) => p.probe).join(" | ")} | generation prompt kept |`);
    console.log(`|---|---|${c.probes.map(() => "---").join("|")}|---|`);
    header = true;
  }
  console.log(`| ${t.short} | ${tokenizer}${BUNDLED.has(t.tokenizer) ? "" : "*"} | ${c.probes.map(cell).join(" | ")} | ${c.generationPromptKept === null ? "—" : c.generationPromptKept ? "yes" : "no"} |`);
}
