#!/usr/bin/env node
/**
 * The deltatok command line. Exit codes: 0 the job ran (per-request errors are in the output and
 * the summary; `--strict` turns them into exit 1), 1 a fatal error (tokenizer or template could
 * not be loaded, corpus unreadable), 2 a usage error (unknown flag, bad flag value), 143 / 130
 * a corpus command stopped by SIGTERM / SIGINT (src/cli/signals.ts has the contract).
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { stat } from "node:fs/promises";
import { checkOutputPath, writeFile } from "./output.js";
import { checkCorpus } from "../corpus/corpus.js";
import { DeltatokError, toDeltatokError } from "../errors.js";
import { Deltatok } from "../api/deltatok.js";
import { DEFAULTS, type DeltatokOptions } from "../api/options.js";
import { JsonlWriter } from "./output.js";
import { jsonWithIds } from "../corpus/id.js";
import { snakeKeys } from "../json/index.js";
import { replayCorpus, replayCorpusPooled, replayCorpusScheduled, stoppedBeforeStart, type ReplayOptions, type ReplaySummary } from "./replay.js";
import { DeltatokPool, WORKERS_PER_CPU, maxWorkers } from "../pool/pool.js";
import { detectCpus } from "../pool/cpus.js";
import { BatchQueue } from "../queue/queue.js";
import { renderCorpus } from "./render.js";
import { verifyCorpus, type ReferenceEncoder } from "./verify.js";
import { referenceTokenizer } from "../load/index.js";
import { TokenizeSink, tokenizeCorpus, type TokenizeSummary, type TrainingSink } from "./tokenize.js";
import { RolloutSink, rolloutCorpus, type RolloutSummary } from "./rollout.js";
import { trainCorpusScheduled } from "./training-pool.js";
import { checkTable, checkTemplate } from "./check-template.js";
import { runServe } from "./serve.js";
import { PoolBackend } from "../serve/pool-backend.js";
import { runDemo } from "./demo.js";
import { Progress } from "./progress.js";
import { RunControl, stopReport, type StopReport } from "./signals.js";
import { VERSION } from "../package-info.js";
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { HEADER_KEY, TRAILER_KEY, corpusIdentity, parseShard, shardHeader, type ShardCommand, type ShardOutput, type ShardSpec } from "./shard.js";
import { mergeShards } from "./merge.js";

const HELP = `deltatok — exact, incremental chat-template token counts

Usage:
  deltatok replay <corpus.jsonl> [options]   ISL and OSL of every request (JSONL out)
  deltatok render <corpus.jsonl> [options]   rendered-text hashes of every request (JSONL out)
  deltatok verify <corpus.jsonl> [options]   incremental vs full on every request; exit 1 on any difference
  deltatok tokenize <corpus.jsonl> --out F   RL trajectories: ids, message spans, assistant mask
  deltatok rollout <corpus.jsonl> [options]  RL rollouts: training sequences from prompts and sampled ids
  deltatok check-template [corpus.jsonl]     does the template keep the token prefix from turn to turn?
  deltatok merge --out F SHARD...            join --shard outputs into the output of one whole run
  deltatok serve [options]                   sidecar: JSON lines on stdio (and HTTP with --port)
  deltatok demo                              replay the bundled corpus slice, incremental vs full
  deltatok help | --version

A corpus line is {"id", "messages", "tools"?, "chat_template_kwargs"?}; the id (a string or a
JSON number) is written back exactly as the line spelt it. Request k of a conversation is
messages[:k] + generation prompt, for every assistant message k.

Options:
  --tokenizer NAME|DIR|ID      bundled name (qwen3, deepseek_v3, llama3_1, gemma3, gptoss), a
                               directory with tokenizer.json (or a tiktoken rank file, tekken.json,
                               a SentencePiece tokenizer.model), a model id in the HF hub cache, or
                               an OpenAI encoding on this machine (o200k_base…) (default qwen3)
  --pattern REGEX              pre-tokenizer pattern of a tiktoken rank file (over its own)
  --template FILE              chat template (.jinja, or .json with "chat_template")
  --chat-template-kwargs JSON  extra template variables, e.g. '{"enable_thinking":false}'
  --date YYYY-MM-DD            date seen by strftime_now (default: today)
  --parse-tool-arguments       parse JSON-string tool-call arguments into objects first
  --mode incremental|full      reuse cached prefixes, or re-render+re-tokenize everything
  --no-incremental-render      render every request whole (tokenization still reuses prefixes)
  --no-incremental-splice      encode every render whole (rendering still incremental)
  --check-incremental-render   also render each incremental render whole and compare (DT_INTERNAL
                               on a difference; slow: a debugging net)
  --renderer python            template renderer: python, the only one (exactly transformers)
  --out FILE                   output JSONL (default stdout)
  --summary FILE               write a JSON summary of the run
  --no-osl                     replay: skip OSL
  --workers N|auto             replay/tokenize/rollout/serve: run on N worker threads (auto: the
                               CPUs this process may use); 0: in this thread. Default 0; serve:
                               CPUs - 1 from 4 CPUs on, else 0. At most 4 x those CPUs.
                               tokenize/rollout --workers need a regular corpus file.
  --worker-heap-mb N           --workers N: V8 heap limit of each worker, MB (default
                               512 + 2 x cache MiB + 48 B x max prompt chars: 1757 by default)
  --port N                     serve: also answer HTTP on 127.0.0.1:N (0: any free port)
  --no-stdio                   serve: HTTP only (stops on SIGTERM)
  --host ADDR                  serve: bind HTTP to ADDR (default 127.0.0.1); an address other
                               machines can reach needs a token
  --token TOKEN                serve: every HTTP request must send Authorization: Bearer TOKEN
                               (default: DELTATOK_TOKEN from the environment, which ps cannot see)
  --allow-host NAME[:PORT]     serve: also accept this Host header (a proxy passing its name);
                               repeatable
  --max-diffs N                verify: differences listed in the summary (default 20)
  --check-encoder              verify: also encode every whole render with a reference encoder (the
                               Rust tokenizers binding if installed, else @huggingface/tokenizers)
                               and report where deltatok's encoder differs
  --format jsonl|binary        tokenize, rollout: output format (default jsonl; binary needs --out)
  --final                      render: add one record per whole conversation (index "final")
  --text                       render: include the rendered text
  --counts-only                keep no token ids in the cache
  --cache-mb N                 cache bound in MiB (default 256)
  --max-prompt-chars N         largest prompt accepted (default 16000000)
  --progress / --no-progress   progress on stderr (default: when stderr is a terminal)
  --strict                     exit 1 when any request failed
  --shard i/n                  replay, tokenize, verify, rollout: only the lines whose id hashes to
                               shard i of n (0 <= i < n); the output gets a shard header, each
                               record its corpus line, and a trailer: join them with deltatok merge

SIGTERM / SIGINT stop replay, render, verify, tokenize and rollout between conversations: the output
written is a prefix of the full run's, --summary says how far it got, one notice goes to
stderr, exit 143 / 130. A second signal kills at once.
`;

const OPTIONS = {
  tokenizer: { type: "string" },
  template: { type: "string" },
  pattern: { type: "string" },
  "chat-template-kwargs": { type: "string" },
  date: { type: "string" },
  "parse-tool-arguments": { type: "boolean" },
  mode: { type: "string" },
  "no-incremental-render": { type: "boolean" },
  "no-incremental-splice": { type: "boolean" },
  "check-incremental-render": { type: "boolean" },
  "check-encoder": { type: "boolean" },
  renderer: { type: "string" },
  out: { type: "string" },
  summary: { type: "string" },
  "no-osl": { type: "boolean" },
  final: { type: "boolean" },
  text: { type: "boolean" },
  "counts-only": { type: "boolean" },
  "cache-mb": { type: "string" },
  "max-prompt-chars": { type: "string" },
  progress: { type: "boolean" },
  "no-progress": { type: "boolean" },
  strict: { type: "boolean" },
  workers: { type: "string" },
  "worker-heap-mb": { type: "string" },
  port: { type: "string" },
  "no-stdio": { type: "boolean" },
  host: { type: "string" },
  token: { type: "string" },
  "allow-host": { type: "string", multiple: true },
  "max-diffs": { type: "string" },
  format: { type: "string" },
  shard: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
} as const satisfies ParseArgsConfig["options"];

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>["values"];

class UsageError extends Error {}

/** Startup failures caused by a flag value: reported as usage errors (exit 2). */
const USAGE_CODES = new Set<string>(["DT_INVALID_OPTION", "DT_INVALID_DATE", "DT_INVALID_KWARGS"]);

