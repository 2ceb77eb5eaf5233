/**
 * `npm run bench [-- options]`: benchmarks as JSON on stdout (and --out FILE).
 *
 *   --suite replay            (default) ISL replay: incremental vs full vs the limit
 *   --corpus FILE             default ../shared/corpus/trajectories/tau-bench-airline-gpt-4o.jsonl,
 *                             else the bundled data/tau-bench-airline-20.jsonl
 *   --tokenizer NAME          default qwen3
 *   --template FILE           chat template override
 *   --renderer python|hf-jinja   (hf-jinja: in-process suites only; it has no budgets)
 *   --parse-tool-arguments
 *   --conversations N         only the first N conversations
 *   --no-full                 skip the (slow) full-mode baseline
 *   --out FILE                also write the JSON to FILE
 *
 *   --suite workers           throughput with 1, 2, … workers (pool + queue): ISL replay of the
 *                             tau2 + tau-bench corpora and ~1k-token plain-text OSL; ratios
 *   --workers 1,2             worker counts (giving --workers alone selects this suite)
 *   --repeat N                runs of each configuration (default 1)
 *   --texts N                 ~1k-token texts for the OSL part (default 4000)
 *   --pin                     pin worker threads to CPUs
 *   --no-serial               skip the in-process baseline
 *   --cold                    no warm-up slice before timing (JIT cost included)
 *   --warm-every N            ISL warm-up: every N-th corpus line (default 1: all of it, steady state)
 *   --corpus FILE             (repeatable) corpora instead of the tau ones
 *   --ceiling                 first measure the machine's own 2-process scaling on the same ISL
 *                             work without the pool: the in-process replay in one child process
 *                             alone, then in two at once (--repeat times)
 *
 *   --suite drain             drains 200,000 mixed items (1k-token texts + corpus prompts) once,
 *                             in its own process: pending, items/s, peak RSS, RSS over time
 *   --items N                 items (default 200000)
 *   --kill                    kill a worker a third of the way through; report lost items
 *   --workers N               workers (default: the CPUs this process may use)
 *
 *   --suite encode            tokens per CPU-second of deltatok's encoder vs the Rust binding, tiktoken,
 *                             gpt-tokenizer, ai-tokenizer on four kinds of text (bench/encode.ts)
 *   --vocab o200k,qwen3       encode: vocabularies; --contenders, --kinds restrict; --rounds N (3)
 *
 *   --suite render            render throughput (M chars/s): deltatok vs @huggingface/jinja, same
 *                             requests, same run (tau-bench airline, Qwen3 + its 14 tools)
 *   --rounds N                render: alternating rounds, best counts (default 5)
 *
 *   --suite incremental       incremental rendering: SWE corpora and tau-bench vs the limit and full
 *                             mode, and per-turn latency of one growing conversation (3 modes)
 *   --svg FILE                incremental: write the latency plot (default bench/out/latency.svg)
 *   --skip corpora,tau,latency  incremental: parts to skip
 *
 *   --suite sidecar           ISL of every request in this process vs over `deltatok serve`
 *                             (stdio, a child process), client serialization included
 *   --workers 0,2             the sidecar's --workers values (default 0,2)
 *   --window N                requests the client keeps in flight (default 64)
 *
 *   --suite python            issue 14: the Python client's apply_chat_template loop (a `deltatok serve` child,
 *                             only appended messages sent) vs the in-process library, same requests
 *   --warm N                  python: conversations run first, untimed (default 20)
 *   --rounds N                python: rounds, each the library, then Python one call per request, then one batch per conversation (default 1)
 *   --python PATH             python: the interpreter (default python3)
 *   --suite cluster           issue 15: the Python client's count_prompt into one instance, then
 *                             through nginx over --instances (3) instances, then with the one holding
 *                             the conversation in progress killed a third through: reuse and wrong counts
 *   --instances N             cluster: instances behind nginx (default 3)
 *   --interleave W            cluster: conversations in progress at once, turns round-robin (default 1)
 *   --suite rollout           tokenizeRollout with sampled ids = canonical completions vs the ISL
 *                             replay of the same corpus, each run in a fresh process, alternating
 *                             rounds (--rounds, default 3); corpora: tau-bench airline and
 *                             minisweagent top50 (--corpus to override, repeatable)
 *
 *   --suite worker-memory     the V8 heap limit one worker needs: for each limit, a fresh worker
 *                             runs the largest prompt (maxPromptChars), a full cache, or both
 *   --limits 512,768,1024,0   worker-memory: old-generation limits in MB (0: the default)
 *   --workloads big,fill,fill+big   worker-memory: what each worker runs
 *
 *   --suite per-worker        issue 15: process RSS and each worker's heap after startup and peak RSS
 *                             over a corpus replay, for each worker count, with the tokenizer tables
 *                             shared and per worker (each in its own child process); the per-worker
 *                             slope and the 64/144-worker projection; then encode speed of the
 *                             shared-table tokenizer vs the per-thread one, alternating rounds
 *   --workers 0,1,2,4,8       per-worker: worker counts (0: in-process)
 *   --rounds N                per-worker: encode rounds, the first counted apart (default 7)
 *   --skip speed|memory       per-worker: leave out the speed or the memory part
 *   --suite schedule          issue 15: per-conversation CPU ms of a real replay (or --costs FILE),
 *                             replayed through src/pool/schedule.ts for N workers: predicted
 *                             makespan vs max(total / N, longest); every shared corpus and all
 *   --workers 2,4,…,144       schedule: worker counts (default every N from 2 to 144)
 *   --costs FILE              schedule: read the costs from FILE if it exists, else measure and write it
 *   --depth N                 schedule: jobs a simulated worker holds (default 1, as the pool)
 *   --passes N                schedule: measuring passes, each conversation's least (default 3)
 *   --fit a,b                 schedule: fit the cost model on the corpora whose names start with
 *                             these (instead of src/pool/cost.ts COST_MODEL) and use it
 *   --exact-nodes N           schedule: node limit of one exact-search step (default 1,000,000)
 *   --suite scale             issue 15: replay --workers 1 vs --workers 2 vs two independent
 *                             processes on cost-balanced halves, --rounds rounds (default 5),
 *                             variants alternating; corpora: tau-bench, tau2 airline + retail,
 *                             mlcommons SWE-bench (384 conversations; --corpus to override)
 *
 *   --suite stream            issue 17: 1,000 responses of ~4k tokens (corpus assistant texts, joined)
 *                             streamed in ~16-token chunks (fixed and random cuts): textCounter vs
 *                             countText of each final response once vs countText of the prefix at
 *                             every chunk (O(n²), timed on --sample responses, extrapolated); CPU
 *                             ms and chars encoded; then messageCounter vs countMessage
 *   --responses N, --tokens N, --chunk-tokens N, --sample N   stream: defaults 1000, 4000, 16, 20
 *
 *   --worker-young-mb N, --worker-old-mb N   V8 heap limits of each worker (workers, drain;
 *                             default: the pool's, src/pool/pool.ts defaultWorkerHeapMb)
 *   --cache-mb N              cache bound per Deltatok, MiB (default 256)
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { UNBUDGETED_RENDERER, type DeltatokOptions } from "../src/api/options.js";
import { replayBench } from "./replay.js";
import { serialIslChild, workersBench } from "./workers.js";
import { sidecarBench } from "./sidecar.js";
import { run as incrementalBench } from "./incremental.js";
import { renderBench } from "./render.js";
import { drainBench } from "./drain.js";
import { rolloutBench, rolloutChild, type RolloutChildMode } from "./rollout.js";
import { workerMemoryBench } from "./worker-memory.js";
import { pythonBench } from "./python.js";
import { clusterBench } from "./cluster.js";
import { perWorkerBench, perWorkerChild } from "./per-worker.js";
import { scheduleBench } from "./schedule.js";
import { scaleBench } from "./scale.js";
import { streamBench, streamCorpora } from "./stream.js";
import { encodeBench, encodeBenchOptions } from "./encode.js";
import { readdirSync } from "node:fs";

const SHARED_TAU = fileURLToPath(new URL("../../../shared/corpus/trajectories/tau-bench-airline-gpt-4o.jsonl", import.meta.url));
const BUNDLED = fileURLToPath(new URL("../../data/tau-bench-airline-20.jsonl", import.meta.url));
const SHARED_DIR = fileURLToPath(new URL("../../../shared/corpus/trajectories/", import.meta.url));
const TAU_CORPORA = [
  "tau2-airline-claude-sonnet-4-5.jsonl",
  "tau2-airline-gpt-oss-120b.jsonl",
  "tau2-retail-gpt-4.1-mini-toolorchestra.jsonl",
  "tau-bench-airline-gpt-4o.jsonl",
].map((f) => SHARED_DIR + f);

function tauCorpora(given: string[] | undefined): string[] {
  if (given !== undefined && given.length > 0) return given;
  return TAU_CORPORA.every((f) => existsSync(f)) ? TAU_CORPORA : [BUNDLED];
}

function numberList(s: string | undefined, dflt: number[]): number[] {
  if (s === undefined) return dflt;
  const xs = s.split(",").map((x) => Number(x.trim()));
  if (xs.some((x) => !Number.isSafeInteger(x) || x < 1)) throw new Error(`--workers must be a list of positive integers, got ${s}`);
  return xs;
}

function positiveInt(s: string, what: string): number {
  const n = Number(s);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${what} must be a positive integer, got ${s}`);
  return n;
}

/** Arguments that re-run this bench as another suite with the same corpora and Deltatok options. */
function childArgs(suite: string, v: Record<string, unknown>): string[] {
  const args = [fileURLToPath(import.meta.url), "--suite", suite, "--tokenizer", String(v.tokenizer)];
  for (const c of (v.corpus as string[] | undefined) ?? []) args.push("--corpus", c);
  for (const k of ["template", "renderer", "cache-mb"]) if (v[k] !== undefined) args.push(`--${k}`, String(v[k]));
  if (v["parse-tool-arguments"] === true) args.push("--parse-tool-arguments");
  return args;
}

