/**
 * Giving every pattern of a built @huggingface/tokenizers instance the semantics the Rust
 * `tokenizers` crate runs it with (Oniguruma; see oniguruma.ts and pattern-split.ts).
 *
 * The JavaScript library compiles the patterns of tokenizer.json itself: the ByteLevel
 * pre-tokenizer's built-in GPT-2 pattern as a JavaScript literal (whose `\s` takes U+FEFF and
 * misses U+0085: `"a \u0085b"` is 4 ids instead of Rust's 5 on a ByteLevel tokenizer), Split and
 * Replace patterns through its own rewrite (`\s` right, but `\p{...}` from the running Node's
 * Unicode tables, ASCII-only case folding, and Split behaviors other than Isolated / Removed not
 * implemented), the Whitespace pre-tokenizer with an ASCII `\w` (Rust compiles it with the
 * `regex` crate: Unicode classes, its own tables), WhitespaceSplit with JavaScript's `\s`, and
 * Replace contents with `$` patterns expanded.
 *
 * Here each such component gets, as own properties on the instance (the library's code is not
 * touched): ByteLevel its `pattern` (the library's method reads it, and so does encoder.ts's tuned
 * stand-in); Split, Whitespace and WhitespaceSplit a `pre_tokenize_text`; Replace a `normalize`.
 * A component is changed only when its shape is recognized (the configuration keys and values
 * this module implements, the method the library's pipeline calls); then two probes run:
 *
 * - agreement: on plain texts, where the library is right (ASCII words, digits, CJK, newlines),
 *   the component answers as the pristine one did — for the configurations the library
 *   implements;
 * - effect: the pipeline really calls what was installed (a ByteLevel probe whose pieces
 *   differ between the two patterns; a call seen through `tokenizer.encode` for the others).
 *
 * A component whose pattern cannot be translated, or that fails a probe, is left (or put back) as
 * the library made it, and the report says so: `exact: false` with one note per component. So
 * does a component without a pattern that is known to differ from the Rust crate (Digits,
 * BertPreTokenizer, Punctuation, Metaspace with `split: true`, Strip, BertNormalizer,
 * StripAccents): it is reported, not changed.
 *
 * Layer: load.
 */

import type { Tokenizer } from "@huggingface/tokenizers";

import { literalPattern, PatternNotTranslated, translateOniguruma } from "../encoder/regex/oniguruma.js";
import { findMatches, replaceText, SPLIT_BEHAVIORS, splitText, type SplitBehavior } from "../encoder/regex/pattern-split.js";
import type { PatternReport } from "./types.js";
import { correctedClass, rangesV } from "../encoder/regex/runtime-classes.js";
import { complement, escapeSet, type Leaf, regexCrateLeaf } from "../encoder/regex/unicode-sets.js";

/** tokenizers' ByteLevel pattern (pre_tokenizers/byte_level.rs), which the library also uses. */
export const GPT2_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/**
 * Components without a pattern that the library runs differently from the Rust crate on some
 * texts (measured against the binding on text of the classes in test/helpers/texts.ts): they are
 * reported, not changed. None of the bundled tokenizers has one.
 */
const KNOWN_DIFFERENCES: Readonly<Record<string, string>> = {
  Digits: "known to differ from the Rust crate: JavaScript's \\d is ASCII, Rust's char::is_numeric takes every Number",
  BertPreTokenizer: "known to differ from the Rust crate: JavaScript's \\s and punctuation classes",
  Punctuation: "known to differ from the Rust crate: runs of punctuation are kept together, and its punctuation class",
  Metaspace: "known to differ from the Rust crate: split: true cuts trailing runs of spaces differently",
};
const KNOWN_NORMALIZER_DIFFERENCES: Readonly<Record<string, string>> = {
  Strip: "known to differ from the Rust crate: String.prototype.trim's whitespace (U+FEFF in, U+0085 out)",
  BertNormalizer: "known to differ from the Rust crate: CJK outside the BMP, JavaScript's \\s",
  StripAccents: "known to differ from the Rust crate: the running Node's Unicode marks",
};

