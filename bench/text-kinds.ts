/**
 * The four kinds of text the encoder benchmarks measure (issue "deltatok's own tokenizer"), each
 * built to at least `minBytes` of UTF-8 from the bundled data, deterministically:
 *
 * - tool JSON: tau-bench airline's tool-call arguments, tool results and tool schemas;
 * - code / shell: the SWE-bench conversation's tool calls (shell commands) and tool results (code,
 *   diffs, command output);
 * - English prose: tau-bench's user and assistant texts and the SWE-bench reasoning;
 * - multilingual: the names of every language, script, region and currency that Intl.DisplayNames
 *   knows, and dates, lists and relative times, written in each of 60 locales (CJK, Cyrillic,
 *   Arabic, Hebrew, Devanagari, Thai, Greek, Latin with diacritics...), as one sentence per
 *   locale and kind. (The repository holds no multilingual corpus; these come from the running
 *   Node's ICU data, so they change with the Node release, not between runs.)
 *
 * Each kind is a list of strings (one per message part), repeated in order until it is large
 * enough: a scanner or regex keeps no memory between strings, so repeating costs nothing unfair.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export type TextKind = "tool-json" | "code-shell" | "prose" | "multilingual";
export const TEXT_KINDS: readonly TextKind[] = ["tool-json", "code-shell", "prose", "multilingual"];

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

interface Message {
  role: string;
  content?: string;
  reasoning_content?: string;
  tool_calls?: Array<{ function: { name: string; arguments: string } }>;
}
interface Conversation {
  messages: Message[];
  tools?: unknown;
}

function conversations(file: string): Conversation[] {
  return readFileSync(join(ROOT, "data", file), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Conversation);
}

const LOCALES = [
  "en", "de", "fr", "es", "it", "pt", "nl", "sv", "pl", "cs", "tr", "vi", "id", "fi", "hu", "ro", "da", "nb", "hr", "sk",
  "zh", "zh-Hant", "ja", "ko", "ru", "uk", "bg", "sr", "el", "he", "ar", "fa", "ur", "hi", "bn", "mr", "ta", "te", "kn", "ml",
  "gu", "pa", "th", "lo", "km", "my", "ka", "hy", "am", "si", "ne", "mn", "kk", "az", "uz", "sw", "zu", "yo", "ha", "ps",
];

function multilingual(): string[] {
  const codes = {
    language: ["en", "fr", "de", "zh", "ja", "ko", "ru", "ar", "hi", "es", "pt", "it", "tr", "vi", "th", "he", "el", "pl", "uk", "fa", "sw", "ta", "bn", "ur", "id"],
    region: ["US", "FR", "DE", "CN", "JP", "KR", "RU", "EG", "IN", "BR", "MX", "IT", "TR", "VN", "TH", "IL", "GR", "PL", "UA", "IR", "KE", "NG", "ZA", "AR", "CA"],
    script: ["Latn", "Cyrl", "Arab", "Hans", "Hant", "Jpan", "Kore", "Deva", "Thai", "Hebr", "Grek", "Beng", "Taml", "Geor", "Armn"],
    currency: ["USD", "EUR", "JPY", "CNY", "RUB", "INR", "BRL", "GBP", "KRW", "TRY", "EGP", "ILS", "THB", "VND", "ZAR"],
  } as const;
  const out: string[] = [];
  const day = new Date(Date.UTC(2026, 10, 30, 15, 4, 5));
  for (const loc of LOCALES) {
    for (const [type, list] of Object.entries(codes)) {
      const names = new Intl.DisplayNames([loc], { type: type as keyof typeof codes });
      const words = list.map((c) => names.of(c) ?? c);
      out.push(new Intl.ListFormat([loc], { type: "conjunction" }).format(words) + ".");
    }
    const dates = new Intl.DateTimeFormat([loc], { dateStyle: "full", timeStyle: "long", timeZone: "UTC" }).format(day);
    const rel = new Intl.RelativeTimeFormat([loc], { numeric: "auto" });
    const nums = new Intl.NumberFormat([loc], { style: "currency", currency: "EUR" }).format(1234567.891);
    out.push(`${dates} — ${rel.format(-3, "day")}, ${rel.format(2, "week")}, ${rel.format(1, "month")}: ${nums}`);
  }
  return out;
}

function strings(kind: TextKind): string[] {
  const tau = conversations("tau-bench-airline-20.jsonl");
  const swe = conversations("swebench-agentic-coding-scikit-learn-26323.jsonl");
  const out: string[] = [];
  switch (kind) {
    case "tool-json":
      for (const c of tau) {
        out.push(JSON.stringify(c.tools));
        for (const m of c.messages) {
          for (const call of m.tool_calls ?? []) out.push(call.function.arguments);
          if (m.role === "tool" && m.content) out.push(m.content);
        }
      }
      return out;
    case "code-shell":
      for (const c of swe) {
        for (const m of c.messages) {
          for (const call of m.tool_calls ?? []) out.push(call.function.arguments);
          if (m.role === "tool" && m.content) out.push(m.content);
        }
      }
      return out;
    case "prose":
      for (const c of [...tau, ...swe]) {
        for (const m of c.messages) {
          if ((m.role === "user" || m.role === "assistant") && m.content) out.push(m.content);
          if (m.reasoning_content) out.push(m.reasoning_content);
        }
      }
      return out;
    case "multilingual":
      return multilingual();
  }
}

/** The strings of a kind, repeated in order to at least `minBytes` of UTF-8. */
export function textsOfKind(kind: TextKind, minBytes = 1_000_000): string[] {
  const base = strings(kind).filter((s) => s.length > 0);
  const out: string[] = [];
  let bytes = 0;
  while (bytes < minBytes) {
    for (const s of base) {
      out.push(s);
      bytes += Buffer.byteLength(s);
    }
  }
  return out;
}
