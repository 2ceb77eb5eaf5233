#!/usr/bin/env node
// The test runner behind `npm test`: runs each compiled test file in its own `node --test`
// process, several at once, and prints one line per finished file with the count done, what is
// left and the time so far, so a long run shows where it is. Failures are printed in full at the
// end (the file's spec-reporter output), with the slowest files, and the exit code is 1.
//
//   node scripts/run-tests.mjs [--concurrency N] [--clock-ahead | --clock-ahead-files GLOBS] [--timeout-s S] PATH...
//
// PATH is a directory (every *.test.js below it) or a file. --clock-ahead preloads
// test/hooks/clock-ahead.mjs in the test process and, through NODE_OPTIONS, in every node process
// it starts, so the whole file sees a wall clock 400 days ahead; --clock-ahead-files does so for
// the files whose name matches one of GLOBS (comma-separated, `*` any characters), e.g. the files
// that read the wall clock, which then run once, on a day that is not today. A file still running after
// --timeout-s (default 900) is killed and counted as failed. Files run longest-first by the
// table below (measured on a 2-CPU machine); files not in it run after, in name order.
//
// Concurrency defaults to one more file than the machine has CPUs: a file that waits (a server
// starting, a child process, a timeout under test) leaves its CPU to the extra one, and when all
// are busy the kernel shares the CPUs among them, so the suite's wall time stays near its CPU time
// divided by the CPUs. On Linux the CPU time of each file's process and of the processes it waited
// for is read from the runner's own /proc/self/stat (cutime + cstime, which grow as a child is
// reaped) and printed with the wall time: where the suite's time goes, and how close it is to the
// CPU bound.
//
// The run has its own tokenizer disk cache (src/load/disk-cache.ts): one fresh temporary
// DELTATOK_CACHE_DIR for every test process and every process those start, removed at the end,
// so tests never read or write the user's cache and each tokenizer is built once per run.
// DELTATOK_CACHE_DIR=off in the runner's environment runs every process without the cache.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// Files that took the most CPU in a full run on a 2-CPU machine (most first, 2026-12-02); started
// first so the tail of a run is not one long file running alone.
const SLOW_FIRST = [
  "client-python-unittest.test.js",
  "cli-shard-merge-outputs.test.js",
  "stream-counter.test.js",
  "hostile-template.test.js",
  "encoder-ids.test.js",
  "corpus-ids-round-trip.test.js",
  "cli-tokenize.test.js",
  "cli-shard-merge.test.js",
  "cli-replay-signals.test.js",
  "api-vocabulary.test.js",
  "load-disk-cache.test.js",
  "serve-cluster-nginx.test.js",
  "tokenize-regex-oniguruma.test.js",
  "python-transformers-matrix.test.js",
  "budget.test.js",
  "load-shared-tables.test.js",
  "cli-exit-codes.test.js",
  "cli-rollout.test.js",
  "formats-incremental.test.js",
  "incremental-equals-full.test.js",
  "tokenize-stream-cjk.test.js",
  "load-hostile-files.test.js",
  "pool-shared-tables.test.js",
  "api-stream-counter.test.js",
  "rollout.test.js",
  "cli-merge-tampered.test.js",
  "tokenize-offsets.test.js",
];

function parseArgs(argv) {
  const options = { concurrency: availableParallelism() + 1, clockAhead: false, clockAheadFiles: null, timeoutS: 900, paths: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--concurrency") options.concurrency = positive(argv[++i], arg);
    else if (arg === "--timeout-s") options.timeoutS = positive(argv[++i], arg);
    else if (arg === "--clock-ahead") options.clockAhead = true;
    else if (arg === "--clock-ahead-files") options.clockAheadFiles = globs(argv[++i], arg);
    else if (arg.startsWith("--")) throw new Error(`unknown option ${arg}`);
    else options.paths.push(arg);
  }
  if (options.paths.length === 0) throw new Error("no test paths given");
  return options;
}

/** A matcher of file names for comma-separated globs (`*`: any characters). */
function globs(value, name) {
  if (value === undefined || value.trim() === "") throw new Error(`${name} needs comma-separated file name patterns`);
  const res = value.split(",").map((g) => new RegExp(`^${g.trim().replace(/[.+?^${}()|[\]\\]/g, "\\$&").replaceAll("*", ".*")}$`));
  return (file) => res.some((re) => re.test(basename(file)));
}

function positive(value, name) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} needs a positive integer, got ${value}`);
  return n;
}

function collect(path, out) {
  const stat = statSync(path);
  if (stat.isDirectory()) {
    for (const name of readdirSync(path).sort()) {
      const child = join(path, name);
      if (statSync(child).isDirectory()) collect(child, out);
      else if (name.endsWith(".test.js")) out.push(child);
    }
  } else out.push(path);
  return out;
}

function order(files) {
  const rank = (file) => {
    const i = SLOW_FIRST.indexOf(basename(file));
    return i === -1 ? SLOW_FIRST.length : i;
  };
  return [...files].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

// The counts the spec reporter prints last ("ℹ tests 12", "ℹ pass 12", ...).
function counts(output) {
  const pick = (word) => {
    const all = [...output.matchAll(new RegExp(`^\\S* ?${word} (\\d+)$`, "gm"))];
    return all.length > 0 ? Number(all[all.length - 1][1]) : 0;
  };
  return { tests: pick("tests"), pass: pick("pass"), fail: pick("fail"), skipped: pick("skipped"), todo: pick("todo") };
}

const clock = (ms) => {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${s}s`;
};

