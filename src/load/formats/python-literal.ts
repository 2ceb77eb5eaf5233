/**
 * Finds the tiktoken pre-tokenizer pattern a model's `tokenization_*.py` assigns, by reading the
 * source — never running it. A small Python tokenizer (names, strings with every prefix and
 * quote style, comments, brackets, line continuations) finds assignments
 * `pat_str = …` / `PAT_STR = …` / `self.pat_str = …` at the start of a statement whose value is
 * a constant built only from string literals:
 * - one literal or several adjacent ones (implicit concatenation), optionally parenthesized;
 * - `"sep".join([lit, lit, ...])` over a list or tuple of such literals.
 * Any other right-hand side (a variable, a call, an f-string, bytes) is not a literal and is
 * skipped. Escapes are decoded as Python decodes them (`\N{…}` is refused: it needs the Unicode
 * name table); raw strings keep backslashes.
 *
 * Layer: load. Imports only `errors`.
 */

import { DeltatokError } from "../../errors.js";

/** Assignments whose target is one of these names (or `self.` one of them) are pattern sources. */
const TARGETS = new Set(["pat_str", "PAT_STR", "_pat_str", "pattern_str"]);

type Token =
  | { kind: "name"; text: string; at: number }
  | { kind: "string"; value: string | null; unsupported?: string; at: number }
  | { kind: "op"; text: string; at: number }
  | { kind: "newline"; at: number }
  | { kind: "other"; at: number };

export interface PatternLiteral {
  /** The pattern text. */
  readonly value: string;
  /** 1-based line of the assignment. */
  readonly line: number;
  /** The assigned name as written (`pat_str`, `self.pat_str`, ...). */
  readonly target: string;
}

/**
 * The pattern literals assigned in `source` (in source order). `file` names the file in errors;
 * a source that cannot be tokenized (an unterminated string) gives an empty list.
 */
export function findPatternLiterals(source: string, file: string): PatternLiteral[] {
  let tokens: Token[];
  try {
    tokens = tokenize(source);
  } catch {
    // Not valid Python (an unterminated string, a bad escape): nothing to read.
    return [];
  }
  const out: PatternLiteral[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const atStatementStart = i === 0 || tokens[i - 1]?.kind === "newline";
    if (!atStatementStart) continue;
    let j = i;
    let target = "";
    const t0 = tokens[j];
    if (t0?.kind === "name" && t0.text === "self" && tokens[j + 1]?.kind === "op" && (tokens[j + 1] as { text: string }).text === ".") {
      const t2 = tokens[j + 2];
      if (t2?.kind !== "name") continue;
      target = `self.${t2.text}`;
      j += 3;
      if (!TARGETS.has(t2.text)) continue;
    } else if (t0?.kind === "name" && TARGETS.has(t0.text)) {
      target = t0.text;
      j += 1;
    } else continue;
    // Optional annotation `: str`.
    if (isOp(tokens[j], ":")) {
      j++;
      while (j < tokens.length && !isOp(tokens[j], "=") && tokens[j]?.kind !== "newline") j++;
    }
    if (!isOp(tokens[j], "=")) continue;
    const parsed = parseValue(tokens, j + 1, file);
    if (parsed === null) continue;
    const [value, end] = parsed;
    if (end < tokens.length && tokens[end]?.kind !== "newline") continue;
    out.push({ value, line: lineOf(source, (tokens[i] as Token).at), target });
  }
  return out;
}

function isOp(t: Token | undefined, text: string): boolean {
  return t !== undefined && t.kind === "op" && t.text === text;
}

function lineOf(source: string, at: number): number {
  let line = 1;
  for (let k = 0; k < at; k++) if (source.charCodeAt(k) === 0x0a) line++;
  return line;
}

/** Parses a literal value starting at token i; returns [value, index after it] or null. */
function parseValue(tokens: Token[], i: number, file: string): [string, number] | null {
  const first = parseConcat(tokens, i, file);
  if (first === null) return null;
  let [value, j] = first;
  // "sep".join([...]) / "sep".join((...))
  if (isOp(tokens[j], ".") && tokens[j + 1]?.kind === "name" && (tokens[j + 1] as { text: string }).text === "join" && isOp(tokens[j + 2], "(")) {
    const open = tokens[j + 3];
    const close = isOp(open, "[") ? "]" : isOp(open, "(") ? ")" : null;
    if (close === null) return null;
    const items: string[] = [];
    let k = j + 4;
    for (;;) {
      if (isOp(tokens[k], close)) {
        k++;
        break;
      }
      const item = parseConcat(tokens, k, file);
      if (item === null) return null;
      items.push(item[0]);
      k = item[1];
      if (isOp(tokens[k], ",")) k++;
      else if (!isOp(tokens[k], close)) return null;
    }
    if (!isOp(tokens[k], ")")) return null;
    return [items.join(value), k + 1];
  }
  return [value, j];
}

/** One or more adjacent string literals, or a parenthesized value. */
function parseConcat(tokens: Token[], i: number, file: string): [string, number] | null {
  if (isOp(tokens[i], "(")) {
    const inner = parseValue(tokens, i + 1, file);
    if (inner === null || !isOp(tokens[inner[1]], ")")) return null;
    return [inner[0], inner[1] + 1];
  }
  let j = i;
  let value = "";
  while (tokens[j]?.kind === "string") {
    const token = tokens[j] as { value: string | null; unsupported?: string };
    if (token.unsupported !== undefined) {
      throw new DeltatokError("DT_TOKENIZER_UNSUPPORTED", `${file}: a pat_str literal ${token.unsupported}; pass the pattern with --pattern`);
    }
    const v = token.value;
    if (v === null) return null; // bytes or f-string: not a constant str
    value += v;
    j++;
  }
  return j === i ? null : [value, j];
}