/** ByteLevel probe: Rust's pieces, before the byte mapping. */
const BYTE_LEVEL_PROBE = "a \u0085b\ufeff'll";
const BYTE_LEVEL_PROBE_PIECES = ["a", " ", "\u0085", "b", "\ufeff'", "ll"];

/** Texts every pattern engine agrees on (nothing whose class membership differs). */
const PLAIN_PROBES = [
  "Hello, world! It's 2026-11-30; x = [1, 2.5e-3] -- done.",
  "    def f(x):\n        return x ** 2  # squares\n\n\tend  ",
  "東京都 中文字 한국어 日本語です。 That's 'll 'VE",
  '{"name": "get_user", "arguments": {"user_id": "omar_rossi_1241"}}\r\n</tool_call>',
];

/** The plain probes without their non-ASCII one. */
const ASCII_PROBES = PLAIN_PROBES.filter((p) => /^[\x00-\x7f]*$/.test(p));

type Component = Record<string, unknown>;

interface Install {
  readonly owner: Component;
  readonly key: string;
  readonly had: boolean;
  readonly original: unknown;
}

function isObj(v: unknown): v is Component {
  return (typeof v === "object" || typeof v === "function") && v !== null;
}

function onlyKeys(config: Component, allowed: readonly string[]): string | null {
  for (const k of Object.keys(config)) if (!allowed.includes(k)) return `unknown setting "${k}"`;
  return null;
}

/** The compiled pattern of a `{"String": ...}` / `{"Regex": ...}` object, or a reason it is not. */
function compilePattern(p: unknown): RegExp | string {
  if (!isObj(p)) return "pattern is not an object";
  const keys = Object.keys(p);
  if (keys.length !== 1) return "pattern must be {String} or {Regex}";
  const value = p[keys[0] as string];
  if (typeof value !== "string") return "pattern value is not a string";
  if (keys[0] === "String") return literalPattern(value).regex;
  if (keys[0] !== "Regex") return `pattern kind "${keys[0]}"`;
  try {
    return translateOniguruma(value).regex;
  } catch (e) {
    if (e instanceof PatternNotTranslated) return `pattern not translated: ${e.message}`;
    return `the translator failed: ${(e as Error)?.message ?? e}`;
  }
}

class Installer {
  readonly #tok: Tokenizer;
  readonly notes: string[] = [];
  exact = true;
  /** Functions that must see a call while the effect probe encodes. */
  readonly #spies: Array<{ where: string; seen: () => boolean; install: Install; done: () => void }> = [];

  constructor(tok: Tokenizer) {
    this.#tok = tok;
  }