/**
 * CPU ms of the children this process has reaped (user + system, with what they reaped), or null
 * where /proc is absent. Clock ticks are 100 per second on Linux (USER_HZ).
 */
function reapedCpuMs() {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // after "pid (comm) ": state is field 3, so cutime (16) and cstime (17) are at 13 and 14
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return null;
  }
}

let reapedSeen = reapedCpuMs();

function runFile(file, options) {
  const hook = resolve(fileURLToPath(new URL("../test/hooks/clock-ahead.mjs", import.meta.url)));
  const args = [];
  const env = { ...process.env, DELTATOK_CACHE_DIR: options.cacheDir };
  if (options.clockAhead || (options.clockAheadFiles !== null && options.clockAheadFiles(file))) {
    args.push("--import", hook);
    env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ""} --import ${hook}`.trim();
  }
  args.push("--test", "--test-reporter=spec", file);
  return new Promise((done) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (s) => (output += s));
    child.stderr.setEncoding("utf8").on("data", (s) => (output += s));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, options.timeoutS * 1000);
    let cpuMs = null;
    child.on("exit", () => {
      // the child was just reaped: what the reaped CPU grew by since the last exit is its own
      // (two children reaped at once are counted to the first; the total stays exact)
      const now = reapedCpuMs();
      if (now !== null && reapedSeen !== null) cpuMs = now - reapedSeen;
      reapedSeen = now;
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const ms = performance.now() - started;
      const ok = code === 0 && !timedOut;
      if (timedOut) output += `\n[run-tests] killed after ${options.timeoutS} s\n`;
      else if (signal) output += `\n[run-tests] ended by ${signal}\n`;
      done({ file, ok, ms, cpuMs, output, ...counts(output) });
    });
  });
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (process.env.DELTATOK_CACHE_DIR === "off") options.cacheDir = "off";
  else {
    const dir = mkdtempSync(join(tmpdir(), "deltatok-test-cache-"));
    options.cacheDir = dir;
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
    for (const signal of ["SIGINT", "SIGTERM"]) process.once(signal, () => process.exit(130));
  }
  const files = order(options.paths.flatMap((p) => collect(p, [])));
  const started = performance.now();
  const cpuAtStart = reapedCpuMs();
  const results = [];
  let next = 0;
  const say = (line) => process.stdout.write(`${line}\n`);
  const ahead = options.clockAhead ? files.length : options.clockAheadFiles === null ? 0 : files.filter(options.clockAheadFiles).length;
  say(`${files.length} test files, ${options.concurrency} at a time${ahead === files.length ? ", wall clock 400 days ahead" : ahead > 0 ? `, ${ahead} of them with the wall clock 400 days ahead` : ""}`);
  async function lane() {
    while (next < files.length) {
      const file = files[next++];
      const r = await runFile(file, options);
      results.push(r);
      const left = files.length - results.length;
      const skipped = r.skipped ? `, ${r.skipped} skipped` : "";
      say(
        `[${String(results.length).padStart(String(files.length).length)}/${files.length}] ${r.ok ? "ok  " : "FAIL"} ` +
          `${basename(file)}: ${r.pass}/${r.tests} passed${skipped} in ${clock(r.ms)}${r.cpuMs === null ? "" : `, CPU ${clock(r.cpuMs)}`} ` +
          `(${clock(performance.now() - started)} so far, ${left} left)`,
      );
    }
  }
  await Promise.all(Array.from({ length: Math.min(options.concurrency, files.length) }, lane));
  const failed = results.filter((r) => !r.ok);
  for (const r of failed) say(`\n==== ${r.file} failed ====\n${r.output}`);
  const total = results.reduce((a, r) => ({ tests: a.tests + r.tests, pass: a.pass + r.pass, skipped: a.skipped + r.skipped }), { tests: 0, pass: 0, skipped: 0 });
  const slowest = [...results].sort((a, b) => b.ms - a.ms).slice(0, 8);
  say(`\nslowest: ${slowest.map((r) => `${basename(r.file)} ${clock(r.ms)}`).join(", ")}`);
  const wall = performance.now() - started;
  const cpuEnd = reapedCpuMs();
  const cpu = cpuEnd === null || cpuAtStart === null ? "" : `, CPU ${clock(cpuEnd - cpuAtStart)} on ${availableParallelism()} CPUs (wall ≥ ${clock((cpuEnd - cpuAtStart) / availableParallelism())})`;
  if (cpu !== "") {
    const hungriest = [...results].filter((r) => r.cpuMs !== null).sort((a, b) => b.cpuMs - a.cpuMs).slice(0, 8);
    say(`most CPU: ${hungriest.map((r) => `${basename(r.file)} ${clock(r.cpuMs)}`).join(", ")}`);
  }
  say(
    `${results.length} files, ${total.tests} tests: ${total.pass} passed, ${total.skipped} skipped, ` +
      `${failed.length} files failed; ${clock(wall)}${cpu}`,
  );
  process.exitCode = failed.length === 0 ? 0 : 1;
}

main().catch((error) => {
  process.stderr.write(`run-tests: ${error.message}\n`);
  process.exitCode = 2;
});
