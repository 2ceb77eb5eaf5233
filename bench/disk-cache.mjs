// The tokenizer disk cache (src/load/disk-cache.ts), measured in fresh processes, alternately:
// the CPU seconds of `Deltatok.create` and of a whole CLI command (`deltatok replay` of a one-line
// corpus: the start, the load, one request) with the cache off, cold (an empty cache directory:
// build and write the entry) and warm (the entry is there), per tokenizer, as medians, with
// the ratios off / warm and cold / off. CPU time (user + system), not wall time, so that other
// work on the shared machine moves the figures less. Prints JSON.
//
//   npm run build && node bench/disk-cache.mjs [--tokenizers qwen3,llama3_1,gemma3] [--rounds 3]
//
// create: process.cpuUsage() around `await Deltatok.create({tokenizer})` in the child (the
// import and the process start left out). cli: the child's whole CPU (getrusage of the child,
// through /usr/bin/time), start to exit.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const root = resolve(fileURLToPath(new URL("..", import.meta.url)));

if (args[0] === "--child") {
  const { Deltatok } = await import(`${root}/dist/src/index.js`);
  const c0 = process.cpuUsage();
  await Deltatok.create({ tokenizer: args[1] });
  const c = process.cpuUsage(c0);
  process.stdout.write(JSON.stringify({ cpu_s: (c.user + c.system) / 1e6 }));
  process.exit(0);
}

const arg = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? dflt : args[i + 1];
};
const tokenizers = arg("tokenizers", "qwen3,llama3_1,gemma3").split(",");
const rounds = Number(arg("rounds", "3"));
const work = mkdtempSync(join(tmpdir(), "dt-bench-disk-cache-"));
const corpus = join(work, "one.jsonl");
writeFileSync(corpus, `${JSON.stringify({ id: 1, messages: [{ role: "user", content: "Hello, how are you?" }, { role: "assistant", content: "Fine, thanks." }] })}\n`);

function env(cacheDir) {
  return { ...process.env, DELTATOK_CACHE_DIR: cacheDir, NODE_OPTIONS: "" };
}

function create(tokenizer, cacheDir) {
  const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), "--child", tokenizer], { env: env(cacheDir), stdio: ["ignore", "pipe", "ignore"] });
  return JSON.parse(out.toString()).cpu_s;
}

function cli(tokenizer, cacheDir) {
  const r = spawnSync(
    "/usr/bin/time",
    ["-f", "%U %S", process.execPath, join(root, "dist/src/cli/main.js"), "replay", corpus, "--tokenizer", tokenizer, "--no-osl", "--out", "/dev/null"],
    { env: env(cacheDir), stdio: ["ignore", "ignore", "pipe"] },
  );
  if (r.status !== 0) throw new Error(`the CLI failed (${r.status}): ${r.stderr}`);
  const [u, s] = r.stderr.toString().trim().split("\n").pop().split(" ").map(Number);
  return u + s;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const r3 = (x) => Math.round(x * 1000) / 1000;

const results = [];
for (const tokenizer of tokenizers) {
  const m = { create: { off: [], cold: [], warm: [] }, cli: { off: [], cold: [], warm: [] } };
  for (let r = 0; r < rounds; r++) {
    for (const [what, run] of [["create", create], ["cli", cli]]) {
      const dir = mkdtempSync(join(work, "cache-"));
      m[what].off.push(run(tokenizer, "off"));
      m[what].cold.push(run(tokenizer, dir));
      m[what].warm.push(run(tokenizer, dir));
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const row = { tokenizer, rounds };
  for (const what of ["create", "cli"]) {
    const off = median(m[what].off);
    const cold = median(m[what].cold);
    const warm = median(m[what].warm);
    row[what] = { off_cpu_s: r3(off), cold_cpu_s: r3(cold), warm_cpu_s: r3(warm), off_over_warm: r3(off / warm), cold_over_off: r3(cold / off) };
  }
  results.push(row);
  process.stdout.write(`${JSON.stringify(row)}\n`);
}
rmSync(work, { recursive: true, force: true });
