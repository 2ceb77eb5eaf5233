/**
 * Streaming counts benchmark (`--suite stream`, issue 17): 1,000 responses of ~4k tokens, made of
 * the corpora's assistant texts (concatenated where shorter), streamed in ~16-token chunks (cut
 * by characters at 16 tokens' worth of the response's own characters per token, and at seeded
 * random points averaging the same), counted three ways in one process:
 *
 * - once: countText of each final response (the floor: every character encoded once);
 * - counter: dt.textCounter(), append per chunk (fixed and random cuts);
 * - O(n²): countText of the accumulated text at every chunk, what a harness does today. Timed on
 *   a sample of responses and extrapolated to all of them (said in the output).
 *
 * CPU time (process.cpuUsage, user + system) and characters handed to the tokenizer for each; the
 * ratio counter / once is the issue's figure (target ≤ 1.5). The "once" pass runs before and
 * after the counters and the two are averaged, so a machine that slows during the run biases
 * neither side. Then the same on unseen text (each unique corpus text once, both sides on fresh
 * tokenizers, so the counters' piece memo knows only what this pass streamed before), and the message counter: the same responses' first 100 streamed as assistant
 * content deltas, against countMessage of each final message.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { Deltatok } from "../src/api/deltatok.js";
import { clearTokenizerCache } from "../src/load/load.js";
import type { DeltatokOptions } from "../src/api/options.js";

export interface StreamBenchOptions {
  corpora: string[];
  deltatok: DeltatokOptions;
  responses: number;
  tokens: number;
  chunkTokens: number;
  /** Responses the O(n²) baseline is timed on. */
  sample: number;
}

function assistantTexts(files: string[]): string[] {
  const out: string[] = [];
  for (const f of files) {
    for (const line of readFileSync(f, "utf8").split("\n")) {
      if (line.trim() === "") continue;
      let rec: { messages?: Array<{ role?: unknown; content?: unknown }> };
      try {
        rec = JSON.parse(line) as typeof rec;
      } catch {
        continue;
      }
      for (const m of rec.messages ?? []) {
        if (m.role === "assistant" && typeof m.content === "string" && m.content.trim().length > 0 && m.content.isWellFormed()) out.push(m.content);
      }
    }
  }
  return out;
}

