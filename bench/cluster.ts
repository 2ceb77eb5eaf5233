/**
 * Issue 15's cluster figures: a corpus replayed with the Python client's count_prompt (a) into one
 * `deltatok serve` instance, (b) through nginx over 3 instances (scripts/cluster.ts), (c) the same
 * with the instance holding the conversation in progress SIGKILLed a third of the way through.
 * Reuse = tokens reused / prompt tokens, summed from the instances' own stats (the killed one's
 * read just before the kill); every count is compared with the in-process library's.
 */
import { Deltatok } from "../src/api/deltatok.js";
import type { DeltatokOptions } from "../src/api/options.js";
import { assistantIndices } from "../src/corpus/corpus.js";
import { idLabel } from "../src/corpus/id.js";
import { clusterRun, findNginx, instanceStats, replayThrough, reuseOf, startInstance, type ReplayRecord } from "../scripts/cluster.js";
import { loadConversations } from "./replay.js";

export interface ClusterBenchOptions {
  corpus: string;
  deltatok: DeltatokOptions;
  instances: number;
  python: string;
  /** Conversations in progress at once (cluster_replay.py --interleave). */
  interleave: number;
}

function serveArgs(e: DeltatokOptions): string[] {
  const a = ["--workers", "0", "--date", String(e.date ?? "2026-11-30")];
  if (e.tokenizer !== undefined) a.push("--tokenizer", e.tokenizer);
  if (e.chatTemplateFile !== undefined) a.push("--template", e.chatTemplateFile);
  return a;
}

function check(records: readonly ReplayRecord[], want: readonly { id: string; index: number; isl: number }[]) {
  const isl = new Map(want.map((w) => [`${w.id}#${w.index}`, w.isl]));
  let wrong = 0;
  let errors = 0;
  const seen = new Set<string>();
  for (const r of records) {
    const key = `${r.id}#${r.index}`;
    seen.add(key);
    if (r.error !== undefined) errors++;
    else if (isl.get(key) !== r.isl) wrong++;
  }
  return { requests: records.length, expected: want.length, wrong_counts: wrong + (want.length - seen.size), errors };
}

export async function clusterBench(o: ClusterBenchOptions): Promise<Record<string, unknown>> {
  const nginx = findNginx();
  if (nginx === null) throw new Error("nginx is not installed (Debian: apt-get install -y nginx; or set DELTATOK_NGINX)");
  const dt = await Deltatok.create({ ...o.deltatok, mode: "incremental" });
  const want: { id: string; index: number; isl: number }[] = [];
  for (const c of loadConversations(o.corpus)) {
    for (const k of assistantIndices(c.messages)) {
      want.push({ id: idLabel(c.id), index: k, isl: dt.countPrompt(c.messages.slice(0, k), { tools: c.tools, chat_template_kwargs: c.chat_template_kwargs, add_generation_prompt: true }) });
    }
  }
  if (new Set(want.map((w) => `${w.id}#${w.index}`)).size !== want.length) throw new Error(`${o.corpus}: conversation ids are not unique`);
  const replay = { method: "count_prompt" as const, python: o.python, interleave: o.interleave };
  const r4 = (x: number) => Math.round(x * 10000) / 10000;

  const t0 = performance.now();
  const one = await startInstance(serveArgs(o.deltatok));
  let single;
  try {
    const run = await replayThrough(`http://127.0.0.1:${one.port}`, o.corpus, replay);
    single = { ...check(run.records, want), ...reuseOf([await instanceStats(one.port)]), client: run.client, seconds: (performance.now() - t0) / 1000 };
  } finally {
    one.process.kill("SIGTERM");
    await one.exited;
  }

  const t1 = performance.now();
  const up = await clusterRun({ instances: o.instances, serveArgs: serveArgs(o.deltatok), nginx, corpus: o.corpus, replay, killThird: false, requests: want.length });
  const cluster = { ...check(up.records, want), reused: up.reused, encoded: up.encoded, reuse: up.reuse, per_instance_requests: up.instances.map((s) => s.requests), client: up.client, seconds: (performance.now() - t1) / 1000 };

  const t2 = performance.now();
  const down = await clusterRun({ instances: o.instances, serveArgs: serveArgs(o.deltatok), nginx, corpus: o.corpus, replay, killThird: true, requests: want.length });
  const killed = { ...check(down.records, want), killed_instance: down.killed, killed_after_request: down.pausedAt, reused: down.reused, encoded: down.encoded, reuse: down.reuse, per_instance_requests: down.instances.map((s) => s.requests), client: down.client, seconds: (performance.now() - t2) / 1000 };

  return {
    corpus: o.corpus,
    instances: o.instances,
    interleave: o.interleave,
    requests: want.length,
    single_instance: { ...single, reuse: r4(single.reuse) },
    cluster: { ...cluster, reuse: r4(cluster.reuse) },
    cluster_killed: { ...killed, reuse: r4(killed.reuse) },
    reuse_ratio: r4(cluster.reuse / single.reuse),
    wrong_counts_with_kill: killed.wrong_counts,
    errors_with_kill: killed.errors,
    note: "reuse = tokens reused / (reused + encoded), summed over the instances' stats; reuse_ratio = cluster / single instance (target ≥ 0.9); wrong counts against the in-process library (target 0)",
  };
}
