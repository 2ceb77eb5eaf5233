/**
 * Pre-tokenization micro-benchmark: pieces per CPU-second of each scanner (src/encoder/pretokenize)
 * against the regex path it replaces (the translated Oniguruma pattern through pattern-split.ts's
 * splitText), on the four text kinds of bench/encode-texts.ts
 * (≥ 1.2 MB of distinct strings each), one core, the two contenders alternating in rounds. CPU time from
 * process.cpuUsage (user + system); pieces of both are compared once, before timing.
 *
 *   node dist/bench/pretokenize.js [--rounds 5] [--family o200k,cl100k,...] [--pathological]
 *
 * Prints one JSON line per (family, kind) and a summary table to stderr. `--pathological`: instead,
 * CPU milliseconds of both on the texts of the linear-work test (1M spaces, 400k of one letter,
 * 400k CJK, 400k digits, 400k dots), one round each.
 */
import { parseArgs } from "node:util";
import { Int32List, type PieceScanner, scannerFor } from "../src/encoder/pretokenize/index.js";
import { translateOniguruma } from "../src/encoder/regex/oniguruma.js";
import { type SplitBehavior, splitText } from "../src/encoder/regex/pattern-split.js";
import { DEEPSEEK_PATTERNS, GPT2_PATTERN, O200K_PATTERN, CL100K_PATTERN, QWEN_PATTERN } from "../src/encoder/pretokenize/patterns.js";
import { encodeTexts as textsOfKind, TEXT_KINDS } from "./encode-texts.js";

const split = (p: string, behavior: SplitBehavior = "Isolated", invert = false): { config: unknown; steps: Array<[RegExp, SplitBehavior, boolean]> } => ({
  config: { type: "Split", pattern: { Regex: p }, behavior, invert },
  steps: [[translateOniguruma(p).regex, behavior, invert]],
});

/** Each family: its tokenizer.json config (as the bundled tokenizers spell it) and its regex path. */
function families(): Record<string, { config: unknown; steps: Array<[RegExp, SplitBehavior, boolean]> }> {
  return {
    gpt2: { config: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true }, steps: [[translateOniguruma(GPT2_PATTERN).regex, "Isolated", false]] },
    cl100k: split(CL100K_PATTERN),
    qwen: split(QWEN_PATTERN),
    o200k: split(O200K_PATTERN, "Removed", true),
    "deepseek-v3": {
      config: { type: "Sequence", pretokenizers: DEEPSEEK_PATTERNS.map((p) => split(p).config) },
      steps: DEEPSEEK_PATTERNS.map((p) => [translateOniguruma(p).regex, "Isolated", false] as [RegExp, SplitBehavior, boolean]),
    },
  };
}

function regexPath(steps: Array<[RegExp, SplitBehavior, boolean]>, texts: readonly string[]): number {
  let pieces = 0;
  for (const t of texts) {
    let cur = [t];
    for (const [re, behavior, invert] of steps) {
      const next: string[] = [];
      for (const piece of cur) for (const x of splitText(re, piece, behavior, invert)) next.push(x);
      cur = next;
    }
    pieces += cur.length;
  }
  return pieces;
}

function scanned(scanner: PieceScanner, texts: readonly string[], ends: Int32List): number {
  let pieces = 0;
  for (const t of texts) {
    ends.clear();
    scanner.scan(t, 0, t.length, ends);
    pieces += ends.length;
  }
  return pieces;
}

