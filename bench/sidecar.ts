/**
 * Sidecar throughput: ISL of every request of a corpus answered in this process (the library
 * replay) vs over `deltatok serve` (a child process, JSON lines on stdio), with the client
 * serializing each request as a harness would and keeping a window of requests in flight.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Deltatok } from "../src/api/deltatok.js";
import type { DeltatokOptions } from "../src/api/options.js";
import { assistantIndices } from "../src/corpus/corpus.js";
import { idLabel } from "../src/corpus/id.js";
import { loadConversations } from "./replay.js";

export interface SidecarBenchOptions {
  corpus: string;
  deltatok: DeltatokOptions;
  /** --workers of the sidecar (0 = in its main thread). */
  workers: number[];
  /** Requests kept in flight by the client. */
  window: number;
}

const CLI = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));

function engineArgs(e: DeltatokOptions): string[] {
  const a: string[] = [];
  if (e.tokenizer !== undefined) a.push("--tokenizer", e.tokenizer);
  if (e.chatTemplateFile !== undefined) a.push("--template", e.chatTemplateFile);
  if (typeof e.date === "string") a.push("--date", e.date);
  if (e.renderer !== undefined) a.push("--renderer", e.renderer);
  return a;
}

async function overSidecar(
  lines: string[],
  o: SidecarBenchOptions,
  workers: number,
  fallback: string[],
): Promise<{ seconds: number; tokens: number; loadSeconds: number; resent: number; errors: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, "serve", "--workers", String(workers), ...engineArgs(o.deltatok)], { stdio: ["pipe", "pipe", "inherit"] });
  const rl = createInterface({ input: child.stdout });
  const waiting = new Map<number, (r: { result?: { count: number }; error?: unknown }) => void>();
  rl.on("line", (l) => {
    const r = JSON.parse(l) as { id: number; result?: { count: number }; error?: unknown };
    waiting.get(r.id)?.(r);
    waiting.delete(r.id);
  });
  const ask = (id: number, line: string) =>
    new Promise<{ result?: { count: number }; error?: unknown }>((resolve) => {
      waiting.set(id, resolve);
      child.stdin.write(line);
    });
  await ask(-1, JSON.stringify({ id: -1, method: "health" }) + "\n"); // started and loaded
  const loadSeconds = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  let tokens = 0;
  let next = 0;
  let resent = 0;
  let errors = 0;
  const lanes = Array.from({ length: o.window }, async () => {
    while (next < lines.length) {
      const i = next++;
      let r = await ask(i, lines[i] as string);
      // as the client does: a prefix the server does not hold is answered by resending it all
      if ((r.error as { code?: string } | undefined)?.code === "DT_PREFIX_UNKNOWN" && fallback[i] !== lines[i]) {
        resent++;
        r = await ask(i, fallback[i] as string);
      }
      if (r.result !== undefined) tokens += r.result.count;
      else errors++;
    }
  });
  await Promise.all(lanes);
  const seconds = (performance.now() - t1) / 1000;
  child.stdin.end();
  await new Promise((r) => child.on("close", r));
  return { seconds, tokens, loadSeconds, resent, errors };
}

export async function sidecarBench(o: SidecarBenchOptions): Promise<Record<string, unknown>> {
  const convs = loadConversations(o.corpus);
  // the requests a harness would send: messages[:k] of every assistant turn, as JSON lines
  const requests: Array<{ messages: unknown[]; tools: unknown; cid: string }> = [];
  for (const c of convs) for (const k of assistantIndices(c.messages)) requests.push({ messages: c.messages.slice(0, k), tools: c.tools, cid: idLabel(c.id) });

  const dt = await Deltatok.create({ ...o.deltatok, mode: "incremental" });
  const t0 = performance.now();
  let inProcessTokens = 0;
  for (const r of requests) inProcessTokens += dt.countPrompt(r.messages, { tools: r.tools as unknown[] | null });
  const inProcess = (performance.now() - t0) / 1000;

  // Two wire formats: every request carries the whole history, or (what the Python client does
  // with a conversation_id) only the messages after the previous request's state.
  const t1 = performance.now();
  const wholeLines = requests.map(
    (r, i) => JSON.stringify({ id: i, method: "count_prompt", params: { messages: r.messages, tools: r.tools, conversation_id: r.cid } }) + "\n",
  );
  const wholeSerialize = (performance.now() - t1) / 1000;
  const t2 = performance.now();
  const last = new Map<string, { state: number; length: number }>();
  const prefixLines = requests.map((r, i) => {
    const prev = last.get(r.cid);
    last.set(r.cid, { state: i, length: r.messages.length });
    const params: Record<string, unknown> =
      prev === undefined
        ? { messages: r.messages, tools: r.tools, conversation_id: r.cid, state: i }
        : { messages: r.messages.slice(prev.length), prefix: { state: prev.state, length: prev.length }, conversation_id: r.cid, state: i };
    return JSON.stringify({ id: i, method: "count_prompt", params }) + "\n";
  });
  const prefixSerialize = (performance.now() - t2) / 1000;

  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  const runs: Record<string, unknown>[] = [];
  for (const [format, lines, serializeSeconds] of [["whole", wholeLines, wholeSerialize], ["prefix", prefixLines, prefixSerialize]] as const) {
    for (const w of o.workers) {
      const s = await overSidecar(lines as string[], o, w, wholeLines);
      if (s.tokens !== inProcessTokens) throw new Error(`sidecar (${format}, workers ${w}) answered ${s.tokens} tokens, in-process ${inProcessTokens}`);
      const total = s.seconds + serializeSeconds;
      runs.push({
        format,
        workers: w,
        request_mb: r3((lines as string[]).reduce((a, l) => a + l.length, 0) / 1e6),
        seconds: r3(s.seconds),
        client_serialize_s: r3(serializeSeconds),
        requests_per_s: Math.round(requests.length / total),
        ratio_to_in_process: r3(inProcess / total),
        resent_whole: s.resent,
        errors: s.errors,
        load_s: r3(s.loadSeconds),
      });
    }
  }
  return {
    corpus: o.corpus,
    requests: requests.length,
    window: o.window,
    in_process: { seconds: r3(inProcess), requests_per_s: Math.round(requests.length / inProcess) },
    sidecar: runs,
    note: "ratio_to_in_process = in-process seconds / (sidecar seconds + client serialization seconds); target ≥ 0.8",
  };
}