/** A seeded generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const round2 = (x: number): number => Math.round(x * 100) / 100;

export async function streamBench(o: StreamBenchOptions): Promise<Record<string, unknown>> {
  const dt = await Deltatok.create(o.deltatok);
  const texts = assistantTexts(o.corpora);
  if (texts.length === 0) throw new Error("no assistant texts in the corpora");
  // responses: consecutive assistant texts from a rotating start, joined until ~o.tokens tokens
  const responses: string[] = [];
  const tokens: number[] = [];
  const stride = Math.max(1, Math.floor(texts.length / o.responses));
  for (let r = 0; r < o.responses; r++) {
    let s = "";
    let n = 0;
    let want = o.tokens * 3; // characters to gather before counting: re-estimated from each count
    for (let i = (r * stride) % texts.length; n < o.tokens; i = (i + 1) % texts.length) {
      s += (s === "" ? "" : "\n\n") + (texts[i] as string);
      if (s.length < want) continue;
      n = dt.countText(s);
      want = Math.ceil((s.length * o.tokens) / Math.max(1, n)) + 1;
    }
    // a text much longer than wanted (one huge message) is cut to about o.tokens tokens
    while (n > o.tokens * 1.25) {
      let end = Math.floor((s.length * o.tokens) / n);
      if (/[\ud800-\udbff]/.test(s.charAt(end - 1))) end--;
      s = s.slice(0, end);
      n = dt.countText(s);
    }
    responses.push(s);
    tokens.push(n);
  }
  const chars = responses.reduce((a, s) => a + s.length, 0);
  const toks = tokens.reduce((a, b) => a + b, 0);
  const chunkChars = responses.map((s, i) => Math.max(1, Math.round((o.chunkTokens * s.length) / (tokens[i] as number))));
  const rand = rng(17);
  const randomCuts = responses.map((s, i) => {
    const cuts: number[] = [];
    const mean = chunkChars[i] as number;
    for (let p = 0; p < s.length; ) {
      p += 1 + Math.floor(rand() * (2 * mean - 1));
      cuts.push(Math.min(p, s.length));
    }
    return cuts;
  });
  const fixedCuts = responses.map((s, i) => {
    const cuts: number[] = [];
    for (let p = chunkChars[i] as number; ; p += chunkChars[i] as number) {
      cuts.push(Math.min(p, s.length));
      if (p >= s.length) break;
    }
    return cuts;
  });

  const once = (): { ms: number; chars: number } => {
    const t0 = cpuMs();
    let sum = 0;
    for (const s of responses) sum += dt.countText(s);
    if (sum !== toks) throw new Error("once: counts changed");
    return { ms: cpuMs() - t0, chars };
  };
  const counter = (cutsOf: number[][]): { ms: number; chars: number; appends: number; maxLookBack: number } => {
    let encoded = 0;
    let appends = 0;
    let worst = 0;
    const t0 = cpuMs();
    for (let r = 0; r < responses.length; r++) {
      const s = responses[r] as string;
      const c = dt.textCounter();
      let prev = 0;
      for (const cut of cutsOf[r] as number[]) {
        c.append(s.slice(prev, cut));
        prev = cut;
      }
      const n = c.finish();
      if (n !== tokens[r]) throw new Error(`counter: response ${r} counted ${n}, countText says ${tokens[r]}`);
      const st = c.stats();
      encoded += st.charsEncoded;
      appends += st.appends;
      worst = Math.max(worst, st.maxLookBack);
    }
    return { ms: cpuMs() - t0, chars: encoded, appends, maxLookBack: worst };
  };
  const quadratic = (k: number): { ms: number; chars: number; appends: number } => {
    let encoded = 0;
    let appends = 0;
    const t0 = cpuMs();
    for (let r = 0; r < k; r++) {
      const s = responses[r] as string;
      let n = 0;
      for (const cut of fixedCuts[r] as number[]) {
        n = dt.countText(s.slice(0, cut));
        encoded += cut;
        appends++;
      }
      if (n !== tokens[r]) throw new Error("quadratic: wrong count");
    }
    return { ms: cpuMs() - t0, chars: encoded, appends };
  };

  // warm-up (JIT, BPE memo): the first 50 responses each way
  for (let r = 0; r < Math.min(50, responses.length); r++) {
    dt.countText(responses[r] as string);
    const c = dt.textCounter();
    let prev = 0;
    for (const cut of fixedCuts[r] as number[]) {
      c.append((responses[r] as string).slice(prev, cut));
      prev = cut;
    }
  }
  const once1 = once();
  const fixed = counter(fixedCuts);
  const random = counter(randomCuts);
  const once2 = once();
  const k = Math.min(o.sample, responses.length);
  const q = quadratic(k);
  const onceMs = (once1.ms + once2.ms) / 2;
  const scale = responses.length / k;

  // Unseen text: the responses above repeat the corpora's texts about 3× (15.97M characters
  // from 5.48M unique), and the piece memo is shared by a tokenizer's counters. Here each unique
  // text is used once, joined into ~o.tokens-token responses, and both sides start cold: a fresh
  // tokenizer for "once" and another for the counter, so the memo only knows what earlier
  // responses of this pass streamed (the repetition of language, not of the corpus).
  const unseen: string[] = [];
  {
    let s = "";
    for (const t of new Set(texts)) {
      s += (s === "" ? "" : "\n\n") + t;
      if (s.length >= (chars / toks) * o.tokens) {
        unseen.push(s);
        s = "";
      }
    }
  }
  const unseenOnce = async (): Promise<{ ms: number; tokens: number }> => {
    clearTokenizerCache();
    const fresh = await Deltatok.create(o.deltatok);
    const t0 = cpuMs();
    let sum = 0;
    for (const s of unseen) sum += fresh.countText(s);
    return { ms: cpuMs() - t0, tokens: sum };
  };
  const unseenCounter = async (): Promise<{ ms: number; tokens: number; chars: number; memoPieces: number; appends: number }> => {
    clearTokenizerCache();
    const fresh = await Deltatok.create(o.deltatok);
    let sum = 0;
    let encoded = 0;
    let memoPieces = 0;
    let appends = 0;
    const t0 = cpuMs();
    for (const s of unseen) {
      const step = Math.max(1, Math.round((o.chunkTokens * chars) / toks));
      const c = fresh.textCounter();
      for (let i = 0; i < s.length; i += step) c.append(s.slice(i, i + step));
      sum += c.finish();
      const st = c.stats();
      encoded += st.charsEncoded;
      memoPieces += st.memoPieces;
      appends += st.appends;
    }
    return { ms: cpuMs() - t0, tokens: sum, chars: encoded, memoPieces, appends };
  };
  const u1 = await unseenOnce();
  const uc = await unseenCounter();
  const u2 = await unseenOnce();
  if (uc.tokens !== u1.tokens || u2.tokens !== u1.tokens) throw new Error("unseen: counter and countText disagree");
  const unseenChars = unseen.reduce((a, t) => a + t.length, 0);
  const unseenOnceMs = (u1.ms + u2.ms) / 2;

  // the message counter: the first 100 responses as assistant content deltas
  const m = Math.min(100, responses.length);
  let mt0 = cpuMs();
  for (let r = 0; r < m; r++) dt.countMessage({ role: "assistant", content: responses[r] });
  const messageOnceMs = cpuMs() - mt0;
  let renderChars = 0;
  let messageEncoded = 0;
  mt0 = cpuMs();
  for (let r = 0; r < m; r++) {
    const s = responses[r] as string;
    const mc = dt.messageCounter();
    let prev = 0;
    for (const cut of fixedCuts[r] as number[]) {
      mc.append({ content: s.slice(prev, cut) });
      prev = cut;
    }
    mc.finish();
    renderChars += mc.stats().renderChars;
    messageEncoded += mc.stats().charsEncoded;
  }
  const messageMs = cpuMs() - mt0;

  const counterSummary = (run: { ms: number; chars: number; appends: number; maxLookBack: number }) => ({
    cpu_ms: round2(run.ms),
    chars_encoded: run.chars,
    appends: run.appends,
    max_lookback_chars: run.maxLookBack,
    ratio_to_once_cpu: round2(run.ms / onceMs),
    ratio_to_once_chars: round2(run.chars / chars),
  });
  return {
    corpora: o.corpora.map((f) => f.split("/").pop()),
    note: "CPU ms (user + system) of this process; the machine is shared, so compare ratios within this run",
    responses: responses.length,
    tokens_total: toks,
    tokens_per_response: Math.round(toks / responses.length),
    chars_total: chars,
    chunk_tokens: o.chunkTokens,
    chunk_chars_mean: Math.round(chunkChars.reduce((a, b) => a + b, 0) / chunkChars.length),
    once: { cpu_ms: round2(onceMs), cpu_ms_runs: [round2(once1.ms), round2(once2.ms)], chars_encoded: chars },
    counter_fixed_cuts: counterSummary(fixed),
    counter_random_cuts: counterSummary(random),
    counter_unseen_text: {
      note: "each unique corpus text once, joined into responses; once and counter each on a fresh tokenizer (cold memos), fixed cuts",
      responses: unseen.length,
      chars_total: unseenChars,
      tokens_total: u1.tokens,
      once_cpu_ms: round2(unseenOnceMs),
      once_cpu_ms_runs: [round2(u1.ms), round2(u2.ms)],
      counter_cpu_ms: round2(uc.ms),
      chars_encoded: uc.chars,
      appends: uc.appends,
      memo_pieces: uc.memoPieces,
      ratio_to_once_cpu: round2(uc.ms / unseenOnceMs),
      ratio_to_once_chars: round2(uc.chars / unseenChars),
    },
    quadratic_baseline: {
      measured_on_responses: k,
      extrapolated: `× ${round2(scale)} to all ${responses.length} responses`,
      cpu_ms_measured: round2(q.ms),
      cpu_ms_extrapolated: round2(q.ms * scale),
      chars_encoded_extrapolated: Math.round(q.chars * scale),
      appends_extrapolated: Math.round(q.appends * scale),
      ratio_to_once_cpu: round2((q.ms * scale) / onceMs),
      ratio_counter_fixed_to_quadratic_cpu: round2(fixed.ms / (q.ms * scale)),
    },
    message_counter: {
      responses: m,
      count_message_once_cpu_ms: round2(messageOnceMs),
      counter_cpu_ms: round2(messageMs),
      ratio_to_once_cpu: round2(messageMs / messageOnceMs),
      chars_encoded: messageEncoded,
      render_chars: renderChars,
      note: "each append renders the whole message (render_chars): O(message) per append",
    },
  };
}

/** Every shared corpus when present, else the bundled one. */
export function streamCorpora(sharedDir: string, bundled: string): string[] {
  if (!existsSync(sharedDir)) return [bundled];
  const all = readdirSync(sharedDir).filter((f) => f.endsWith(".jsonl")).sort();
  return all.length > 0 ? all.map((f) => sharedDir + f) : [bundled];
}
