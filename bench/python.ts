/**
 * The Python client's apply_chat_template loop vs the in-process library, on the same requests
 * (issue 14's Done-when): every assistant turn k of a corpus, `len(tok.apply_chat_template(
 * messages[:k], tools=tools, add_generation_prompt=True))` in Python (clients/python/scripts/
 * bench_loop.py over a `deltatok serve` child, the client sending only appended messages) and
 * `dt.encodePrompt(messages.slice(0, k), {tools, add_generation_prompt: true})` here. Both warm up
 * on the first conversations (JIT, caches) and time the rest; rounds alternate the two. The
 * Python loop runs twice per round: one call per request, and one batch per conversation
 * (`bench_loop.py --batch`: `apply_chat_template([messages[:k] for k in turns])`, a metrics drain
 * over a finished trajectory; its calls are chained in the batch; bench/README.md, "Python client").
 */
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Deltatok } from "../src/api/deltatok.js";
import type { DeltatokOptions } from "../src/api/options.js";
import { assistantIndices } from "../src/corpus/corpus.js";
import { loadConversations } from "./replay.js";

export interface PythonBenchOptions {
  corpus: string;
  deltatok: DeltatokOptions;
  /** Conversations run first, untimed, on both sides. */
  warm: number;
  rounds: number;
  python: string;
}

const CLI = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
const LOOP = fileURLToPath(new URL("../../clients/python/scripts/bench_loop.py", import.meta.url));

interface PythonRun {
  seconds: number;
  requests: number;
  tokens: number;
  client_cpu_s: number;
  server_cpu_s: number | null;
  server_main_thread_cpu_s: number | null;
  /** The same number of calls that carry nothing (count_text "hi"), seconds. */
  round_trip_floor_s: number;
  client: Record<string, number>;
  /** Bytes the sidecar read (the client sent) and wrote over the loop; null off Linux. */
  sidecar_read_bytes: number | null;
  sidecar_written_bytes: number | null;
}