async function main(): Promise<void> {
  const { values: v } = parseArgs({
    options: {
      suite: { type: "string" },
      corpus: { type: "string", multiple: true },
      workers: { type: "string" },
      repeat: { type: "string", default: "1" },
      texts: { type: "string", default: "4000" },
      items: { type: "string", default: "200000" },
      pin: { type: "boolean", default: false },
      kill: { type: "boolean", default: false },
      "no-serial": { type: "boolean", default: false },
      cold: { type: "boolean", default: false },
      ceiling: { type: "boolean", default: false },
      "warm-every": { type: "string" },
      "worker-young-mb": { type: "string" },
      "worker-old-mb": { type: "string" },
      "cache-mb": { type: "string" },
      tokenizer: { type: "string", default: "qwen3" },
      template: { type: "string" },
      renderer: { type: "string" },
      "parse-tool-arguments": { type: "boolean", default: false },
      conversations: { type: "string" },
      "no-full": { type: "boolean", default: false },
      window: { type: "string" },
      svg: { type: "string" },
      rounds: { type: "string" },
      skip: { type: "string" },
      mode: { type: "string" },
      limits: { type: "string" },
      workloads: { type: "string" },
      warm: { type: "string" },
      python: { type: "string" },
      instances: { type: "string" },
      interleave: { type: "string" },
      tables: { type: "string" },
      costs: { type: "string" },
      depth: { type: "string" },
      passes: { type: "string" },
      fit: { type: "string" },
      "exact-nodes": { type: "string" },
      out: { type: "string" },
      responses: { type: "string" },
      tokens: { type: "string" },
      "chunk-tokens": { type: "string" },
      sample: { type: "string" },
      vocab: { type: "string" },
      contenders: { type: "string" },
      kinds: { type: "string" },
    },
  });
  const deltatok: DeltatokOptions = { tokenizer: v.tokenizer, date: "2026-11-30" };
  if (v.template !== undefined) deltatok.chatTemplateFile = v.template;
  if (v.renderer !== undefined) {
    deltatok.renderer = v.renderer as DeltatokOptions["renderer"];
    // (the benchmarks may compare with the unbudgeted hf-jinja renderer: in process only)
    if (v.renderer === "hf-jinja") (deltatok as { [UNBUDGETED_RENDERER]?: boolean })[UNBUDGETED_RENDERER] = true;
  }
  if (v["cache-mb"] !== undefined) deltatok.cacheBytes = Number(v["cache-mb"]) * 1024 * 1024;
  const resourceLimits: { maxYoungGenerationSizeMb?: number; maxOldGenerationSizeMb?: number } = {};
  if (v["worker-young-mb"] !== undefined) resourceLimits.maxYoungGenerationSizeMb = Number(v["worker-young-mb"]);
  if (v["worker-old-mb"] !== undefined) resourceLimits.maxOldGenerationSizeMb = Number(v["worker-old-mb"]);
  const suite = v.suite ?? (v.workers !== undefined ? "workers" : "replay");
  const corpus = v.corpus?.[0] ?? (existsSync(SHARED_TAU) ? SHARED_TAU : BUNDLED);
  let result: Record<string, unknown>;
  switch (suite) {
    case "replay":
      result = await replayBench({
        corpus,
        deltatok,
        parseToolArguments: v["parse-tool-arguments"],
        limitConversations: v.conversations === undefined ? undefined : Number(v.conversations),
        full: !v["no-full"],
      });
      break;
    case "workers":
      result = await workersBench({
        corpora: tauCorpora(v.corpus),
        deltatok,
        workerCounts: numberList(v.workers, [1, 2]),
        repeat: Number(v.repeat),
        texts: Number(v.texts),
        pin: v.pin,
        parseToolArguments: v["parse-tool-arguments"],
        serial: !v["no-serial"],
        resourceLimits,
        cold: v.cold,
        warmEvery: v["warm-every"] === undefined ? undefined : positiveInt(v["warm-every"], "--warm-every"),
        ceiling: v.ceiling ? childArgs("serial-isl", v) : undefined,
      });
      break;
    case "serial-isl":
      result = await serialIslChild(tauCorpora(v.corpus), deltatok, v["parse-tool-arguments"]);
      break;
    case "drain":
      result = await drainBench({
        corpora: tauCorpora(v.corpus),
        deltatok,
        items: Number(v.items),
        workers: v.workers === undefined ? undefined : (numberList(v.workers, [])[0] as number),
        kill: v.kill,
        pin: v.pin,
        resourceLimits,
        parseToolArguments: v["parse-tool-arguments"],
      });
      break;
    case "worker-memory":
      result = await workerMemoryBench({
        corpus,
        deltatok,
        limits: (v.limits ?? "512,768,1024,0").split(",").map(Number),
        workloads: (v.workloads ?? "big,fill,fill+big").split(","),
      });
      break;
    case "per-worker": {
      const counts = (v.workers ?? "0,1,2,4,8").split(",").map(Number);
      if (counts.some((x) => !Number.isSafeInteger(x) || x < 0)) throw new Error(`--workers must be a list of integers ≥ 0, got ${v.workers}`);
      const args = [...childArgs("per-worker-child", v).filter((_a, i, all) => all[i] !== "--corpus" && all[i - 1] !== "--corpus"), "--corpus", corpus];
      result = await perWorkerBench({ corpus, deltatok, workerCounts: counts, childArgs: args, rounds: Number(v.rounds ?? 7), skipSpeed: (v.skip ?? "").split(",").includes("speed"), skipMemory: (v.skip ?? "").split(",").includes("memory") });
      break;
    }
    case "per-worker-child":
      process.stdout.write(JSON.stringify(await perWorkerChild({ corpus, deltatok, workers: Number(v.workers), share: v.tables !== "own" })));
      return;
    case "render":
      result = await renderBench({ corpus, template: v.template, tokenizer: v.tokenizer, rounds: Number(v.rounds ?? 5) });
      break;
    case "incremental": {
      const svg = v.svg ?? fileURLToPath(new URL("../../bench/out/latency.svg", import.meta.url));
      mkdirSync(dirname(svg), { recursive: true });
      result = await incrementalBench({ tokenizer: v.tokenizer, svg, skip: v.skip?.split(",") ?? [], print: false });
      break;
    }
    case "sidecar": {
      const counts = (v.workers ?? "0,2").split(",").map(Number);
      if (counts.some((x) => !Number.isSafeInteger(x) || x < 0)) throw new Error(`--workers must be a list of integers ≥ 0, got ${v.workers}`);
      result = await sidecarBench({ corpus, deltatok, workers: counts, window: Number(v.window ?? 64) });
      break;
    }
    case "python":
      result = await pythonBench({
        corpus,
        deltatok,
        warm: v.warm === undefined ? 20 : Number(v.warm),
        rounds: Number(v.rounds ?? 1),
        python: v.python ?? "python3",
      });
      break;
    case "cluster":
      result = await clusterBench({ corpus, deltatok, instances: v.instances === undefined ? 3 : positiveInt(v.instances, "--instances"), python: v.python ?? "python3",
        interleave: v.interleave === undefined ? 1 : positiveInt(v.interleave, "--interleave") });
      break;
    case "rollout": {
      const top50 = SHARED_DIR + "minisweagent-gemini-3-pro-swebench-verified-top50.jsonl";
      const dflt = existsSync(SHARED_TAU) && existsSync(top50) ? [SHARED_TAU, top50] : [BUNDLED];
      const args = childArgs("rollout-child", v).filter((_a, i, all) => all[i] !== "--corpus" && all[i - 1] !== "--corpus");
      result = await rolloutBench({ corpora: v.corpus ?? dflt, rounds: Number(v.rounds ?? 3), childArgs: args });
      break;
    }
    case "rollout-child": {
      const mode = v.mode as RolloutChildMode;
      if (mode !== "isl" && mode !== "rollout" && mode !== "rollout-sampled") throw new Error(`--mode must be isl, rollout or rollout-sampled, got ${String(v.mode)}`);
      process.stdout.write(JSON.stringify(await rolloutChild(corpus, mode, deltatok, v["parse-tool-arguments"])));
      return;
    }
    case "schedule": {
      const all = existsSync(SHARED_DIR) ? readdirSync(SHARED_DIR).filter((f) => f.endsWith(".jsonl")).sort().map((f) => SHARED_DIR + f) : [BUNDLED];
      result = await scheduleBench({
        corpora: v.corpus ?? all,
        deltatok,
        costsFile: v.costs,
        workers: numberList(v.workers, Array.from({ length: 143 }, (_, i) => i + 2)),
        depth: v.depth === undefined ? 1 : Number(v.depth),
        passes: v.passes === undefined ? 3 : Number(v.passes),
        fit: v.fit?.split(",").filter((f) => f !== ""),
        exactNodes: v["exact-nodes"] === undefined ? 1_000_000 : Number(v["exact-nodes"]),
      });
      break;
    }
    case "scale": {
      const dflt = ["tau-bench-airline-gpt-4o.jsonl", "tau2-airline-claude-sonnet-4-5.jsonl", "tau2-retail-gpt-4.1-mini-toolorchestra.jsonl", "mlcommons-swebench-agentic-coding.jsonl"].map((f) => SHARED_DIR + f);
      result = await scaleBench({ corpora: v.corpus ?? (dflt.every((f) => existsSync(f)) ? dflt : [BUNDLED]), rounds: Number(v.rounds ?? 5), tokenizer: v.tokenizer, date: "2026-11-30" });
      break;
    }
    case "encode": {
      result = await encodeBench(encodeBenchOptions({ rounds: v.rounds, vocab: v.vocab, contenders: v.contenders, kinds: v.kinds }));
      break;
    }
    case "stream": {
      result = await streamBench({
        corpora: v.corpus ?? streamCorpora(SHARED_DIR, BUNDLED),
        deltatok,
        responses: positiveInt(v.responses ?? "1000", "--responses"),
        tokens: positiveInt(v.tokens ?? "4000", "--tokens"),
        chunkTokens: positiveInt(v["chunk-tokens"] ?? "16", "--chunk-tokens"),
        sample: positiveInt(v.sample ?? "20", "--sample"),
      });
      break;
    }
    default:
      throw new Error(`unknown suite ${suite}`);
  }
  const out = {
    suite,
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version },
    options: { tokenizer: v.tokenizer, template: v.template ?? null, renderer: v.renderer ?? "python", cache_mb: v["cache-mb"] === undefined ? 256 : Number(v["cache-mb"]) },
    ...result,
  };
  const json = JSON.stringify(out, null, 2);
  process.stdout.write(json + "\n");
  if (v.out !== undefined) writeFileSync(v.out, json + "\n");
}

main().catch((e: unknown) => {
  process.stderr.write(`bench: ${(e as Error)?.stack ?? e}\n`);
  process.exitCode = 1;
});
