// Writes bench/data/encode/*.json.gz: the four kinds of text `npm run bench -- --suite encode`
// measures, each a list of distinct strings of at least 1.2 MB of UTF-8 in all (so a first pass
// over them is text the process has never seen, not the same strings repeated):
//
// - tool-json: tool schemas, tool-call arguments and JSON tool results of the tau-bench / tau2-bench
//   trajectories, MLCommons' SWE-bench agent and GLM-4.5's search agent;
// - code-shell: the commands, file views, diffs and outputs of mini-swe-agent's SWE-bench runs;
// - prose: the user and assistant messages of the tau-bench / tau2-bench conversations;
// - multilingual: the names of languages, regions, scripts and currencies as every locale of
//   Node's ICU (CLDR data) writes them, joined by each locale's list format, one line per locale
//   and kind of name, and dates and numbers as each locale formats them, the locales in turn.
//
// The first three are read from ../shared/corpus/trajectories (sources and licenses in
// bench/data/encode/README.md); the multilingual text from this Node's ICU. Deterministic: the same
// inputs give the same files.
//
// Run: node scripts/make-encode-texts.mjs   (DELTATOK_SHARED=/path/to/shared when ../shared is elsewhere)
import { readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

const ROOT = new URL("..", import.meta.url);
const SHARED = process.env.DELTATOK_SHARED === undefined ? new URL("../shared/corpus/trajectories/", ROOT) : new URL("corpus/trajectories/", `file://${process.env.DELTATOK_SHARED.replace(/\/?$/, "/")}`);
const OUT = new URL("bench/data/encode/", ROOT);
const TARGET = 1_200_000;

function conversations(name) {
  return readFileSync(new URL(name, SHARED), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));
}

/** Distinct strings from `lists` in turn (round-robin over files), until `TARGET` bytes. */
function take(lists) {
  const seen = new Set();
  const out = [];
  let bytes = 0;
  const idx = lists.map(() => 0);
  while (bytes < TARGET && idx.some((i, k) => i < lists[k].length)) {
    for (let k = 0; k < lists.length && bytes < TARGET; k++) {
      const s = lists[k][idx[k]++];
      if (s === undefined || s.length === 0 || seen.has(s)) continue;
      seen.add(s);
      out.push(s);
      bytes += Buffer.byteLength(s);
    }
  }
  if (bytes < TARGET) throw new Error(`only ${bytes} bytes of distinct text`);
  return out;
}

const TAU = ["tau2-retail-gpt-4.1-mini-toolorchestra.jsonl", "tau-bench-airline-gpt-4o.jsonl", "tau2-airline-claude-sonnet-4-5.jsonl", "tau2-airline-gpt-oss-120b.jsonl"];
function toolJson() {
  return take(
    [...TAU, "mlcommons-swebench-agentic-coding.jsonl", "glm45-search-agent-example.jsonl"].map((f) => {
      const out = [];
      for (const c of conversations(f)) {
        if (c.tools) out.push(JSON.stringify(c.tools));
        for (const m of c.messages) {
          for (const t of m.tool_calls ?? []) out.push(t.function.arguments);
          if (m.role === "tool" && typeof m.content === "string" && /^\s*[[{]/.test(m.content)) out.push(m.content);
        }
      }
      return out;
    }),
  );
}

function prose() {
  return take(
    TAU.map((f) => {
      const out = [];
      for (const c of conversations(f)) for (const m of c.messages) if ((m.role === "user" || m.role === "assistant") && typeof m.content === "string") out.push(m.content);
      return out;
    }),
  );
}

function codeShell() {
  const out = [];
  for (const c of conversations("minisweagent-gemini-3-pro-swebench-verified-top50.jsonl")) {
    for (const m of c.messages) if (m.role !== "system" && typeof m.content === "string") out.push(m.content);
  }
  return take([out]);
}

function multilingual() {
  const probe = new Intl.DisplayNames(["en"], { type: "language" });
  const codes = {
    language: [],
    region: [],
    script: ["Adlm", "Arab", "Armn", "Beng", "Bopo", "Cher", "Cyrl", "Deva", "Ethi", "Geor", "Grek", "Gujr", "Guru", "Hang", "Hani", "Hans", "Hant", "Hebr", "Hira", "Jpan", "Kana", "Khmr", "Knda", "Kore", "Laoo", "Latn", "Mlym", "Mong", "Mymr", "Olck", "Orya", "Sinh", "Syrc", "Taml", "Telu", "Thaa", "Thai", "Tibt", "Vaii", "Yiii"],
    currency: Intl.supportedValuesOf("currency"),
  };
  const letters = "abcdefghijklmnopqrstuvwxyz";
  for (const a of letters) for (const b of letters) if (probe.of(a + b) !== a + b) codes.language.push(a + b);
  const regionProbe = new Intl.DisplayNames(["en"], { type: "region" });
  for (const a of letters.toUpperCase()) for (const b of letters.toUpperCase()) if (regionProbe.of(a + b) !== a + b) codes.region.push(a + b);
  const locales = [...new Set(codes.language.map((l) => Intl.getCanonicalLocales(l)[0]).filter((l) => Intl.DisplayNames.supportedLocalesOf([l]).length > 0)), "zh-Hant", "pt-PT", "sr-Latn"].sort();
  const perLocale = [];
  const day = new Date(Date.UTC(2026, 10, 30, 15, 4, 5));
  for (const loc of locales) {
    const lines = [];
    perLocale.push(lines);
    const list = new Intl.ListFormat([loc], { type: "conjunction" });
    for (const [type, list0] of Object.entries(codes)) {
      const names = new Intl.DisplayNames([loc], { type, fallback: "none" });
      const words = list0.map((c) => names.of(c)).filter((w) => typeof w === "string");
      for (let i = 0; i < words.length; i += 12) lines.push(list.format(words.slice(i, i + 12)) + ".");
    }
    const date = new Intl.DateTimeFormat([loc], { dateStyle: "full", timeStyle: "long", timeZone: "UTC" }).format(day);
    const rel = new Intl.RelativeTimeFormat([loc], { numeric: "auto" });
    const num = new Intl.NumberFormat([loc], { style: "currency", currency: "EUR" }).format(1234567.891);
    lines.push(`${date} — ${rel.format(-3, "day")}, ${rel.format(2, "week")}, ${rel.format(1, "month")}: ${num}`);
  }
  // every locale in turn; a line another locale wrote the same way is kept once
  return take(perLocale);
}

const kinds = { "tool-json": toolJson(), "code-shell": codeShell(), prose: prose(), multilingual: multilingual() };
for (const [name, strings] of Object.entries(kinds)) {
  const json = JSON.stringify(strings);
  writeFileSync(new URL(`${name}.json.gz`, OUT), gzipSync(json, { level: 9 }));
  const bytes = strings.reduce((n, s) => n + Buffer.byteLength(s), 0);
  console.log(`${name}: ${strings.length} strings, ${bytes} bytes`);
}
