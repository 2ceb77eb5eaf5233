/**
 * Incremental rendering benchmark (issue 4). One process, ratios from one run:
 *
 *  1. Long SWE-agent conversations (minisweagent top50, mlcommons SWE-bench), Qwen3: the time
 *     to compute ISL for every request with incremental rendering, against the limit (one
 *     encode of each final conversation) and against `mode: "full"` (timed on an evenly spread
 *     sample of requests and extrapolated per request: full mode on the whole top50 file takes
 *     very long). Also incremental tokenization with whole renders (`incrementalRender: false`).
 *  2. tau-bench airline: the same against the limit.
 *  3. Per-request latency against the turn index of one growing conversation (SWE-agent
 *     conversations concatenated to `turns` turns) for full, incremental-tokenize-only and
 *     incremental-render: a hand-written SVG plot, and the turn-200 / turn-10 latency ratio;
 *     then the incremental-render mode again, split into render and tokenize time, next to a
 *     whole render of each request and one encode of only the text each request appends.
 *
 * Usage: `node --import tsx -e "import('./bench/incremental.ts').then(m => m.run({ svg: '/tmp/latency.svg' }))"`
 * (prints JSON and returns it).
 */
import { existsSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Deltatok } from "../src/api/deltatok.js";
import type { DeltatokOptions, PromptOptions } from "../src/api/options.js";
import { assistantIndices, type Conversation } from "../src/corpus/corpus.js";
import { commonPrefixLength } from "../src/splice/lcp.js";
import { loadConversations } from "./replay.js";

export interface IncrementalBenchOptions {
  /** The shared corpus directory (default: ../shared/corpus/trajectories next to the repo). */
  trajectories?: string;
  /** Where to write the latency plot (SVG); none when absent. */
  svg?: string;
  /** Tokenizer (default qwen3, whose template is used). */
  tokenizer?: string;
  /** Requests timed in full mode per corpus, spread evenly (default 150). */
  fullSample?: number;
  /** Turns of the growing conversation (default 300). */
  turns?: number;
  /** Full-mode latency is measured every `fullEvery` turns (default 10). */
  fullEvery?: number;
  /** Repeats of the incremental latency runs; the per-turn minimum counts (default 3). */
  repeats?: number;
  /** Skip parts: "corpora", "tau", "latency". */
  skip?: string[];
  /** Print the JSON (default true). */
  print?: boolean;
}

/** ../shared next to the repository, from bench/ (tsx) or dist/bench/ (compiled). */
const DEFAULT_DIR = ["../../shared/corpus/trajectories/", "../../../shared/corpus/trajectories/"]
  .map((rel) => fileURLToPath(new URL(rel, import.meta.url)))
  .find((d) => existsSync(d)) ?? fileURLToPath(new URL("../../shared/corpus/trajectories/", import.meta.url));
const SWE = ["minisweagent-gemini-3-pro-swebench-verified-top50.jsonl", "mlcommons-swebench-agentic-coding.jsonl"];
const TAU = "tau-bench-airline-gpt-4o.jsonl";

interface Request {
  messages: unknown[];
  options: PromptOptions;
}

function requestsOf(convs: Conversation[]): Request[][] {
  return convs.map((c) => {
    const options: PromptOptions = { tools: c.tools, chat_template_kwargs: c.chat_template_kwargs };
    return assistantIndices(c.messages).map((k) => ({ messages: c.messages.slice(0, k), options }));
  });
}

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

async function deltatok(base: DeltatokOptions, extra: DeltatokOptions): Promise<Deltatok> {
  return Deltatok.create({ ...base, ...extra });
}

/** Seconds to answer every request (conversation by conversation, in order). */
function timeAll(dt: Deltatok, reqs: Request[][]): { seconds: number; tokens: number; requests: number } {
  let tokens = 0;
  let requests = 0;
  const t0 = performance.now();
  for (const conv of reqs) {
    for (const r of conv) {
      requests++;
      try {
        tokens += dt.countPrompt(r.messages, r.options);
      } catch {
        // requests the template rejects fail alike in every mode
      }
    }
  }
  return { seconds: (performance.now() - t0) / 1000, tokens, requests };
}

