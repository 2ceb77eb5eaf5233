// Issue 14: where the sidecar's time goes on the Python client's own requests. Replays request
// lines recorded from clients/python/scripts/bench_loop.py (the apply_chat_template loop) into a
// fresh `deltatok serve` child two ways — "pipe": every timed line written at once, answers read
// to the end (no ping-pong); "pingpong": one line, wait for its answer, the next — and runs the
// library loop of bench/python.ts on the same corpus ("lib"), each in a fresh process, the three
// alternating for --rounds rounds. Reports per run and as medians: wall seconds, process CPU
// seconds and main-thread CPU seconds (utime + stime of /proc/PID/task/PID; 10 ms ticks) of the
// timed part only (the sidecar's warm-up lines are answered ping-pong before it).
//
//   # record (a tee in front of the sidecar; any build):
//   printf '#!/bin/sh\ntee /tmp/req.jsonl | node %s/dist/src/cli/main.js "$@"\n' "$PWD" > /tmp/tee.sh
//   chmod +x /tmp/tee.sh
//   DELTATOK_CMD=/tmp/tee.sh python3 clients/python/scripts/bench_loop.py CORPUS --warm 20
//   # replay:
//   node bench/sidecar-replay.mjs /tmp/req.jsonl [--build DIR] [--rounds 5] [--corpus CORPUS] [--warm 20]
//
// The timed lines are the encode_prompt lines from the (warm+1)-th conversation's first request
// (the first line with `tools` and no `prefix`) up to the first count_text (bench_loop.py's
// round-trip floor, not replayed). Prints JSON.
import { spawn, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { replayArgs } from "./replay-args.mjs";

const { args, opt, here, build, corpus } = replayArgs();
const warm = Number(opt("--warm", "20"));
const rounds = Number(opt("--rounds", "3"));
const requests = args[0] === "--child" ? args[2] : args[0];
if (requests === undefined || requests.startsWith("--")) throw new Error("usage: node bench/sidecar-replay.mjs REQUESTS.jsonl [--build DIR] [--rounds N]");

/** utime + stime of /proc/<path>/stat, seconds. */
const ticks = (path) => {
  const f = readFileSync(path, "utf8").split(")").pop().trim().split(/\s+/);
  return (Number(f[11]) + Number(f[12])) / 100;
};

/** The recorded lines cut into warm-up lines and timed lines. */
function cut(lines) {
  let conversations = 0;
  let start = -1;
  let end = lines.length;
  for (let i = 0; i < lines.length; i++) {
    const r = JSON.parse(lines[i]);
    if (r.method === "count_text") {
      end = i;
      break;
    }
    if (r.method === "encode_prompt" && r.params.tools !== undefined && r.params.prefix === undefined && ++conversations === warm + 1) start = i;
  }
  if (start < 0) throw new Error(`${requests} holds fewer than ${warm + 1} conversations`);
  return { warmLines: lines.slice(0, start), timed: lines.slice(start, end).filter((l) => JSON.parse(l).method === "encode_prompt") };
}

async function child(mode) {
  const self = `/proc/self/task/${process.pid}/stat`;
  if (mode === "lib") {
    const { Deltatok } = await import(`${build}/dist/src/api/deltatok.js`);
    const { assistantIndices } = await import(`${build}/dist/src/corpus/corpus.js`);
    const convs = readFileSync(corpus, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
    const dt = await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30", mode: "incremental" });
    const loop = (cs) => {
      let n = 0;
      for (const c of cs) for (const k of assistantIndices(c.messages)) n += dt.encodePrompt(c.messages.slice(0, k), { tools: c.tools, add_generation_prompt: true }).length > 0 ? 1 : 0;
      return n;
    };
    loop(convs.slice(0, warm));
    const m0 = ticks(self), c0 = process.cpuUsage(), t0 = performance.now();
    const n = loop(convs.slice(warm));
    const wall = (performance.now() - t0) / 1000, c = process.cpuUsage(c0), m1 = ticks(self);
    return { mode, requests: n, wall_s: wall, cpu_s: (c.user + c.system) / 1e6, main_thread_cpu_s: m1 - m0 };
  }
  const { warmLines, timed } = cut(readFileSync(requests, "utf8").split("\n").filter((l) => l.trim()));
  const p = spawn(process.execPath, [`${build}/dist/src/cli/main.js`, "serve", "--tokenizer", "qwen3", "--date", "2026-11-30"], { stdio: ["pipe", "pipe", "inherit"] });
  let buf = "";
  let got = 0;
  let errors = 0;
  let waiting = null;
  p.stdout.setEncoding("utf8").on("data", (d) => {
    buf += d;
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
      if (buf.slice(0, i).includes('"error"')) errors++;
      buf = buf.slice(i + 1);
      got++;
      if (waiting !== null) waiting();
    }
  });
  const until = (n) =>
    new Promise((r) => {
      if (got >= n) return r();
      waiting = () => {
        if (got >= n) {
          waiting = null;
          r();
        }
      };
    });
  const pingpong = async (ls) => {
    for (const l of ls) {
      const n = got + 1;
      p.stdin.write(l + "\n");
      await until(n);
    }
  };
  await pingpong(warmLines);
  const proc = `/proc/${p.pid}/stat`, main = `/proc/${p.pid}/task/${p.pid}/stat`;
  const s0 = ticks(proc), m0 = ticks(main), t0 = performance.now();
  if (mode === "pipe") {
    const n = got + timed.length;
    p.stdin.write(timed.join("\n") + "\n");
    await until(n);
  } else await pingpong(timed);
  const wall = (performance.now() - t0) / 1000, s1 = ticks(proc), m1 = ticks(main);
  p.stdin.end();
  await new Promise((r) => p.on("close", r));
  return { mode, requests: timed.length, errors, wall_s: wall, cpu_s: s1 - s0, main_thread_cpu_s: m1 - m0 };
}

if (args[0] === "--child") {
  process.stdout.write(JSON.stringify(await child(args[1])) + "\n");
} else {
  const runs = [];
  for (let r = 0; r < rounds; r++) {
    for (const mode of ["lib", "pipe", "pingpong"]) {
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), "--child", mode, requests, "--build", build, "--corpus", corpus, "--warm", String(warm)], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
      runs.push({ round: r + 1, ...JSON.parse(out) });
    }
  }
  const r3 = (x) => Math.round(x * 1000) / 1000;
  const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const medians = {};
  for (const mode of ["lib", "pipe", "pingpong"]) {
    const m = runs.filter((x) => x.mode === mode);
    medians[mode] = { wall_s: r3(median(m.map((x) => x.wall_s))), cpu_s: r3(median(m.map((x) => x.cpu_s))), main_thread_cpu_s: r3(median(m.map((x) => x.main_thread_cpu_s))) };
  }
  console.log(JSON.stringify({ build, requests_file: requests, runs: runs.map((x) => ({ ...x, wall_s: r3(x.wall_s), cpu_s: r3(x.cpu_s), main_thread_cpu_s: r3(x.main_thread_cpu_s) })), medians }, null, 1));
}