/**
 * Python tokens, enough to find statements: NEWLINE only at the end of a logical line (not
 * inside brackets, not after a backslash continuation); comments dropped.
 */
function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let depth = 0;
  let i = 0;
  const n = src.length;
  while (i < n) {
    const c = src[i] as string;
    if (c === "#") {
      while (i < n && src[i] !== "\n") i++;
      continue;
    }
    if (c === "\\" && (src[i + 1] === "\n" || (src[i + 1] === "\r" && src[i + 2] === "\n"))) {
      i += src[i + 1] === "\n" ? 2 : 3;
      continue;
    }
    if (c === "\n" || c === "\r") {
      if (depth === 0 && tokens.length > 0 && tokens[tokens.length - 1]?.kind !== "newline") tokens.push({ kind: "newline", at: i });
      i++;
      continue;
    }
    if (c === " " || c === "\t" || c === "\f") {
      i++;
      continue;
    }
    if (c === ";") {
      if (depth === 0) tokens.push({ kind: "newline", at: i });
      i++;
      continue;
    }
    const str = /^([rRbBuUfF]{0,2})('''|"""|'|")/.exec(src.slice(i, i + 5));
    if (str !== null && isStringPrefix(str[1] as string)) {
      const prefix = (str[1] as string).toLowerCase();
      const quote = str[2] as string;
      const bodyStart = i + (str[1] as string).length + quote.length;
      const raw = prefix.includes("r");
      let j = bodyStart;
      for (;;) {
        if (j >= n) throw new Error("unterminated string");
        const d = src[j] as string;
        if (d === "\\") {
          j += 2;
          continue;
        }
        if (quote.length === 1 && d === "\n") throw new Error("unterminated string");
        if (src.startsWith(quote, j)) break;
        j++;
      }
      const body = src.slice(bodyStart, j);
      const constant = !prefix.includes("b") && !prefix.includes("f");
      if (!constant || raw) tokens.push({ kind: "string", value: constant ? body : null, at: i });
      else {
        const decoded = unescape(body, i);
        if (typeof decoded === "string") tokens.push({ kind: "string", value: decoded, at: i });
        else tokens.push({ kind: "string", value: null, unsupported: decoded.unsupported, at: i });
      }
      i = j + quote.length;
      continue;
    }
    const name = /^[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*/.exec(src.slice(i, i + 200));
    if (name !== null) {
      tokens.push({ kind: "name", text: name[0], at: i });
      i += name[0].length;
      continue;
    }
    if ("([{".includes(c)) depth++;
    if (")]}".includes(c)) depth = Math.max(0, depth - 1);
    const op = /^(\*\*=|\/\/=|>>=|<<=|->|:=|==|!=|<=|>=|\+=|-=|\*=|\/=|%=|&=|\|=|\^=|\*\*|\/\/|<<|>>|[-+*/%@&|^~<>()[\]{},:.=])/.exec(src.slice(i, i + 3));
    if (op !== null) {
      tokens.push({ kind: "op", text: op[0], at: i });
      i += op[0].length;
      continue;
    }
    tokens.push({ kind: "other", at: i });
    i++;
  }
  return tokens;
}

function isStringPrefix(p: string): boolean {
  const l = p.toLowerCase();
  return ["", "r", "u", "b", "br", "rb", "f", "fr", "rf"].includes(l);
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  "\\": "\\", "'": "'", '"': '"', a: "\x07", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v", "\n": "",
};

/**
 * Decodes the escapes of a non-raw Python str literal body, or says why it cannot (`\N{...}`
 * needs the Unicode name table).
 */
function unescape(body: string, at: number): string | { unsupported: string } {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c !== "\\") {
      out += c;
      continue;
    }
    const e = body[i + 1];
    if (e === undefined) {
      out += "\\";
      break;
    }
    if (e === "\r" && body[i + 2] === "\n") {
      i += 2;
      continue;
    }
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) {
      out += simple;
      i++;
      continue;
    }
    if (e >= "0" && e <= "7") {
      let k = i + 1;
      let digits = "";
      while (k < body.length && digits.length < 3 && (body[k] as string) >= "0" && (body[k] as string) <= "7") digits += body[k++];
      out += String.fromCodePoint(Number.parseInt(digits, 8));
      i = k - 1;
      continue;
    }
    const hexLength = e === "x" ? 2 : e === "u" ? 4 : e === "U" ? 8 : 0;
    if (hexLength > 0) {
      const hex = body.slice(i + 2, i + 2 + hexLength);
      const cp = /^[0-9a-fA-F]+$/.test(hex) && hex.length === hexLength ? Number.parseInt(hex, 16) : -1;
      if (cp < 0 || cp > 0x10ffff) throw new Error(`bad \\${e} escape at ${at}`);
      out += String.fromCodePoint(cp);
      i += 1 + hexLength;
      continue;
    }
    if (e === "N") return { unsupported: `uses a \\N{...} escape (offset ${at}), which deltatok does not decode` };
    // Unknown escape: Python keeps the backslash.
    out += "\\" + e;
    i++;
  }
  return out;
}