/** The limit: one encode of each final conversation (renders untimed). */
function timeLimit(dt: Deltatok, convs: Conversation[]): { seconds: number; tokens: number } {
  const finals: string[] = [];
  for (const c of convs) {
    try {
      finals.push(dt.renderPrompt(c.messages, { tools: c.tools, chat_template_kwargs: c.chat_template_kwargs, add_generation_prompt: false }));
    } catch {
      // skipped by every mode alike
    }
  }
  let tokens = 0;
  const t0 = performance.now();
  for (const text of finals) tokens += dt.countText(text);
  return { seconds: (performance.now() - t0) / 1000, tokens };
}

/** Full mode on an evenly spread sample of requests: seconds per request. */
function timeFullSample(dt: Deltatok, reqs: Request[][], sample: number): { perRequest: number; sampled: number } {
  const all = reqs.flat();
  const step = Math.max(1, Math.floor(all.length / sample));
  let n = 0;
  const t0 = performance.now();
  for (let i = 0; i < all.length; i += step) {
    const r = all[i] as Request;
    try {
      dt.countPrompt(r.messages, r.options);
    } catch {
      // as above
    }
    n++;
  }
  return { perRequest: (performance.now() - t0) / 1000 / n, sampled: n };
}

function renderWork(dt: Deltatok): Record<string, number> {
  const w = dt.stats().render;
  return w === undefined ? {} : { ...w };
}

async function corpusBench(path: string, base: DeltatokOptions, o: Required<Pick<IncrementalBenchOptions, "fullSample">>): Promise<Record<string, unknown>> {
  const convs = loadConversations(path);
  const reqs = requestsOf(convs);
  const warm = await deltatok(base, { mode: "incremental" });
  timeAll(warm, reqs.slice(0, 2)); // JIT warm-up
  const limit = timeLimit(warm, convs);
  const incRender = await deltatok(base, { mode: "incremental", incrementalRender: true });
  const a = timeAll(incRender, reqs);
  const incTok = await deltatok(base, { mode: "incremental", incrementalRender: false });
  const b = timeAll(incTok, reqs);
  if (a.tokens !== b.tokens) throw new Error(`incremental render and whole renders disagree: ${a.tokens} vs ${b.tokens} tokens`);
  const full = await deltatok(base, { mode: "full" });
  const f = timeFullSample(full, reqs, o.fullSample);
  const fullEstimate = f.perRequest * a.requests;
  const sa = incRender.stats();
  return {
    corpus: path.slice(path.lastIndexOf("/") + 1),
    conversations: convs.length,
    requests: a.requests,
    isl_tokens: a.tokens,
    limit: { seconds: r3(limit.seconds), tokens: limit.tokens, what: "one encode of each final conversation" },
    incremental_render: { seconds: r3(a.seconds), render_s: r3(sa.renderMs / 1000), tokenize_s: r3(sa.tokenizeMs / 1000), work: renderWork(incRender) },
    incremental_tokenize_only: { seconds: r3(b.seconds), render_s: r3(incTok.stats().renderMs / 1000), tokenize_s: r3(incTok.stats().tokenizeMs / 1000) },
    full: {
      seconds_estimated: r3(fullEstimate),
      per_request_ms: r3(f.perRequest * 1000),
      sampled_requests: f.sampled,
      what: `mode "full" timed on ${f.sampled} evenly spread requests, extrapolated per request to all ${a.requests}`,
    },
    ratios: {
      incremental_render_over_limit: r3(a.seconds / limit.seconds),
      tokenize_only_over_limit: r3(b.seconds / limit.seconds),
      full_over_incremental_render: r3(fullEstimate / a.seconds),
      tokenize_only_over_incremental_render: r3(b.seconds / a.seconds),
    },
  };
}

/** One long conversation: the system prompt of the first, then the turns of several, concatenated. */
function growingConversation(convs: Conversation[], turns: number): { messages: unknown[]; tools: unknown[] | null } {
  const sorted = convs.slice().sort((x, y) => y.messages.length - x.messages.length);
  const first = sorted[0] as Conversation;
  const messages: unknown[] = [];
  let assistants = 0;
  for (const c of sorted) {
    for (const m of c.messages) {
      const role = (m as { role?: unknown }).role;
      if (role === "system" && messages.length > 0) continue;
      messages.push(m);
      if (role === "assistant" && ++assistants > turns) return { messages: messages.slice(0, -1), tools: first.tools };
    }
  }
  return { messages, tools: first.tools };
}