function runPython(o: PythonBenchOptions, batch = false): Promise<PythonRun> {
  const args = [LOOP, o.corpus, "--warm", String(o.warm), "--tokenizer", o.deltatok.tokenizer ?? "qwen3", "--date", String(o.deltatok.date ?? "2026-11-30")];
  if (batch) args.push("--batch");
  return new Promise((resolve, reject) => {
    const p = spawn(o.python, args, { env: { ...process.env, DELTATOK_CMD: `"${process.execPath}" "${CLI}"` }, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    p.on("error", reject);
    p.on("close", (code) => {
      if (code !== 0) reject(new Error(`bench_loop.py exited ${code}`));
      else resolve(JSON.parse(out) as PythonRun);
    });
  });
}

const DROPIN = fileURLToPath(new URL("../../clients/python/scripts/bench_dropin.py", import.meta.url));

/**
 * The drop-in against transformers (clients/python/scripts/bench_dropin.py): backend_tokenizer
 * .encode_batch_fast on bench/data/encode and an endpoints-shaped drain over the corpus, when the
 * interpreter has transformers and tokenizers; else why not.
 */
function runDropin(o: PythonBenchOptions): Promise<Record<string, unknown>> {
  if (spawnSync(o.python, ["-c", "import transformers, tokenizers"], { stdio: "ignore" }).status !== 0) {
    return Promise.resolve({ skipped: `${o.python} cannot import transformers and tokenizers (pass --python with them)` });
  }
  const repo = fileURLToPath(new URL("../../", import.meta.url));
  return new Promise((resolve, reject) => {
    const p = spawn(o.python, [DROPIN, repo, o.corpus, "--rounds", String(Math.max(1, o.rounds))], {
      env: { ...process.env, DELTATOK_CMD: `"${process.execPath}" "${CLI}"` },
      stdio: ["ignore", "pipe", "ignore"],
    });
    let out = "";
    p.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    p.on("error", reject);
    p.on("close", (code) => {
      if (code !== 0) reject(new Error(`bench_dropin.py exited ${code}`));
      else resolve(JSON.parse(out) as Record<string, unknown>);
    });
  });
}

export async function pythonBench(o: PythonBenchOptions): Promise<Record<string, unknown>> {
  const convs = loadConversations(o.corpus);
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  const inProcess = async (): Promise<{ seconds: number; cpu_s: number; requests: number; tokens: number }> => {
    // a fresh parse each round: the library's per-object memos start cold, as in one real run
    const convs = loadConversations(o.corpus);
    const dt = await Deltatok.create({ ...o.deltatok, mode: "incremental" });
    const loop = (cs: typeof convs) => {
      let requests = 0;
      let tokens = 0;
      for (const c of cs) {
        for (const k of assistantIndices(c.messages)) {
          tokens += dt.encodePrompt(c.messages.slice(0, k), { tools: c.tools, add_generation_prompt: true }).length;
          requests++;
        }
      }
      return { requests, tokens };
    };
    loop(convs.slice(0, o.warm));
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const r = loop(convs.slice(o.warm));
    const cpu = process.cpuUsage(cpu0);
    return { seconds: (performance.now() - t0) / 1000, cpu_s: (cpu.user + cpu.system) / 1e6, ...r };
  };
  const rounds: Record<string, unknown>[] = [];
  for (let i = 0; i < o.rounds; i++) {
    const lib = await inProcess();
    const py = await runPython(o);
    const pb = await runPython(o, true);
    for (const [label, x] of [["python", py], ["python --batch", pb]] as const) {
      if (x.tokens !== lib.tokens || x.requests !== lib.requests) {
        throw new Error(`${label} answered ${x.tokens} tokens in ${x.requests} requests, the library ${lib.tokens} in ${lib.requests}`);
      }
    }
    rounds.push({
      in_process_s: r3(lib.seconds),
      python_s: r3(py.seconds),
      ratio: r3(lib.seconds / py.seconds),
      in_process_cpu_s: r3(lib.cpu_s),
      // CPU time: what the two processes spent against the library's, so a loaded machine's
      // scheduling does not count (the sidecar's CPU is its whole process, workers included)
      cpu_ratio: py.server_cpu_s === null ? null : r3(lib.cpu_s / (py.client_cpu_s + py.server_cpu_s)),
      python_client_cpu_s: r3(py.client_cpu_s),
      sidecar_cpu_s: py.server_cpu_s === null ? null : r3(py.server_cpu_s),
      sidecar_main_thread_cpu_s: py.server_main_thread_cpu_s === null ? null : r3(py.server_main_thread_cpu_s),
      // the round trips alone (as many empty calls): the ratio no payload work could beat
      round_trip_floor_s: r3(py.round_trip_floor_s),
      ceiling_ratio: r3(lib.seconds / (lib.seconds + py.round_trip_floor_s)),
      requests_per_s: { in_process: Math.round(lib.requests / lib.seconds), python: Math.round(py.requests / py.seconds) },
      client: py.client,
      // one batch per conversation (bench_loop.py --batch), same requests
      python_batch_s: r3(pb.seconds),
      batch_ratio: r3(lib.seconds / pb.seconds),
      batch_cpu_ratio: pb.server_cpu_s === null ? null : r3(lib.cpu_s / (pb.client_cpu_s + pb.server_cpu_s)),
      python_batch_client_cpu_s: r3(pb.client_cpu_s),
      batch_sidecar_cpu_s: pb.server_cpu_s === null ? null : r3(pb.server_cpu_s),
      sent_bytes: { per_call: py.sidecar_read_bytes, batch: pb.sidecar_read_bytes },
      received_bytes: { per_call: py.sidecar_written_bytes, batch: pb.sidecar_written_bytes },
      batch_client: pb.client,
    });
  }
  const dropin = await runDropin(o);
  const ratios = rounds.map((r) => r.ratio as number).sort((a, b) => a - b);
  return {
    corpus: o.corpus,
    conversations: convs.length,
    warm_conversations: o.warm,
    requests_timed: convs.slice(o.warm).reduce((a, c) => a + assistantIndices(c.messages).length, 0),
    rounds,
    dropin,
    ratio_median: ratios[Math.floor(ratios.length / 2)],
    batch_ratio_median: ((xs) => xs[Math.floor(xs.length / 2)])(rounds.map((r) => r.batch_ratio as number).sort((a, b) => a - b)),
    cpu_ratio_median: ((xs) => xs[Math.floor(xs.length / 2)] ?? null)(rounds.map((r) => r.cpu_ratio as number | null).filter((x): x is number => x !== null).sort((a, b) => a - b)),
    note:
      "ratio = in-process seconds / python seconds (throughput of the Python loop over the library's); target ≥ 0.7. cpu_ratio = in-process CPU / (python client CPU + sidecar CPU). " +
      "ceiling_ratio = in-process seconds / (in-process seconds + round_trip_floor_s): the ratio with the round trips alone added (no payload work on either side). " +
      "batch_ratio = in-process seconds / seconds of the same requests as one batch per conversation (bench_loop.py --batch)",
  };
}