  #left(where: string, why: string): void {
    this.exact = false;
    this.notes.push(`${where}: left to @huggingface/tokenizers (${why})`);
  }

  #set(owner: Component, key: string, value: unknown): Install {
    const had = Object.prototype.hasOwnProperty.call(owner, key);
    const install = { owner, key, had, original: owner[key] };
    owner[key] = value;
    return install;
  }

  static undo(installs: readonly Install[]): void {
    for (const i of [...installs].reverse()) {
      if (i.had) i.owner[i.key] = i.original;
      else delete i.owner[i.key];
    }
  }

  /** `config` is the component's tokenizer.json object, `node` what the library built from it. */
  visitPreTokenizer(config: unknown, node: unknown, where: string): void {
    if (!isObj(config) || !isObj(node)) return;
    switch (config["type"]) {
      case "Sequence": {
        const list = config["pretokenizers"];
        const built = node["tokenizers"];
        if (!Array.isArray(list) || !Array.isArray(built) || list.length !== built.length) {
          return this.#left(`${where} Sequence`, "unrecognized shape");
        }
        list.forEach((c, i) => this.visitPreTokenizer(c, built[i], `${where}.pretokenizers[${i}]`));
        return;
      }
      case "ByteLevel":
        return this.#guarded(`${where} ByteLevel`, () => this.#byteLevel(config, node, where));
      case "Split":
        return this.#guarded(`${where} Split`, () => this.#split(config, node, where));
      case "Whitespace":
        // Rust compiles its `\w+|[^\w\s]+` with the `regex` crate, whose classes are its own
        return this.#guarded(`${where} Whitespace`, () => this.#keepMatches(config, node, where, "Whitespace", whitespaceRegex));
      case "WhitespaceSplit":
        // Rust: split on char::is_whitespace (White_Space, which is Oniguruma's \s), removed
        return this.#guarded(`${where} WhitespaceSplit`, () =>
          this.#keepMatches(config, node, where, "WhitespaceSplit", () => runOf(complement(escapeSet("s")))),
        );
      case "Metaspace":
        if (config["split"] === true) this.#left(`${where} Metaspace`, KNOWN_DIFFERENCES["Metaspace"] as string);
        return;
      default: {
        const known = KNOWN_DIFFERENCES[config["type"] as string];
        if (known !== undefined && config["type"] !== "Metaspace") this.#left(`${where} ${config["type"]}`, known);
        return;
      }
    }
  }

  /** Runs one component's install; a failure of this module leaves the component to the library. */
  #guarded(where: string, install: () => void): void {
    try {
      install();
    } catch (e) {
      this.#left(where, `failed: ${(e as Error)?.message ?? e}`);
    }
  }

  visitNormalizer(config: unknown, node: unknown, where: string): void {
    if (!isObj(config) || !isObj(node)) return;
    if (config["type"] === "Sequence") {
      const list = config["normalizers"];
      const built = node["normalizers"];
      if (!Array.isArray(list) || !Array.isArray(built) || list.length !== built.length) {
        return this.#left(`${where} Sequence`, "unrecognized shape");
      }
      list.forEach((c, i) => this.visitNormalizer(c, built[i], `${where}.normalizers[${i}]`));
      return;
    }
    if (config["type"] === "Replace") this.#guarded(`${where} Replace`, () => this.#replace(config, node, `${where} Replace`));
    else {
      const known = KNOWN_NORMALIZER_DIFFERENCES[config["type"] as string];
      if (known !== undefined) this.#left(`${where} ${config["type"]}`, known);
    }
  }

  #replace(config: Component, node: Component, where: string): void {
    const odd = onlyKeys(config, ["type", "pattern", "content"]);
    if (odd !== null) return this.#left(where, odd);
    const content = config["content"];
    if (typeof content !== "string") return this.#left(where, "content is not a string");
    if (node["config"] !== config || typeof node["normalize"] !== "function") return this.#left(where, "unrecognized shape");
    const re = compilePattern(config["pattern"]);
    if (typeof re === "string") return this.#left(where, re);
    const stock = node["normalize"] as (s: string) => string;
    const mine = (text: string): string => replaceText(re, text, content);
    // where the library is right: no `$` in the content (it expands `$&` and the like, Rust does
    // not) and no empty match (it replaces one right after a match, Rust does not)
    const comparable = (p: string): boolean => !content.includes("$") && !hasEmptyMatch(re, p);
    if (!PLAIN_PROBES.every((p) => !comparable(p) || safeCall(() => stock.call(node, p)) === mine(p))) {
      return this.#left(where, "disagrees with the library on plain text");
    }
    this.#spy(where, node, "normalize", mine);
    this.notes.push(`${where}: ${describe(config["pattern"])} with Oniguruma semantics`);
  }

  #byteLevel(config: Component, node: Component, where: string): void {
    where = `${where} ByteLevel`;
    if (config["use_regex"] === false) return; // no pattern runs
    if (node["config"] !== config) return this.#left(where, "unrecognized shape");
    const stock = node["pattern"];
    if (node["use_regex"] !== true || !(stock instanceof RegExp) || stock.source !== GPT2_PATTERN || stock.flags !== "gu") {
      return this.#left(where, "unrecognized pattern or flags");
    }
    const method = node["pre_tokenize_text"];
    if (typeof method !== "function") return this.#left(where, "no pre_tokenize_text method");
    const re = compilePattern({ Regex: GPT2_PATTERN });
    if (typeof re === "string") return this.#left(where, re);
    const run = (p: string): string => JSON.stringify(safeCall(() => (method as (s: string) => unknown).call(node, p)));
    const before = PLAIN_PROBES.map(run);
    const install = this.#set(node, "pattern", re);
    // effect: the method now cuts the probe into Rust's pieces (so it reads `pattern`), and maps
    // their bytes as this module expects
    const table = node["byte_encoder"] as Record<number, string> | undefined;
    const utf8 = new TextEncoder();
    const want = BYTE_LEVEL_PROBE_PIECES.map((t) => Array.from(utf8.encode(t), (b) => table?.[b] ?? "?").join(""));
    if (node["add_prefix_space"] === true) want[0] = (table?.[0x20] ?? "?") + want[0];
    const why =
      JSON.stringify((BYTE_LEVEL_PROBE.match(re) ?? []).join("|")) !== JSON.stringify(BYTE_LEVEL_PROBE_PIECES.join("|")) ||
      run(BYTE_LEVEL_PROBE) !== JSON.stringify(want)
        ? "the probe did not see the pattern"
        : PLAIN_PROBES.some((p, i) => run(p) !== before[i])
          ? "disagrees with the library on plain text"
          : null;
    if (why !== null) {
      Installer.undo([install]);
      return this.#left(where, why);
    }
    this.notes.push(`${where}: the GPT-2 pattern with Oniguruma semantics`);
  }

  #split(config: Component, node: Component, where: string): void {
    where = `${where} Split`;
    if (node["config"] !== config) return this.#left(where, "unrecognized shape");
    const odd = onlyKeys(config, ["type", "pattern", "behavior", "invert"]);
    if (odd !== null) return this.#left(where, odd);
    const behavior = config["behavior"];
    const invert = config["invert"];
    if (typeof behavior !== "string" || !SPLIT_BEHAVIORS.has(behavior)) return this.#left(where, "unknown behavior");
    if (typeof invert !== "boolean") return this.#left(where, "invert is not true or false");
    if (typeof node["pre_tokenize_text"] !== "function") return this.#left(where, "no pre_tokenize_text method");
    const re = compilePattern(config["pattern"]);
    if (typeof re === "string") return this.#left(where, re);
    const mine = (text: string): string[] => splitText(re, text, behavior as SplitBehavior, invert);
    // the configurations the library implements as Rust does
    if ((behavior === "Isolated" && !invert) || (behavior === "Removed" && invert)) {
      const stock = node["pre_tokenize_text"] as (s: string) => unknown;
      if (!PLAIN_PROBES.every((p) => JSON.stringify(safeCall(() => stock.call(node, p))) === JSON.stringify(mine(p)))) {
        return this.#left(where, "disagrees with the library on plain text");
      }
    }
    this.#spy(where, node, "pre_tokenize_text", mine);
    this.notes.push(`${where}: ${describe(config["pattern"])}, ${behavior}${invert ? ", inverted" : ""}, with Oniguruma semantics`);
  }

  /** A pre-tokenizer whose pre-tokens are the matches of one pattern (Rust: Invert + Removed). */
  #keepMatches(config: Component, node: Component, where: string, type: string, compile: () => RegExp | string): void {
    where = `${where} ${type}`;
    const odd = onlyKeys(config, ["type"]);
    if (odd !== null) return this.#left(where, odd);
    const stock = node["pre_tokenize_text"];
    if (typeof stock !== "function") return this.#left(where, "no pre_tokenize_text method");
    const re = compile();
    if (typeof re === "string") return this.#left(where, re);
    const mine = (text: string): string[] => splitText(re, text, "Removed", true);
    // the library's classes are ASCII-only or JavaScript's: compare on ASCII text
    if (!ASCII_PROBES.every((p) => JSON.stringify(safeCall(() => (stock as (s: string) => unknown).call(node, p))) === JSON.stringify(mine(p)))) {
      return this.#left(where, "disagrees with the library on plain text");
    }
    this.#spy(where, node, "pre_tokenize_text", mine);
    this.notes.push(`${where}: with the Rust crate's character classes`);
  }

  /** Installs `fn` behind a call flag until the effect probe has run. */
  #spy(where: string, owner: Component, key: string, fn: (s: string) => unknown): void {
    let seen = false;
    const install = this.#set(owner, key, (s: string) => ((seen = true), fn(s)));
    this.#spies.push({ where, seen: () => seen, install, done: () => void (owner[key] = fn) });
  }

  /** Encodes the probes once: every installed function must have been called. */
  probeEffects(): void {
    if (this.#spies.length === 0) return;
    try {
      for (const p of PLAIN_PROBES) this.#tok.encode(p, { add_special_tokens: false });
    } catch {
      // judged below: a stand-in that threw was not seen working
    }
    for (const spy of this.#spies) {
      if (spy.seen()) {
        spy.done(); // the plain function, without the flag
        continue;
      }
      Installer.undo([spy.install]);
      const note = this.notes.findIndex((n) => n.startsWith(`${spy.where}:`));
      if (note >= 0) this.notes.splice(note, 1);
      this.#left(spy.where, "the pipeline did not call the stand-in");
    }
  }
}