interface Series {
  name: string;
  /** [turn, ms] */
  points: Array<[number, number]>;
}

async function latencyBench(dir: string, base: DeltatokOptions, o: Required<Pick<IncrementalBenchOptions, "turns" | "fullEvery" | "repeats">>): Promise<{ json: Record<string, unknown>; series: Series[] }> {
  const convs = loadConversations(dir + SWE[0]);
  const conv = growingConversation(convs, o.turns);
  const ks = assistantIndices(conv.messages);
  const options: PromptOptions = { tools: conv.tools };
  // per turn, the best of the repeats: [total, render, tokenize, tokens encoded] (ms, ms, ms, count)
  const parts = new Map<number, [number, number, number, number]>();
  const freshParts = new Map<number, [number, number, number, number]>();
  const perTurn = async (extra: DeltatokOptions, every: number, repeats: number, split = false, fresh = false): Promise<Array<[number, number]>> => {
    const into = fresh ? freshParts : parts;
    const best = new Map<number, number>();
    for (let rep = 0; rep < repeats; rep++) {
      const dt = await deltatok(base, extra);
      // warm-up on another conversation (JIT), then the measured one from its first turn
      const w = convs[1] as Conversation;
      for (const k of assistantIndices(w.messages).slice(0, 20)) dt.countPrompt(w.messages.slice(0, k), { tools: w.tools });
      dt.clearCache();
      ks.forEach((k, turn) => {
        if ((turn + 1) % every !== 0 && turn !== 0) return;
        // fresh: every request brings new message objects (as a server parsing JSON does), so no
        // message is proven unchanged by its version and every check is made
        const msgs = fresh ? conv.messages.slice(0, k).map((m) => ({ ...(m as object) })) : conv.messages.slice(0, k);
        const s0 = split ? dt.stats() : null;
        const t0 = performance.now();
        dt.countPrompt(msgs, options);
        const ms = performance.now() - t0;
        const prev = best.get(turn + 1);
        if (prev === undefined || ms < prev) best.set(turn + 1, ms);
        if (s0 !== null) {
          const s1 = dt.stats();
          const x: [number, number, number, number] = [ms, s1.renderMs - s0.renderMs, s1.tokenizeMs - s0.tokenizeMs, s1.tokensEncoded - s0.tokensEncoded];
          const b = into.get(turn + 1);
          if (b === undefined) into.set(turn + 1, x);
          else for (let i = 0; i < 4; i++) b[i] = Math.min(b[i] as number, x[i] as number);
        }
      });
    }
    return [...best.entries()].sort((a, b) => a[0] - b[0]);
  };
  const incRender = await perTurn({ mode: "incremental", incrementalRender: true }, 1, o.repeats);
  // the split by the Deltatok's timers in runs of its own (reading stats between requests costs)
  await perTurn({ mode: "incremental", incrementalRender: true }, 1, o.repeats, true);
  const incFresh = await perTurn({ mode: "incremental", incrementalRender: true }, 1, o.repeats, true, true);
  const incTok = await perTurn({ mode: "incremental", incrementalRender: false }, 1, o.repeats);
  const full = await perTurn({ mode: "full" }, o.fullEvery, 1);
  // References for the same requests, outside the Deltatok: a whole render (no tokenization), and
  // one encode of just the text each request appends to the previous one's render.
  const ref = await deltatok(base, { mode: "incremental" });
  const wholeRender = new Map<number, number>();
  const tailEncode = new Map<number, number>();
  const tails: string[] = [];
  for (let rep = 0; rep < o.repeats; rep++) {
    let prevText = "";
    ks.forEach((k, turn) => {
      const msgs = conv.messages.slice(0, k);
      const t0 = performance.now();
      const text = ref.renderPrompt(msgs, options);
      const ms = performance.now() - t0;
      const a = wholeRender.get(turn + 1);
      if (a === undefined || ms < a) wholeRender.set(turn + 1, ms);
      if (rep === 0) tails.push(text.slice(commonPrefixLength(text, prevText)));
      prevText = text;
    });
  }
  // (timed apart from the renders, whose large strings would put their collection here)
  for (let rep = 0; rep < o.repeats; rep++) {
    tails.forEach((tail, turn) => {
      const t0 = performance.now();
      ref.countText(tail);
      const ms = performance.now() - t0;
      const b = tailEncode.get(turn + 1);
      if (b === undefined || ms < b) tailEncode.set(turn + 1, ms);
    });
  }
  const partSeries = (i: number, m = parts): Array<[number, number]> => [...m.entries()].map(([t, x]) => [t, x[i] as number]);
  const components: Array<[string, Array<[number, number]>]> = [
    ["total", partSeries(0)],
    ["render (incremental)", partSeries(1)],
    ["tokenize (incremental)", partSeries(2)],
    ["tokens encoded", partSeries(3)],
    ["render (incremental), new message objects every request: no content versions", partSeries(1, freshParts)],
    ["reference: whole render of the request", [...wholeRender.entries()]],
    ["reference: one encode of the appended text alone", [...tailEncode.entries()]],
  ];
  const series: Series[] = [
    { name: "full (re-render + re-tokenize)", points: full },
    { name: "incremental tokenize, whole render", points: incTok },
    { name: "incremental render + tokenize", points: incRender },
    { name: "incremental render + tokenize, new message objects every request", points: incFresh },
  ];
  /** Median latency over turns [t - w, t + w] (single turns are noisy on a shared machine). */
  const around = (pts: Array<[number, number]>, t: number, w = 5): number => {
    const xs = pts.filter(([x]) => Math.abs(x - t) <= w).map(([, y]) => y).sort((a, b) => a - b);
    return xs.length === 0 ? NaN : (xs[Math.floor(xs.length / 2)] as number);
  };
  const at = (pts: Array<[number, number]>, t: number): number => {
    const hit = pts.find(([x]) => x === t);
    return hit === undefined ? around(pts, t, 10) : hit[1];
  };
  const lastTurn = ks.length;
  const t200 = Math.min(200, lastTurn);
  const json = {
    conversation: { messages: conv.messages.length, turns: lastTurn, what: "minisweagent conversations concatenated (system prompt of the longest first)" },
    repeats: o.repeats,
    ms_at_turn: Object.fromEntries(
      series.map((s) => [s.name, { turn_10: r3(around(s.points, 10)), turn_100: r3(around(s.points, 100)), [`turn_${t200}`]: r3(around(s.points, t200)), [`turn_${lastTurn}`]: r3(at(s.points, lastTurn)) }]),
    ),
    ratio_turn200_over_turn10: Object.fromEntries(series.map((s) => [s.name, r3(around(s.points, t200) / around(s.points, 10))])),
    incremental_render_components: {
      at_turn: Object.fromEntries(
        components.map(([name, pts]) => [name, { turn_10: r3(around(pts, 10)), turn_100: r3(around(pts, 100)), [`turn_${t200}`]: r3(around(pts, t200)), [`turn_${lastTurn}`]: r3(around(pts, lastTurn)) }]),
      ),
      ratio_turn200_over_turn10: Object.fromEntries(components.map(([name, pts]) => [name, r3(around(pts, t200) / around(pts, 10))])),
      what: "the incremental render + tokenize mode measured again, split by the Deltatok's own timers (ms; tokens encoded is a count); the render part of the series whose requests bring new message objects (no message is proven unchanged by its content version: every check is made); and two references for the same requests: a whole render, and one encode of only the text the request appends (what the appended content itself costs)",
    },
    what: "per-request milliseconds; incremental modes: per-turn minimum over repeats, medians over ±5 turns; full mode sampled every " + o.fullEvery + " turns",
  };
  return { json, series };
}