function intFlag(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n <= 0) throw new UsageError(`--${name} must be a positive integer, got ${v}`);
  return n;
}

function deltatokOptions(v: Values): DeltatokOptions {
  const o: DeltatokOptions = {};
  if (v.tokenizer !== undefined) o.tokenizer = v.tokenizer;
  if (v.template !== undefined) o.chatTemplateFile = v.template;
  if (v.pattern !== undefined) o.pattern = v.pattern;
  if (v.date !== undefined) o.date = v.date;
  if (v.mode !== undefined) {
    if (v.mode !== "incremental" && v.mode !== "full") throw new UsageError(`--mode must be incremental or full, got ${v.mode}`);
    o.mode = v.mode;
  }
  if (v.renderer !== undefined) {
    if (v.renderer === "hf-jinja") throw new UsageError("--renderer hf-jinja is kept for benchmarks only (@huggingface/jinja has no budgets): use python");
    if (v.renderer !== "python") throw new UsageError(`--renderer must be python, got ${v.renderer}`);
    o.renderer = v.renderer;
  }
  if (v["counts-only"] === true) o.storeIds = false;
  // the switches that isolate a stage of a wrong answer (docs/DEBUGGING.md)
  if (v["no-incremental-render"] === true) o.incrementalRender = false;
  if (v["no-incremental-splice"] === true) o.incrementalSplice = false;
  if (v["check-incremental-render"] === true) o.checkIncrementalRender = true;
  const mb = intFlag(v["cache-mb"], "cache-mb");
  if (mb !== undefined) o.cacheBytes = mb * 1024 * 1024;
  const mpc = intFlag(v["max-prompt-chars"], "max-prompt-chars");
  if (mpc !== undefined) o.maxPromptChars = mpc;
  return o;
}

