// Two builds of deltatok's template layer, measured alternately in fresh processes (one per
// measure, the order of the pair alternating): the CPU seconds and wall seconds of
//   render       whole renders of every request of a corpus (messages[:k] + generation prompt
//                for each assistant index k, the tokenizer's template and special tokens) — the
//                work of `--suite render`'s deltatok side;
//   incremental  the same requests rendered with renderIncremental, each conversation's requests
//                in order, each reusing the previous render — the template work of incremental ISL.
// Per pair and as medians, with the ratio B/A (> 1: B slower). Prints JSON.
//
//   node bench/template-ab.mjs DIR_A DIR_B [--pairs 8] [--passes 3] [--corpus FILE] [--tokenizer qwen3]
//
// DIR_A and DIR_B are checkouts with a built dist/ (npm run build).
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
if (args[0] === "--child") {
  const [, dir, mode, corpus, tokenizer, passesS] = args;
  const { readFileSync } = await import("node:fs");
  const { compileTemplate } = await import(`${dir}/dist/src/template/index.js`);
  const { parseJson } = await import(`${dir}/dist/src/json/index.js`);
  const { loadTokenizer } = await import(`${dir}/dist/src/load/index.js`);
  const loaded = await loadTokenizer(tokenizer);
  const source = loaded.templates.get("default") ?? [...loaded.templates.values()][0];
  const specials = loaded.specialTokens;
  const convs = [];
  for (const line of readFileSync(corpus, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const a = parseJson(line);
    const reqs = [];
    a.messages.forEach((m, k) => {
      if (m.role === "assistant") reqs.push({ messages: a.messages.slice(0, k), tools: a.tools ?? null, documents: null, add_generation_prompt: true, ...specials });
    });
    convs.push(reqs);
  }
  const now = new Date(Date.UTC(2026, 10, 30));
  const t = compileTemplate(source);
  const run = () => {
    let chars = 0;
    if (mode === "render") {
      for (const reqs of convs) for (const r of reqs) chars += t.render(r, { now }).text.length;
    } else {
      for (const reqs of convs) {
        let prev = null;
        for (const r of reqs) {
          const out = t.renderIncremental(r, { now }, prev);
          for (const s of out.segments) chars += s.length;
          prev = { trace: out.trace, segments: out.segments };
        }
      }
    }
    return chars;
  };
  run(); // warm-up
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
  const c0 = cpu();
  const w0 = performance.now();
  let chars = 0;
  for (let i = 0; i < Number(passesS); i++) chars += run();
  process.stdout.write(JSON.stringify({ cpu: cpu() - c0, wall: (performance.now() - w0) / 1000, chars }));
  process.exit(0);
}

const positional = args.filter((a, i) => !a.startsWith("--") && !(i > 0 && args[i - 1].startsWith("--")));
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const [dirA, dirB] = positional.map((d) => resolve(d));
if (dirA === undefined || dirB === undefined) {
  process.stderr.write("usage: node bench/template-ab.mjs DIR_A DIR_B [--pairs 8] [--passes 3] [--corpus FILE]\n");
  process.exit(2);
}
const pairs = Number(opt("pairs", "8"));
const passes = opt("passes", "3");
const tokenizer = opt("tokenizer", "qwen3");
const corpus = resolve(opt("corpus", fileURLToPath(new URL("../data/tau-bench-airline-20.jsonl", import.meta.url))));
const self = fileURLToPath(import.meta.url);
const measure = (dir, mode) => JSON.parse(execFileSync(process.execPath, [self, "--child", dir, mode, corpus, tokenizer, passes], { encoding: "utf8", maxBuffer: 1 << 24 }));
const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const result = { a: dirA, b: dirB, corpus, tokenizer, pairs, passes: Number(passes), modes: {} };
for (const mode of ["render", "incremental"]) {
  const rows = [];
  for (let p = 0; p < pairs; p++) {
    const order = p % 2 === 0 ? ["a", "b"] : ["b", "a"];
    const row = {};
    for (const which of order) row[which] = measure(which === "a" ? dirA : dirB, mode);
    if (row.a.chars !== row.b.chars) throw new Error(`${mode}: outputs differ in length (${row.a.chars} vs ${row.b.chars})`);
    rows.push({ cpu_a: row.a.cpu, cpu_b: row.b.cpu, wall_a: row.a.wall, wall_b: row.b.wall, cpu_ratio: row.b.cpu / row.a.cpu, wall_ratio: row.b.wall / row.a.wall });
  }
  const r4 = (x) => Math.round(x * 10000) / 10000;
  result.modes[mode] = {
    chars: measure(dirA, mode).chars,
    median_cpu_a: r4(median(rows.map((r) => r.cpu_a))),
    median_cpu_b: r4(median(rows.map((r) => r.cpu_b))),
    median_cpu_ratio: r4(median(rows.map((r) => r.cpu_ratio))),
    median_wall_a: r4(median(rows.map((r) => r.wall_a))),
    median_wall_b: r4(median(rows.map((r) => r.wall_b))),
    median_wall_ratio: r4(median(rows.map((r) => r.wall_ratio))),
    pairs: rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, r4(v)]))),
  };
}
process.stdout.write(JSON.stringify(result, null, 2) + "\n");
