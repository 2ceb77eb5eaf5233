// Issue 14: is 0.7× the library reachable at all with a client in another process? Runs, alternating
// in one session for --rounds rounds, each a fresh process:
//   lib  — the in-process library loop (bench/sidecar-replay.mjs's "lib" mode, = bench/python.ts's);
//   real — clients/python/scripts/bench_loop.py over the real `deltatok serve`;
//   fake — the same unmodified bench_loop.py over bench/echo-sidecar.mjs (recorded answers: the
//          client + transport + a minimal server, zero Deltatok work);
//   min  — bench/min_client.py over the same fake (the floor of any Python client);
//   fake_spin, min_spin — the same two with the fake spending the library's own per-request time
//          (this round's lib wall / requests) in a busy wait before each prompt answer: a Deltatok
//          exactly as fast as in process, behind a server that adds nothing, so lib / loop is the
//          ratio that client reaches with the ping-pong's overlap and wake-ups included.
// Prints JSON: each run (wall s, CPU s, tokens, the load average before it), per-request µs
// medians, and per round the ratios lib/real (the criterion's), lib/(lib + fake) (the best the
// real client could reach if the Deltatok cost in another process what it costs in process and
// nothing overlapped), lib/(lib + min) (the same for any Python client), lib/fake_spin and
// lib/min_spin, with their medians. Checks that every Python run got the recording's token total
// (the fake's answers matched).
//
//   # record once (see bench/echo-sidecar.mjs): /tmp/req.jsonl and /tmp/ans.jsonl, then
//   node bench/python-floor.mjs /tmp/req.jsonl /tmp/ans.jsonl [--rounds 5] [--build DIR] [--corpus CORPUS] [--warm 20]
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { replayArgs } from "./replay-args.mjs";

const { args, opt, here, build, corpus } = replayArgs();
const warm = opt("--warm", "20");
const rounds = Number(opt("--rounds", "5"));
const python = opt("--python", "python3");
const [requests, answers] = args;
if (requests === undefined || answers === undefined || requests.startsWith("--") || answers.startsWith("--")) {
  throw new Error("usage: node bench/python-floor.mjs REQUESTS.jsonl ANSWERS.jsonl [--rounds N] [--build DIR] [--corpus CORPUS] [--warm N]");
}
const loop = resolve(here, "../clients/python/scripts/bench_loop.py");
const q = (s) => `'${s.replace(/'/g, "'\\''")}'`;
const run = (cmd, argv, env) => JSON.parse(execFileSync(cmd, argv, { encoding: "utf8", env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] }));

const echo = (spin) => `${q(process.execPath)} ${q(resolve(here, "echo-sidecar.mjs"))} ${q(answers)}${spin ? ` --spin-us ${spin}` : ""}`;
let spinUs = 0; // this round's library µs a request
const modes = {
  lib: () => run(process.execPath, [resolve(here, "sidecar-replay.mjs"), "--child", "lib", requests, "--build", build, "--corpus", corpus, "--warm", warm]),
  real: () => run(python, [loop, corpus, "--warm", warm], { DELTATOK_CMD: `${q(process.execPath)} ${q(`${build}/dist/src/cli/main.js`)}` }),
  fake: () => run(python, [loop, corpus, "--warm", warm], { DELTATOK_CMD: echo(0) }),
  min: () => run(python, [resolve(here, "min_client.py"), requests, answers, "--warm", warm, "--server", `${q(process.execPath)} ${q(resolve(here, "echo-sidecar.mjs"))}`]),
  fake_spin: () => run(python, [loop, corpus, "--warm", warm], { DELTATOK_CMD: echo(spinUs) }),
  min_spin: () => run(python, [resolve(here, "min_client.py"), requests, answers, "--warm", warm, "--server", `${q(process.execPath)} ${q(resolve(here, "echo-sidecar.mjs"))}`, "--spin-us", String(spinUs)]),
};

const runs = [];
let tokens = null;
for (let r = 1; r <= rounds; r++) {
  for (const mode of Object.keys(modes)) {
    const load = Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
    const out = modes[mode]();
    if (mode === "lib") spinUs = Math.round((out.wall_s / out.requests) * 1e6);
    if (mode !== "lib") {
      tokens ??= out.tokens;
      if (out.tokens !== tokens) throw new Error(`${mode} round ${r}: ${out.tokens} tokens, the first Python run ${tokens}`);
    }
    runs.push({ round: r, mode, load_before: load, ...(mode.endsWith("_spin") ? { spin_us: spinUs } : {}), ...out });
  }
}

const median = (xs) => {
  const s = xs.filter((x) => x !== null && x !== undefined).sort((a, b) => a - b);
  return s.length === 0 ? null : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const r3 = (x) => (x === null ? null : Math.round(x * 1000) / 1000);
const us = (s, n) => (s === null || s === undefined ? null : Math.round((s / n) * 1e6));
const n = runs.find((x) => x.mode === "real").requests;
const per = {};
for (const mode of Object.keys(modes)) {
  const m = runs.filter((x) => x.mode === mode);
  per[mode] = {
    wall_us: us(median(m.map((x) => x.wall_s ?? x.seconds)), n),
    cpu_us: mode === "lib" ? us(median(m.map((x) => x.cpu_s)), n) : us(median(m.map((x) => x.client_cpu_s)), n),
    server_cpu_us: mode === "lib" ? null : us(median(m.map((x) => x.server_cpu_s)), n),
    server_main_thread_cpu_us: mode === "lib" ? us(median(m.map((x) => x.main_thread_cpu_s)), n) : us(median(m.map((x) => x.server_main_thread_cpu_s)), n),
    empty_round_trip_us: mode === "lib" ? null : us(median(m.map((x) => x.round_trip_floor_s)), n),
  };
}
const byRound = [];
for (let r = 1; r <= rounds; r++) {
  const g = (mode) => runs.find((x) => x.round === r && x.mode === mode);
  const lib = g("lib").wall_s;
  byRound.push({
    round: r,
    lib_over_real: r3(lib / g("real").seconds),
    lib_over_lib_plus_fake: r3(lib / (lib + g("fake").seconds)),
    lib_over_lib_plus_min: r3(lib / (lib + g("min").seconds)),
    lib_over_fake_spin: r3(lib / g("fake_spin").seconds),
    lib_over_min_spin: r3(lib / g("min_spin").seconds),
  });
}
const ratios = Object.fromEntries(["lib_over_real", "lib_over_lib_plus_fake", "lib_over_lib_plus_min", "lib_over_fake_spin", "lib_over_min_spin"].map((k) => [k, median(byRound.map((x) => x[k]))]));
console.log(
  JSON.stringify(
    {
      build,
      requests_file: requests,
      answers_file: answers,
      timed_requests: n,
      tokens,
      load_average: { min: Math.min(...runs.map((x) => x.load_before)), max: Math.max(...runs.map((x) => x.load_before)) },
      runs: runs.map((x) => ({ round: x.round, mode: x.mode, load_before: x.load_before, spin_us: x.spin_us, wall_s: r3(x.wall_s ?? x.seconds), cpu_s: r3(x.cpu_s ?? x.client_cpu_s), server_cpu_s: r3(x.server_cpu_s ?? null), main_thread_cpu_s: r3(x.server_main_thread_cpu_s ?? x.main_thread_cpu_s ?? null), round_trip_floor_s: r3(x.round_trip_floor_s ?? null), tokens: x.tokens })),
      per_request_median_us: per,
      ratios_by_round: byRound,
      ratio_medians: ratios,
    },
    null,
    1,
  ),
);