function kwargsFlag(v: Values): Record<string, unknown> | null {
  const s = v["chat-template-kwargs"];
  if (s === undefined) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(s);
  } catch (e) {
    throw new DeltatokError("DT_INVALID_KWARGS", `--chat-template-kwargs is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new DeltatokError("DT_INVALID_KWARGS", "--chat-template-kwargs must be a JSON object");
  }
  return parsed as Record<string, unknown>;
}

function progressFlag(v: Values): boolean | undefined {
  if (v["no-progress"] === true) return false;
  if (v.progress === true) return true;
  return undefined;
}

/**
 * What a corpus command checks after its flags and before it loads its tokenizer (about a second
 * of CPU): the flags' Deltatok options (usage errors first), then that the corpus is readable (not
 * opened, so a FIFO is not consumed) and `--out` / `--summary` could be written — the same codes
 * and messages as when they are opened, so a mistyped path fails at once.
 */
async function preflight(corpus: string, v: Values): Promise<void> {
  deltatokOptions(v);
  await checkCorpus(corpus);
  for (const out of [v.out, v.summary]) if (typeof out === "string" && out !== "") await checkOutputPath(out);
}

async function loadDeltatok(v: Values): Promise<{ dt: Deltatok; loadSeconds: number }> {
  const t0 = performance.now();
  const dt = await Deltatok.create(deltatokOptions(v));
  return { dt, loadSeconds: (performance.now() - t0) / 1000 };
}

function workersFlag(v: Values): number {
  const s = v.workers;
  if (s === undefined) return 0;
  const cpus = detectCpus();
  if (s === "auto") return cpus.count;
  const n = Number(s);
  if (s.trim() === "" || !Number.isSafeInteger(n) || n < 0) throw new UsageError(`--workers must be a non-negative integer or auto, got ${s}`);
  const max = maxWorkers(cpus);
  if (n > max) throw new UsageError(`--workers must be at most ${max} (${WORKERS_PER_CPU} × the ${cpus.count} CPUs this process may use), got ${s}`);
  return n;
}

async function isRegularFile(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isFile(), () => false);
}

/** Whether a signal stopped the command (set with its notice). */
let stoppedCommand = false;

/** The exit code of a corpus command: its own, or 143/130 with one notice when a signal stopped it. */
function finishCommand(command: string, stopped: StopReport | undefined, code: number): number {
  if (stopped === undefined) return code;
  stoppedCommand = true;
  process.stderr.write(RunControl.notice(command, stopped));
  return RunControl.exitCode(stopped.signal);
}

/** `--shard i/n`, or undefined. Refused (exit 2) where it does not apply. */
function shardFlag(v: Values): ShardSpec | undefined {
  return v.shard === undefined ? undefined : parseShard(v.shard);
}

/** Everything that changes a command's output, recorded in shard headers (merge compares them). */
async function shardOutput(command: ShardCommand, file: string, spec: ShardSpec, v: Values, extra: Record<string, unknown>): Promise<ShardOutput> {
  let template: string | null = null;
  if (v.template !== undefined) {
    // by content, so the same template at different paths on different machines matches
    const text = await readFile(v.template).catch(() => null);
    template = text === null ? `unreadable:${v.template}` : `sha256:${createHash("sha256").update(text).digest("hex")}`;
  }
  const now = new Date();
  const today = `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, "0")}-${String(now.getDate()).padStart(2, "0")}`;
  const settings: Record<string, unknown> = {
    tokenizer: v.tokenizer ?? DEFAULTS.tokenizer,
    ...(v.pattern === undefined ? {} : { pattern: v.pattern }),
    template,
    date: v.date ?? today,
    mode: v.mode ?? DEFAULTS.mode,
    chat_template_kwargs: kwargsFlag(v),
    parse_tool_arguments: v["parse-tool-arguments"] === true,
    counts_only: v["counts-only"] === true,
    cache_mb: intFlag(v["cache-mb"], "cache-mb") ?? DEFAULTS.cacheBytes / (1024 * 1024),
    max_prompt_chars: intFlag(v["max-prompt-chars"], "max-prompt-chars") ?? DEFAULTS.maxPromptChars,
    ...extra,
  };
  return { spec, header: shardHeader(command, spec, await corpusIdentity(file), settings) };
}

async function writeSummary(v: Values, summary: unknown): Promise<void> {
  if (v.summary !== undefined) await writeFile(v.summary, JSON.stringify(summary, null, 2) + "\n");
}

async function cmdReplay(file: string, v: Values, control: RunControl): Promise<number> {
  const kwargs = kwargsFlag(v);
  const workers = workersFlag(v);
  const heapMb = intFlag(v["worker-heap-mb"], "worker-heap-mb");
  if (heapMb !== undefined && workers === 0) throw new UsageError("--worker-heap-mb applies to replay --workers N (N > 0) only");
  const ro: ReplayOptions = {
    chatTemplateKwargs: kwargs,
    parseToolArguments: v["parse-tool-arguments"] === true,
    osl: v["no-osl"] !== true,
    progress: progressFlag(v),
    signal: control.signal,
  };
  const spec = shardFlag(v);
  await preflight(file, v);
  const shard = spec === undefined ? undefined : await shardOutput("replay", file, spec, v, { osl: ro.osl });
  if (spec !== undefined) ro.shard = spec;
  let summary: ReplaySummary;
  if (workers === 0) {
    const { dt, loadSeconds } = await loadDeltatok(v);
    const out = new JsonlWriter(v.out);
    try {
      if (shard !== undefined) {
        await out.write({ [HEADER_KEY]: shard.header });
        out.startDigest();
      }
      summary = await replayCorpus(dt, file, ro, (r) => out.write(r), loadSeconds);
      if (shard !== undefined) await out.write({ [TRAILER_KEY]: { summary, ...out.digest() } });
      if (summary.stopped === undefined) control.finish();
    } finally {
      await out.close();
    }
  } else {
    summary = await replayOnWorkers(file, v, ro, workers, heapMb, control, shard);
  }
  await writeSummary(v, summary);
  return finishCommand("replay", summary.stopped, v.strict === true && summary.errors > 0 ? 1 : 0);
}

/** The worker pool of an offline command (`--workers N`), or null when a signal stopped its startup. */
async function startOfflinePool(cmd: string, deltatok: DeltatokOptions, workers: number, heapMb: number | undefined, control: RunControl, showProgress: boolean | undefined): Promise<DeltatokPool | null> {
  const progress = new Progress(showProgress);
  progress.line(`${cmd}: starting ${workers} workers`);
  try {
    return await DeltatokPool.create({
      deltatok,
      workers,
      signal: control.signal,
      // after a stop, batches still running get this long before their threads are ended
      closeTimeoutMs: 2000,
      onWorkerReady: (p) => progress.line(`${cmd}: ${p.ready}/${p.workers} workers ready (${(p.elapsedMs / 1000).toFixed(1)} s)`),
      ...(heapMb === undefined ? {} : { resourceLimits: { maxOldGenerationSizeMb: heapMb } }),
    });
  } catch (e) {
    if (!control.signal.aborted || toDeltatokError(e).code !== "DT_CLOSED") throw e;
    return null;
  }
}

async function replayOnWorkers(file: string, v: Values, ro: ReplayOptions, workers: number, heapMb: number | undefined, control: RunControl, shard: ShardOutput | undefined): Promise<ReplaySummary> {
  const deltatok = deltatokOptions(v);
  const t0 = performance.now();
  const pool = await startOfflinePool("replay", deltatok, workers, heapMb, control, ro.progress);
  if (pool === null) {
    const size = await stat(file).then((s) => (s.isFile() ? s.size : 0), () => 0);
    const stopped = stopReport(control.signal, 0, 0, 0, size) as StopReport;
    const loadSeconds = (performance.now() - t0) / 1000;
    return { ...stoppedBeforeStart(file, { tokenizer: deltatok.tokenizer ?? DEFAULTS.tokenizer, mode: deltatok.mode ?? DEFAULTS.mode }, loadSeconds, stopped), workers };
  }
  const loadSeconds = (performance.now() - t0) / 1000;
  const out = new JsonlWriter(v.out);
  if (shard !== undefined) {
    await out.write({ [HEADER_KEY]: shard.header });
    out.startDigest();
  }
  const trailer = async (summary: ReplaySummary) => {
    if (shard !== undefined) await out.write({ [TRAILER_KEY]: { summary, ...out.digest() } });
  };
  if (await isRegularFile(file)) {
    // a file can be indexed first: the costliest conversations start first (src/pool/schedule.ts)
    try {
      const summary = await replayCorpusScheduled(pool, file, ro, (r) => out.write(r), loadSeconds);
      await trailer(summary);
      if (summary.stopped === undefined) control.finish();
      return summary;
    } finally {
      await out.close();
      await pool.close();
    }
  }
  let queue: BatchQueue | null = null;
  try {
    queue = await BatchQueue.create({ pool, intervalMs: 2, batchItems: 4, batchChars: 1 << 20, maxInFlightPerWorker: 2, closeTimeoutMs: 2000 });
    const summary = await replayCorpusPooled(queue, pool, file, ro, (r) => out.write(r), loadSeconds);
    await trailer(summary);
    if (summary.stopped === undefined) control.finish();
    return summary;
  } finally {
    await out.close();
    await queue?.close();
    await pool.close();
  }
}

async function cmdRender(file: string, v: Values, control: RunControl): Promise<number> {
  const kwargs = kwargsFlag(v);
  await preflight(file, v);
  const { dt, loadSeconds } = await loadDeltatok(v);
  const out = new JsonlWriter(v.out);
  let summary;
  try {
    summary = await renderCorpus(
      dt,
      file,
      {
        chatTemplateKwargs: kwargs,
        parseToolArguments: v["parse-tool-arguments"] === true,
        final: v.final === true,
        text: v.text === true,
        progress: progressFlag(v),
        signal: control.signal,
      },
      (r) => out.write(r),
      loadSeconds,
    );
    if (summary.stopped === undefined) control.finish();
  } finally {
    await out.close();
  }
  await writeSummary(v, summary);
  return finishCommand("render", summary.stopped, v.strict === true && summary.errors > 0 ? 1 : 0);
}

async function cmdVerify(file: string, v: Values, control: RunControl): Promise<number> {
  const kwargs = kwargsFlag(v);
  const options = deltatokOptions(v);
  if (options.mode !== undefined) throw new UsageError("verify compares both modes itself; drop --mode");
  const maxReported = intFlag(v["max-diffs"], "max-diffs") ?? 20;
  const spec = shardFlag(v);
  await preflight(file, v);
  const shard = spec === undefined ? undefined : await shardOutput("verify", file, spec, v, { final: v.final === true, max_diffs: maxReported, check_encoder: v["check-encoder"] === true });
  const [inc, full] = await Promise.all([Deltatok.create({ ...options, mode: "incremental" }), Deltatok.create({ ...options, mode: "full" })]);
  const tok = inc.tokenizer.tokenizer;
  let reference: ReferenceEncoder | undefined;
  if (v["check-encoder"] === true) {
    reference = await referenceTokenizer(inc.tokenizer);
  }
  const summary = await verifyCorpus(
    inc,
    full,
    file,
    {
      chatTemplateKwargs: kwargs,
      parseToolArguments: v["parse-tool-arguments"] === true,
      final: v.final === true,
      maxReported,
      progress: progressFlag(v),
      signal: control.signal,
      shard: spec,
      reference,
    },
    (ids) => tok.decode(Array.from(ids)),
  );
  if (summary.stopped === undefined) control.finish();
  const json = jsonWithIds(summary, 2) + "\n";
  if (shard !== undefined) {
    // a shard: JSONL (header, the differences, the summary) for deltatok merge
    const out = new JsonlWriter(v.out);
    try {
      await out.write({ [HEADER_KEY]: shard.header });
      out.startDigest();
      for (const d of summary.differences) await out.write(d);
      await out.write({ [TRAILER_KEY]: { lines: summary.shard?.lines, summary: { ...summary, differences: [] }, ...out.digest() } });
    } finally {
      await out.close();
    }
  } else if (v.out !== undefined) await writeFile(v.out, json);
  else process.stdout.write(json);
  if (v.summary !== undefined) await writeFile(v.summary, json);
  process.stderr.write(
    `verify: ${summary.requests} requests, ${summary.identical} identical, ${summary.same_errors} failed alike, ${summary.differ} differ${stageNote(summary.stages)}\n`,
  );
  return finishCommand("verify", summary.stopped, summary.differ === 0 ? 0 : 1);
}

/** " (first stage that disagrees: splice 3, render 1)" when any request differed (docs/DEBUGGING.md). */
function stageNote(stages: Record<string, number>): string {
  const parts = Object.entries(stages)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`);
  return parts.length === 0 ? "" : ` (first stage that disagrees: ${parts.join(", ")}; see docs/DEBUGGING.md)`;
}