function hasEmptyMatch(re: RegExp, text: string): boolean {
  const m = findMatches(re, text);
  for (let i = 0; i < m.length; i += 2) if (m[i] === m[i + 1]) return true;
  return false;
}

function safeCall<T>(f: () => T): T | string {
  try {
    return f();
  } catch (e) {
    return `threw ${(e as Error)?.message}`;
  }
}

function describe(p: unknown): string {
  if (!isObj(p)) return "pattern";
  return "String" in p ? `String ${JSON.stringify(p["String"])}` : `Regex ${JSON.stringify(p["Regex"])}`;
}

/** tokenizers' Whitespace pattern `\w+|[^\w\s]+` with the `regex` crate's classes. */
function whitespaceRegex(): RegExp {
  const cls = (leaf: Leaf): string => {
    const short = leaf.base === null ? null : correctedClass(leaf.key, leaf.set, leaf.base);
    return short !== null ? (short.startsWith("[") ? short : `[${short}]`) : `[${rangesV(leaf.set)}]`;
  };
  const w = cls(regexCrateLeaf("w"));
  const s = cls(regexCrateLeaf("s"));
  return new RegExp(`${w}+|[^${w}${s}]+`, "gv");
}

/** A global RegExp matching runs of the set's code points. */
function runOf(set: readonly number[]): RegExp {
  let cls = "[";
  for (let i = 0; i < set.length; i += 2) cls += `\\u{${(set[i] as number).toString(16)}}-\\u{${(set[i + 1] as number).toString(16)}}`;
  return new RegExp(cls + "]+", "gu");
}

const reports = new WeakMap<object, PatternReport>();

/**
 * Installs the Rust semantics into every pattern-driven component of `tok`, built from `json` (its
 * tokenizer.json; the library keeps no configuration on some components, so the two are walked
 * side by side). Idempotent: a second call returns the first report.
 */
export function installExactPatterns(tok: Tokenizer, json: { normalizer?: unknown; pre_tokenizer?: unknown }): PatternReport {
  const known = reports.get(tok);
  if (known !== undefined) return known;
  const t = tok as unknown as Component;
  const inst = new Installer(tok);
  inst.visitNormalizer(json.normalizer, t["normalizer"], "normalizer");
  inst.visitPreTokenizer(json.pre_tokenizer, t["pre_tokenizer"], "pre_tokenizer");
  inst.probeEffects();
  const report: PatternReport = Object.freeze({ exact: inst.exact, notes: Object.freeze([...inst.notes]) });
  reports.set(tok, report);
  return report;
}