/** A hand-written SVG line plot of per-request latency against the turn index (log-scale y). */
export function latencySvg(series: Series[], title: string): string {
  const W = 860;
  const H = 480;
  const L = 70;
  const R = 20;
  const T = 40;
  const B = 60;
  const colors = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd"];
  const all = series.flatMap((s) => s.points);
  const maxX = Math.max(...all.map(([x]) => x), 1);
  const ys = all.map(([, y]) => y).filter((y) => y > 0);
  const lo = Math.pow(10, Math.floor(Math.log10(Math.min(...ys))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(...ys))));
  const sx = (x: number): number => L + ((W - L - R) * x) / maxX;
  const sy = (y: number): number => T + (H - T - B) * (1 - (Math.log10(Math.max(y, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)));
  const esc = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${W / 2}" y="22" text-anchor="middle" font-size="14">${esc(title)}</text>`);
  for (let d = lo; d <= hi * 1.0001; d *= 10) {
    for (const m of [1, 2, 5]) {
      const v = d * m;
      if (v > hi * 1.0001) break;
      const y = sy(v);
      out.push(`<line x1="${L}" x2="${W - R}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="${m === 1 ? "#ccc" : "#eee"}"/>`);
      if (m === 1 || m === 5) out.push(`<text x="${L - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end">${v >= 1 ? v : v.toPrecision(1)}</text>`);
    }
  }
  const stepX = Math.pow(10, Math.floor(Math.log10(maxX))) / (maxX / Math.pow(10, Math.floor(Math.log10(maxX))) < 3 ? 2 : 1);
  for (let x = 0; x <= maxX; x += stepX) {
    out.push(`<line x1="${sx(x).toFixed(1)}" x2="${sx(x).toFixed(1)}" y1="${T}" y2="${H - B}" stroke="#eee"/>`);
    out.push(`<text x="${sx(x).toFixed(1)}" y="${H - B + 16}" text-anchor="middle">${x}</text>`);
  }
  out.push(`<line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" stroke="black"/><line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="black"/>`);
  out.push(`<text x="${(L + W - R) / 2}" y="${H - 18}" text-anchor="middle">turn (requests so far in the conversation)</text>`);
  out.push(`<text transform="translate(16 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">ms per request (log scale)</text>`);
  series.forEach((s, i) => {
    const c = colors[i % colors.length] as string;
    const d = s.points.map(([x, y], j) => `${j === 0 ? "M" : "L"}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(" ");
    out.push(`<path d="${d}" fill="none" stroke="${c}" stroke-width="1.5"/>`);
    out.push(`<rect x="${L + 14}" y="${T + 8 + i * 18}" width="14" height="3" fill="${c}"/><text x="${L + 34}" y="${T + 13 + i * 18}">${esc(s.name)}</text>`);
  });
  out.push("</svg>");
  return out.join("\n") + "\n";
}

export async function run(options: IncrementalBenchOptions = {}): Promise<Record<string, unknown>> {
  const dir = options.trajectories ?? DEFAULT_DIR;
  for (const f of [...SWE, TAU]) if (!existsSync(dir + f)) throw new Error(`bench corpus missing: ${dir + f}`);
  const skip = new Set(options.skip ?? []);
  const base: DeltatokOptions = { tokenizer: options.tokenizer ?? "qwen3", date: "2026-11-30" };
  const result: Record<string, unknown> = { suite: "incremental", date: new Date().toISOString(), tokenizer: base.tokenizer };
  if (!skip.has("corpora")) {
    result.swe = [];
    for (const f of SWE) (result.swe as unknown[]).push(await corpusBench(dir + f, base, { fullSample: options.fullSample ?? 150 }));
  }
  if (!skip.has("tau")) result.tau_airline = await corpusBench(dir + TAU, base, { fullSample: options.fullSample ?? 150 });
  if (!skip.has("latency")) {
    const { json, series } = await latencyBench(dir, base, { turns: options.turns ?? 300, fullEvery: options.fullEvery ?? 10, repeats: options.repeats ?? 3 });
    result.latency = json;
    if (options.svg !== undefined) {
      writeFileSync(options.svg, latencySvg(series, "Per-request ISL latency vs turn (minisweagent, Qwen3)"));
      (result.latency as Record<string, unknown>).svg = options.svg;
    }
  }
  if (options.print ?? true) process.stdout.write(JSON.stringify(result, null, 2) + "\n");
  return result;
}