/** tokenize and rollout: training data per conversation, JSONL or binary, shardable. */
async function cmdTraining(cmd: "tokenize" | "rollout", file: string, v: Values, control: RunControl): Promise<number> {
  const kwargs = kwargsFlag(v);
  const format = v.format ?? "jsonl";
  if (format !== "jsonl" && format !== "binary") throw new UsageError(`--format must be jsonl or binary, got ${format}`);
  if (format === "binary" && (v.out === undefined || v.out === "-")) throw new UsageError("--format binary needs --out FILE");
  const workers = workersFlag(v);
  const heapMb = intFlag(v["worker-heap-mb"], "worker-heap-mb");
  if (heapMb !== undefined && workers === 0) throw new UsageError(`--worker-heap-mb applies to ${cmd} --workers N (N > 0) only`);
  // the scheduled path reads the file twice (an index, then each line as it starts)
  if (workers > 0 && !(await isRegularFile(file))) throw new UsageError(`${cmd} --workers needs a regular corpus file (not stdin or a pipe): drop --workers, or write the corpus to a file first`);
  const spec = shardFlag(v);
  await preflight(file, v);
  const shard = spec === undefined ? undefined : await shardOutput(cmd, file, spec, v, { format });
  const o = {
    chatTemplateKwargs: kwargs,
    parseToolArguments: v["parse-tool-arguments"] === true,
    format,
    progress: progressFlag(v),
    signal: control.signal,
    shard,
  } as const;
  let summary: (TokenizeSummary | RolloutSummary) & { workers?: number };
  if (workers === 0) {
    const { dt } = await loadDeltatok(v);
    summary = cmd === "tokenize" ? await tokenizeCorpus(dt, file, v.out, o) : await rolloutCorpus(dt, file, v.out, o);
  } else {
    const deltatok = deltatokOptions(v);
    const tokenizer = deltatok.tokenizer ?? DEFAULTS.tokenizer;
    const sink = (): TrainingSink<TokenizeSummary | RolloutSummary> => (cmd === "tokenize" ? new TokenizeSink(file, v.out, format, tokenizer, shard) : new RolloutSink(file, v.out, format, tokenizer, shard));
    const pool = await startOfflinePool(cmd, deltatok, workers, heapMb, control, o.progress);
    if (pool === null) {
      // stopped while the workers started: an empty output, finished, as a stop before the first line in process
      const size = await stat(file).then((s) => s.size, () => 0);
      const out = sink();
      await out.start();
      summary = { ...(await out.finish(0, stopReport(control.signal, 0, 0, 0, size), 0)), workers };
    } else {
      try {
        summary = await trainCorpusScheduled(pool, file, cmd, sink(), o);
      } finally {
        await pool.close();
      }
    }
  }
  if (summary.stopped === undefined) control.finish();
  await writeSummary(v, summary);
  return finishCommand(cmd, summary.stopped, v.strict === true && summary.errors > 0 ? 1 : 0);
}

