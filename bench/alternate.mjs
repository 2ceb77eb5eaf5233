// Two builds of deltatok, measured alternately in fresh processes: the CPU seconds of the limit
// (one encode of each final conversation of a corpus) and of the incremental ISL replay, per
// pair and as medians, with their ratio. CPU time, not wall time, so that other work on a shared
// machine moves the figures less; one process per measure so neither build warms the other.
//
//   node bench/alternate.mjs DIR_A DIR_B [--pairs 6] [--tokenizer qwen3] [--corpus FILE] [--no-replay]
//
// DIR_A and DIR_B are checkouts with a built dist/ (npm run build). With a tokenizer other than qwen3 the
// conversations are still rendered with qwen3 (the template of another tokenizer may reject the
// corpus) and only encoded with it (--no-replay implied). Prints JSON.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
if (args[0] === "--child") {
  const [, dir, tokenizer, corpus, replay] = args;
  const { Deltatok } = await import(`${dir}/dist/src/index.js`);
  const convs = readFileSync(corpus, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
  const renderer = await Deltatok.create({ tokenizer: "qwen3", mode: "full", date: "2026-11-30" });
  const finals = [];
  for (const c of convs) {
    try {
      finals.push(renderer.renderPrompt(c.messages, { tools: c.tools, add_generation_prompt: false }));
    } catch {
      // skipped alike by both builds
    }
  }
  const dt = tokenizer === "qwen3" ? renderer : await Deltatok.create({ tokenizer, mode: "full", date: "2026-11-30" });
  for (const t of finals.slice(0, 3)) dt.countText(t); // warm-up
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
  let c0 = cpu();
  let tokens = 0;
  for (const t of finals.slice(3)) tokens += dt.countText(t);
  const limit = cpu() - c0;
  let replaySeconds = null;
  let isl = null;
  if (replay === "1" && tokenizer === "qwen3") {
    const inc = await Deltatok.create({ tokenizer, mode: "incremental", date: "2026-11-30" });
    c0 = cpu();
    isl = 0;
    for (const c of convs) {
      for (let k = 0; k < c.messages.length; k++) {
        if (c.messages[k].role !== "assistant") continue;
        try {
          isl += inc.countPrompt(c.messages.slice(0, k), { tools: c.tools });
        } catch {
          // skipped alike by both builds
        }
      }
    }
    replaySeconds = cpu() - c0;
  }
  process.stdout.write(JSON.stringify({ limit, tokens, replay: replaySeconds, isl }));
  process.exit(0);
}

const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const [dirA, dirB] = args;
if (dirA === undefined || dirB === undefined || dirA.startsWith("--") || dirB.startsWith("--")) {
  console.error("usage: node bench/alternate.mjs DIR_A DIR_B [--pairs N] [--tokenizer NAME] [--corpus FILE] [--no-replay]");
  process.exit(2);
}
const a = resolve(dirA);
const b = resolve(dirB);
const pairs = Number(opt("--pairs", "6"));
const tokenizer = opt("--tokenizer", "qwen3");
// the default, like the other benchmarks': ../shared from the working directory
const corpus = resolve(opt("--corpus", "../shared/corpus/trajectories/tau-bench-airline-gpt-4o.jsonl"));
const replay = args.includes("--no-replay") ? "0" : "1";
const self = fileURLToPath(import.meta.url);
const run = (dir) => JSON.parse(execFileSync(process.execPath, [self, "--child", dir, tokenizer, corpus, replay], { encoding: "utf8", maxBuffer: 1 << 20 }));
const rows = [];
for (let i = 0; i < pairs; i++) rows.push({ a: run(a), b: run(b) });
const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const r3 = (x) => Math.round(x * 1000) / 1000;
const summary = (key) => {
  if (rows[0].a[key] === null) return null;
  const ma = median(rows.map((r) => r.a[key]));
  const mb = median(rows.map((r) => r.b[key]));
  return { a_cpu_s: r3(ma), b_cpu_s: r3(mb), ratio: r3(mb / ma), pairs: rows.map((r) => r3(r.b[key] / r.a[key])) };
};
console.log(
  JSON.stringify(
    {
      a,
      b,
      tokenizer,
      corpus,
      same_counts: rows.every((r) => r.a.tokens === r.b.tokens && r.a.isl === r.b.isl),
      tokens: rows[0].a.tokens,
      limit: summary("limit"),
      replay: summary("replay"),
    },
    null,
    2,
  ),
);