function cpuSeconds<T>(f: () => T): { value: T; seconds: number } {
  const before = process.cpuUsage();
  const value = f();
  const d = process.cpuUsage(before);
  return { value, seconds: (d.user + d.system) / 1e6 };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
}

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "5" }, family: { type: "string" }, pathological: { type: "boolean" } },
});
const rounds = Number(values.rounds);
const all = families();
const chosen = values.family?.split(",") ?? Object.keys(all);
const rows: string[] = [];
if (values.pathological) {
  const texts: Array<[string, string]> = [
    ["1M spaces", " ".repeat(1_000_000)],
    ["'a' × 400k", "a".repeat(400_000)],
    ["400k CJK", "东京都中文字日本語的一是不了人我在有他".repeat(21_053).slice(0, 400_000)],
    ["400k digits", "7".repeat(400_000)],
    ["400k dots", ".".repeat(400_000)],
  ];
  for (const name of chosen) {
    const fam = all[name];
    const scanner = fam === undefined ? null : scannerFor(fam.config);
    if (fam === undefined || scanner === null) throw new Error(`unknown family ${name}`);
    const cells: string[] = [];
    for (const [label, text] of texts) {
      const a = cpuSeconds(() => scanned(scanner, [text], new Int32List(1 << 16)));
      const b = cpuSeconds(() => regexPath(fam.steps, [text]));
      if (a.value !== b.value) throw new Error(`${name} on ${label}: ${a.value} pieces vs ${b.value}`);
      console.log(JSON.stringify({ family: name, text: label, pieces: a.value, scannerMs: +(a.seconds * 1e3).toFixed(2), regexMs: +(b.seconds * 1e3).toFixed(2) }));
      cells.push(`${(a.seconds * 1e3).toFixed(1)} / ${(b.seconds * 1e3).toFixed(1)}`);
    }
    rows.push(`| ${name} | ${cells.join(" | ")} |`);
  }
  console.error([`| family (scanner / regex path, CPU ms) | ${texts.map(([l]) => l).join(" | ")} |`, `|---|${texts.map(() => "---").join("|")}|`, ...rows].join("\n"));
  process.exit(0);
}
for (const kind of TEXT_KINDS) {
  const texts = textsOfKind(kind);
  const chars = texts.reduce((n, t) => n + t.length, 0);
  for (const name of chosen) {
    const fam = all[name];
    if (fam === undefined) throw new Error(`unknown family ${name}`);
    const scanner = scannerFor(fam.config);
    if (scanner === null) throw new Error(`no scanner for ${name}`);
    const ends = new Int32List(1 << 16);
    // same pieces, and a warm-up of both
    for (const t of texts.slice(0, 2000)) {
      ends.clear();
      scanner.scan(t, 0, t.length, ends);
      if (ends.length !== regexPath(fam.steps, [t])) throw new Error(`${name}: pieces differ on ${JSON.stringify(t.slice(0, 80))}`);
    }
    const scan: number[] = [];
    const regex: number[] = [];
    let pieces = 0;
    for (let r = 0; r < rounds; r++) {
      const a = cpuSeconds(() => scanned(scanner, texts, ends));
      const b = cpuSeconds(() => regexPath(fam.steps, texts));
      if (a.value !== b.value) throw new Error(`${name}: ${a.value} pieces vs ${b.value}`);
      pieces = a.value;
      scan.push(a.seconds);
      regex.push(b.seconds);
    }
    const s = median(scan);
    const g = median(regex);
    const line = {
      family: name, kind, chars, pieces, rounds,
      scannerPiecesPerCpuSecond: Math.round(pieces / s), regexPiecesPerCpuSecond: Math.round(pieces / g),
      scannerNsPerPiece: +((s / pieces) * 1e9).toFixed(1), regexNsPerPiece: +((g / pieces) * 1e9).toFixed(1), speedup: +(g / s).toFixed(2),
    };
    console.log(JSON.stringify(line));
    rows.push(`| ${name} | ${kind} | ${(pieces / 1e3).toFixed(0)}k | ${(line.scannerPiecesPerCpuSecond / 1e6).toFixed(1)}M (${line.scannerNsPerPiece} ns) | ${(line.regexPiecesPerCpuSecond / 1e6).toFixed(2)}M (${line.regexNsPerPiece} ns) | ${line.speedup}× |`);
  }
}
console.error(["| family | kind | pieces | scanner pieces/CPU-s (per piece) | regex path | speedup |", "|---|---|---|---|---|---|", ...rows].join("\n"));