async function cmdCheckTemplate(file: string | undefined, v: Values): Promise<number> {
  const { dt } = await loadDeltatok(v);
  // a line per probe (each renders its prompts in full: seconds each on a multi-megabyte template)
  const progress = new Progress(progressFlag(v) ?? true);
  const check = checkTemplate(dt, v.template ?? `${dt.options.tokenizer} (bundled template)`, (i, n, name) =>
    progress.line(`check-template: probe ${i + 1}/${n}: ${name}`),
  );
  if (file !== undefined) {
    check.corpus = await rolloutCorpus(dt, file, "/dev/null", {
      signal: undefined,
      chatTemplateKwargs: kwargsFlag(v),
      parseToolArguments: v["parse-tool-arguments"] === true,
      format: "jsonl",
      progress: progressFlag(v),
    });
  }
  const json = JSON.stringify(snakeKeys(check), null, 2) + "\n";
  if (v.out !== undefined) await writeFile(v.out, json);
  else process.stdout.write(json);
  process.stderr.write(checkTable(check));
  return 0;
}

/**
 * `deltatok serve`'s worker threads when --workers is not given, from the CPUs this process may
 * use. A sidecar shares the machine with the harness that calls it, and a pooled request pays a
 * thread hop: with fewer than 4 CPUs the main thread alone answers faster (src/pool/README.md,
 * "Sidecar"); from 4 on, the pool gets all but one CPU, which is left to the harness.
 */
