/**
 * Checks deltatok against every reference file in ../shared/corpus/golden (made by Python Jinja2
 * + Rust tokenizers): for every request `<id>#<k>` (messages[:k] + generation prompt) and every
 * whole conversation `<id>#final`, the render's sha256 and code-point length, and — where the
 * golden file has a tokenizer — the token count and the sha256 of the ids (little-endian uint32).
 * Where Python raised, deltatok must raise too (and `raise_exception` messages must match).
 * Renders go through the incremental Deltatok, so this also checks reuse on real data.
 *
 *   node dist/scripts/golden-check.js [--renderer python|hf-jinja] [--only SUBSTRING] [--out FILE]
 *
 * Not part of `npm test` (CI has no ../shared); the vendored slices in test/fixtures/golden are.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { Deltatok } from "../src/api/deltatok.js";
import { UNBUDGETED_RENDERER, type DeltatokOptions } from "../src/api/options.js";
import { pythonJsonParser } from "../src/api/json.js";
import { parseCorpusLine, type Conversation } from "../src/corpus/corpus.js";
import { idLabel } from "../src/corpus/id.js";
import { toDeltatokError } from "../src/errors.js";
import type { RendererKind } from "../src/render/renderer.js";
import { codePointLength } from "../src/cli/render.js";

const SHARED = fileURLToPath(new URL("../../../shared/corpus/", import.meta.url));

interface Golden {
  id: string;
  chars?: number;
  rendered_sha256?: string;
  count?: number;
  ids_sha256?: string;
  error?: string;
}

interface TemplateInfo {
  short: string;
  file: string;
  tokenizer: string;
}

export function idsSha256(ids: Uint32Array): string {
  const le = new Uint8Array(ids.length * 4);
  const view = new DataView(le.buffer);
  for (let i = 0; i < ids.length; i++) view.setUint32(i * 4, ids[i] as number, true);
  return createHash("sha256").update(le).digest("hex");
}

function readJsonl<T>(path: string, parse: (l: string, i: number) => T | null): T[] {
  const out: T[] = [];
  readFileSync(path, "utf8")
    .split("\n")
    .forEach((l, i) => {
      if (l.trim() === "") return;
      const v = parse(l, i + 1);
      if (v !== null) out.push(v);
    });
  return out;
}

async function main(): Promise<void> {
  const { values: v } = parseArgs({
    options: { renderer: { type: "string", default: "python" }, only: { type: "string" }, out: { type: "string" } },
  });
  const templates = new Map(
    (JSON.parse(readFileSync(join(SHARED, "templates/_index.json"), "utf8")) as TemplateInfo[]).map((t) => [t.short, t]),
  );
  const files = readdirSync(join(SHARED, "golden")).filter((f) => f.endsWith(".jsonl") && (v.only === undefined || f.includes(v.only)));
  const report: Record<string, unknown>[] = [];
  let totalChecks = 0;
  let totalBad = 0;
  for (const file of files.sort()) {
    const m = /^(.+?)__(.+?)(\+parse-tool-arguments)?\.jsonl$/.exec(file);
    if (m === null) continue;
    const [, tshort, corpusName, pta] = m as unknown as [string, string, string, string | undefined];
    const t = templates.get(tshort);
    if (t === undefined) throw new Error(`no template ${tshort}`);
    const golden = readJsonl<Golden>(join(SHARED, "golden", file), (l) => JSON.parse(l) as Golden);
    // Files without counts were made with Qwen3's special tokens (no matching tokenizer here).
    const tokenizer = t.tokenizer === "none" || !golden.some((g) => g.count !== undefined) ? "qwen3" : t.tokenizer;
    const dt = await Deltatok.create({
      tokenizer,
      chatTemplateFile: join(SHARED, t.file),
      date: "2026-11-30",
      renderer: v.renderer as RendererKind,
      cacheBytes: 1 << 30,
      // (the unbudgeted hf-jinja renderer, for comparison)
      [UNBUDGETED_RENDERER]: v.renderer === "hf-jinja",
    } as DeltatokOptions);
    const convs = new Map<string, Conversation>();
    for (const c of readJsonl(join(SHARED, "trajectories", `${corpusName}.jsonl`), (l, i) => {
      const r = parseCorpusLine(l, i, pythonJsonParser);
      return "error" in r ? null : r;
    })) {
      convs.set(idLabel(c.id), c);
    }
    let bad = 0;
    let renderBad = 0;
    let countBad = 0;
    let idsBad = 0;
    let errorBad = 0;
    let first: string | null = null;
    const t0 = performance.now();
    for (const g of golden) {
      const hash = g.id.lastIndexOf("#");
      const conv = convs.get(g.id.slice(0, hash));
      const which = g.id.slice(hash + 1);
      if (conv === undefined) throw new Error(`${file}: conversation of ${g.id} not found`);
      const final = which === "final";
      const messages = final ? conv.messages : conv.messages.slice(0, Number(which));
      const opts = { tools: conv.tools, chat_template_kwargs: conv.chat_template_kwargs, parse_tool_arguments: pta !== undefined, add_generation_prompt: !final };
      let problem: string | null = null;
      try {
        const text = dt.renderPrompt(messages, opts);
        if (g.error !== undefined) {
          problem = `Python raised ${g.error.slice(0, 80)}, deltatok rendered`;
          errorBad++;
        } else {
          const sha = createHash("sha256").update(text, "utf8").digest("hex");
          if (sha !== g.rendered_sha256 || codePointLength(text) !== g.chars) {
            problem = `render differs (chars ${codePointLength(text)} vs ${g.chars})`;
            renderBad++;
          } else if (g.count !== undefined) {
            const ids = dt.encodePrompt(messages, opts);
            if (ids.length !== g.count) {
              problem = `count ${ids.length} vs ${g.count}`;
              countBad++;
            } else if (g.ids_sha256 !== undefined && idsSha256(ids) !== g.ids_sha256) {
              problem = "ids differ";
              idsBad++;
            }
          }
        }
      } catch (e) {
        const err = toDeltatokError(e);
        if (g.error === undefined) {
          problem = `deltatok raised ${err.code}: ${err.message.slice(0, 100)}`;
          errorBad++;
        } else if (err.code === "DT_TEMPLATE_RAISED" && !g.error.includes(err.message)) {
          problem = `raise_exception message differs: ${err.message.slice(0, 80)} vs ${g.error.slice(0, 80)}`;
          errorBad++;
        }
      }
      if (problem !== null) {
        bad++;
        first ??= `${g.id}: ${problem}`;
      }
    }
    const s = dt.stats();
    totalChecks += golden.length;
    totalBad += bad;
    const row = {
      file,
      tokenizer,
      checks: golden.length,
      with_count: golden.filter((g) => g.count !== undefined).length,
      differ: bad,
      render_differ: renderBad,
      count_differ: countBad,
      ids_differ: idsBad,
      error_differ: errorBad,
      first_diff: first,
      reuse: { partial: s.partial, hits: s.hits, misses: s.misses, fallbacks: s.fallbacks },
      seconds: Math.round(performance.now() - t0) / 1000,
    };
    report.push(row);
    process.stderr.write(`${bad === 0 ? "ok  " : "DIFF"} ${file}: ${golden.length} checks, ${bad} differ${first ? ` — ${first}` : ""}\n`);
  }
  const out = { renderer: v.renderer, files: report.length, checks: totalChecks, differ: totalBad, report };
  const json = JSON.stringify(out, null, 2);
  if (v.out !== undefined) writeFileSync(v.out, json + "\n");
  process.stdout.write(JSON.stringify({ renderer: v.renderer, files: report.length, checks: totalChecks, differ: totalBad }) + "\n");
  process.exitCode = totalBad === 0 ? 0 : 1;
}

if (!existsSync(SHARED)) {
  process.stderr.write(`golden-check: ${SHARED} not found\n`);
  process.exitCode = 2;
} else {
  await main();
}