export function serveDefaultWorkers(cpus: number): number {
  return cpus >= 4 ? cpus - 1 : 0;
}

async function cmdServe(v: Values): Promise<number> {
  const deltatok = deltatokOptions(v);
  const workers = v.workers === undefined ? serveDefaultWorkers(detectCpus().count) : workersFlag(v);
  let port: number | undefined;
  if (v.port !== undefined) {
    port = Number(v.port);
    if (!Number.isSafeInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be 0..65535, got ${v.port}`);
  }
  if (v["no-stdio"] === true && port === undefined) throw new UsageError("serve: --no-stdio needs --port (nothing to serve)");
  for (const f of ["host", "token", "allow-host"] as const) if (v[f] !== undefined && port === undefined) throw new UsageError(`serve: --${f} applies to HTTP; add --port`);
  const envToken = process.env.DELTATOK_TOKEN;
  return runServe({
    deltatok,
    stdio: v["no-stdio"] !== true,
    port,
    host: v.host,
    token: v.token ?? (envToken === undefined || envToken === "" || port === undefined ? undefined : envToken),
    allowHosts: v["allow-host"],
    poolBackend: workers > 0 ? () => PoolBackend.create(deltatok, workers) : undefined,
  });
}

/**
 * Runs one command. `control` handles SIGTERM/SIGINT for the corpus commands; the binary passes
 * one installed for the life of the process (never removed, so closing is covered too).
 */
export async function main(argv: string[], control: RunControl = new RunControl()): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    process.stderr.write(`deltatok: ${(e as Error).message}\n\n${HELP}`);
    return 2;
  }
  const { values: v, positionals } = parsed;
  if (v.version === true) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const [cmd, ...rest] = positionals;
  if (v.help === true || cmd === undefined || cmd === "help") {
    process.stdout.write(HELP);
    return cmd === undefined && v.help !== true ? 2 : 0;
  }
  try {
    if (v["worker-heap-mb"] !== undefined && !["replay", "tokenize", "rollout"].includes(cmd)) throw new UsageError("--worker-heap-mb applies to replay, tokenize and rollout only");
    if (v.shard !== undefined && !["replay", "tokenize", "verify", "rollout"].includes(cmd)) throw new UsageError("--shard applies to replay, tokenize, verify and rollout");
    if (v["check-encoder"] !== undefined && cmd !== "verify") throw new UsageError("--check-encoder applies to verify only");
    switch (cmd) {
      case "replay":
      case "render": {
        if (rest.length !== 1) throw new UsageError(`${cmd} takes exactly one corpus file`);
        if (cmd === "render" && v.workers !== undefined) throw new UsageError("--workers applies to replay only");
        control.install();
        return cmd === "replay" ? await cmdReplay(rest[0] as string, v, control) : await cmdRender(rest[0] as string, v, control);
      }
      case "verify":
        if (rest.length !== 1) throw new UsageError("verify takes exactly one corpus file");
        control.install();
        return await cmdVerify(rest[0] as string, v, control);
      case "tokenize":
        if (rest.length !== 1) throw new UsageError("tokenize takes exactly one corpus file");
        control.install();
        return await cmdTraining("tokenize", rest[0] as string, v, control);
      case "check-template":
        if (rest.length > 1) throw new UsageError("check-template takes at most one corpus file");
        return await cmdCheckTemplate(rest[0], v);
      case "rollout":
        if (rest.length !== 1) throw new UsageError("rollout takes exactly one corpus file");
        control.install();
        return await cmdTraining("rollout", rest[0] as string, v, control);
      case "merge":
        if (rest.length === 0) throw new UsageError("merge takes the shard outputs to join");
        await mergeShards(rest, { out: v.out, summary: v.summary });
        return 0;
      case "serve":
        if (rest.length !== 0) throw new UsageError("serve takes no file");
        return await cmdServe(v);
      case "demo":
        return await runDemo(deltatokOptions(v));
      default:
        throw new UsageError(`unknown command "${cmd}"`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`deltatok: ${e.message}\n(see deltatok help)\n`);
      return 2;
    }
    const err = toDeltatokError(e);
    process.stderr.write(`deltatok: ${err.code}: ${err.message}\n`);
    return USAGE_CODES.has(err.code) ? 2 : 1;
  }
}

const isMain = process.argv[1] !== undefined && import.meta.url === (await import("node:url")).pathToFileURL(await realpath(process.argv[1])).href;
async function realpath(p: string): Promise<string> {
  const { realpath: rp } = await import("node:fs/promises");
  return rp(p).catch(() => p);
}
if (isMain) {
  main(process.argv.slice(2), new RunControl()).then(
    (code) => {
      process.exitCode = code;
      // A stopped command has written everything; a read still pending on a FIFO or stdin
      // must not keep it alive.
      if (stoppedCommand) process.exit(code);
    },
    (e: unknown) => {
      process.stderr.write(`deltatok: internal error: ${(e as Error)?.stack ?? e}\n`);
      process.exitCode = 1;
    },
  );
}
