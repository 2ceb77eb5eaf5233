/**
 * Translating an Oniguruma pattern, as the Rust `tokenizers` crate compiles it (the `onig` crate:
 * Ruby syntax, no options, UTF-8), into a JavaScript RegExp (flags `gv`) that finds the same
 * matches, code point for code point.
 *
 * Both regex engines are backtracking matchers with the same leftmost-first alternation and greedy/lazy
 * quantifiers, so the structure of a pattern carries over; what differs is what the pieces mean:
 *
 * - Character classes. Oniguruma's `\s` is White_Space (U+0085 in, U+FEFF out; JavaScript's `\s`
 *   is the reverse), `\w` and `\d` are Unicode-wide (and `\w` outside a bracket takes ² ³ ¹ ¼ ½ ¾,
 *   inside one not), `\h` is a hex digit, POSIX brackets (`[[:punct:]]`) exist, `\p{...}` names
 *   are matched loosely. Every class is resolved to Oniguruma's own members (unicode-sets.ts, from
 *   tables read off the Rust binding), then written either as ranges or, when shorter, from the
 *   running Node's `\p{...}` corrected to those members (runtime-classes.ts): Node 20 ships Unicode
 *   15.0 to 17.0 depending on the release; Oniguruma in tokenizers 0.23 has 16.0.
 * - Anchors: `^` and `$` are line anchors, `.` excludes only `\n`, `(?m)` is dot-all (Ruby),
 *   `\Z` allows one final `\n`, `\b` uses Oniguruma's `\w`.
 * - Case-insensitive groups `(?i:...)` and `(?i)` (to the end of the enclosing group, alternatives
 *   included): JavaScript has no scoped flags, so literals become case-fold classes (`s` is
 *   `[sSſ]`, `k` is `[kKK]`), as Oniguruma folds them; `\p{...}` and the escapes are not folded
 *   (Oniguruma does not fold them either outside a bracket).
 * - Atomic groups `(?>...)` and possessive quantifiers become `(?=(...))\N`; chained quantifiers
 *   (`a{2}{3}`) are nested; `{,n}` is `{0,n}`; an invalid interval is a literal `{`.
 *
 * What is not translated throws PatternNotTranslated with a reason, and the caller keeps the
 * library's own pattern (and says so): backreferences, `\G`, `\K`, `\R`, `\X`, `\y`, absent
 * operators, conditionals, extended mode `(?x)`, property names the tables do not hold (blocks,
 * most binary properties), and, inside a case-insensitive group, anything but ASCII literals and
 * ASCII classes (Oniguruma folds multi-character sequences there — `ss` matches `ß` — which a
 * single-character class cannot do; letter pairs that have such a fold are refused too).
 *
 * Layer: encoder.
 */

import { classCharV, correctedClass, rangesV } from "./runtime-classes.js";
import {
  type CodePointSet,
  EVERYTHING,
  complement,
  escapeLeaf,
  intersect,
  isAscii,
  type Leaf,
  posixLeaf,
  propertyLeaf,
  setOf,
  union,
} from "./unicode-sets.js";

/** A pattern (or a part of it) this translator does not handle. */
export class PatternNotTranslated extends Error {
  constructor(
    readonly reason: string,
    readonly at: number,
  ) {
    super(`${reason} at index ${at}`);
    this.name = "PatternNotTranslated";
  }
}

/** The JavaScript form of an Oniguruma pattern. */
export interface TranslatedPattern {
  /** JavaScript source, for the `gv` flags. */
  readonly source: string;
  /** A fresh global `v`-flag RegExp of `source` (its `lastIndex` is the caller's). */
  readonly regex: RegExp;
}

type AssertKind = "bol" | "eol" | "bos" | "eos" | "eosnl" | "word" | "nonword";
type GroupKind = "plain" | "ahead" | "nahead" | "behind" | "nbehind" | "atomic";
type Node =
  | { readonly t: "char"; readonly cp: number }
  /** `alt`: a shorter JavaScript class with the same members (runtime-classes.ts), when there is one. */
  | { readonly t: "set"; readonly set: CodePointSet; readonly alt?: string | undefined }
  | { readonly t: "seq"; readonly items: readonly Node[] }
  | { readonly t: "alt"; readonly branches: readonly Node[] }
  | { readonly t: "group"; readonly kind: GroupKind; readonly body: Node }
  | { readonly t: "repeat"; readonly body: Node; readonly min: number; readonly max: number; readonly mode: "greedy" | "lazy" | "possessive" }
  | { readonly t: "assert"; readonly kind: AssertKind };

interface Flags {
  readonly ignoreCase: boolean;
  readonly dotAll: boolean;
}

/** Oniguruma's limit on repeat counts (ONIG_MAX_REPEAT_NUM). */
const MAX_REPEAT = 100_000;
/** Nesting deeper than this is refused (the parser recurses). */
const MAX_DEPTH = 200;

const NEWLINE = 0x0a;
const SIMPLE_ESCAPES: Readonly<Record<string, number>> = { t: 0x09, n: 0x0a, r: 0x0d, f: 0x0c, v: 0x0b, a: 0x07, e: 0x1b };

// ---- case folding (ASCII only, see the header) ----------------------------------------------------

const LONG_S = 0x017f;
const KELVIN = 0x212a;
/** ASCII letter pairs that are the fold of one character (ß, ẞ → ss; ﬅ, ﬆ → st; ﬀ ﬁ ﬂ ﬃ ﬄ). */
const MULTI_FOLD_PAIRS = new Set(["ss", "st", "ff", "fi", "fl"]);

function isAsciiLetter(cp: number): boolean {
  return (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a);
}

/** The ASCII set closed under Oniguruma's case folding. */
function foldAscii(set: CodePointSet): CodePointSet {
  const extra: number[] = [];
  for (let i = 0; i < set.length; i += 2) {
    for (let c = set[i] as number; c <= (set[i + 1] as number); c++) {
      if (!isAsciiLetter(c)) continue;
      const lower = c | 0x20;
      extra.push(lower, lower & ~0x20);
      if (lower === 0x73) extra.push(LONG_S);
      if (lower === 0x6b) extra.push(KELVIN);
    }
  }
  return extra.length === 0 ? set : union(set, setOf(...extra));
}

// ---- parser ---------------------------------------------------------------------------------------

class Parser {
  readonly #src: string;
  #i = 0;
  #depth = 0;

  constructor(src: string) {
    this.#src = src;
  }

  parse(): Node {
    const node = this.#alternation({ ignoreCase: false, dotAll: false });
    if (this.#i < this.#src.length) this.#fail("unmatched ')'");
    return node;
  }

  #fail(reason: string, at = this.#i): never {
    throw new PatternNotTranslated(reason, at);
  }

  #peek(offset = 0): string | undefined {
    return this.#src[this.#i + offset];
  }

  #eat(s: string): boolean {
    if (this.#src.startsWith(s, this.#i)) {
      this.#i += s.length;
      return true;
    }
    return false;
  }

  #codePoint(): number {
    const cp = this.#src.codePointAt(this.#i);
    if (cp === undefined) this.#fail("unexpected end");
    this.#i += cp > 0xffff ? 2 : 1;
    return cp;
  }

  /** Alternatives up to a ')' (not consumed) or the end. */
  #alternation(flags: Flags): Node {
    if (++this.#depth > MAX_DEPTH) this.#fail("nesting too deep");
    const branches: Node[] = [];
    for (;;) {
      const { node, rest } = this.#sequence(flags);
      branches.push(node);
      if (rest) break; // an inline (?i) took the rest of the group
      if (!this.#eat("|")) break;
    }
    this.#depth--;
    return branches.length === 1 ? (branches[0] as Node) : { t: "alt", branches };
  }

  /** One alternative. `rest` is set when an inline option group consumed the rest of the group. */
  #sequence(flags: Flags): { node: Node; rest: boolean } {
    const items: Node[] = [];
    let foldedLetter: number | null = null; // the previous item, when a case-folded ASCII letter
    for (;;) {
      const c = this.#peek();
      if (c === undefined || c === "|" || c === ")") break;
      const start = this.#i;
      const inline = this.#inlineOptions(flags);
      if (inline !== null) {
        // Oniguruma: `a(?i)b|c` is `a(?i:b|c)`
        items.push({ t: "group", kind: "plain", body: this.#alternation(inline) });
        return { node: { t: "seq", items }, rest: true };
      }
      let atom = this.#atom(flags);
      if (atom === null) continue; // a comment
      const letter = atom.t === "set" && flags.ignoreCase ? literalLetter(this.#src, start, this.#i) : null;
      if (letter !== null && foldedLetter !== null) {
        const pair = String.fromCharCode(foldedLetter | 0x20, letter | 0x20);
        if (MULTI_FOLD_PAIRS.has(pair)) this.#fail(`case-insensitive "${pair}" (one character folds to it)`, start);
      }
      foldedLetter = letter;
      atom = this.#quantifiers(atom, start);
      if (atom.t === "repeat") foldedLetter = null;
      items.push(atom);
    }
    return { node: items.length === 1 ? (items[0] as Node) : { t: "seq", items }, rest: false };
  }

  /** `(?imx-imx)` at the cursor: consumes it and returns the new flags; else null. */
  #inlineOptions(flags: Flags): Flags | null {
    const m = /^\(\?([imx]*)(?:-([imx]*))?\)/.exec(this.#src.slice(this.#i, this.#i + 12));
    if (m === null) return null;
    const next = this.#options(flags, m[1] ?? "", m[2] ?? "");
    this.#i += m[0].length;
    return next;
  }

  #options(flags: Flags, on: string, off: string): Flags {
    if (on.includes("x") || off.includes("x")) this.#fail("extended mode (?x)");
    let { ignoreCase, dotAll } = flags;
    if (on.includes("i")) ignoreCase = true;
    if (on.includes("m")) dotAll = true;
    if (off.includes("i")) ignoreCase = false;
    if (off.includes("m")) dotAll = false;
    return { ignoreCase, dotAll };
  }

  /** One atom, or null for a comment group. */
  #atom(flags: Flags): Node | null {
    const start = this.#i;
    const c = this.#peek() as string;
    switch (c) {
      case "(":
        return this.#group(flags);
      case "[": {
        const { set, alt } = this.#class(flags);
        return { t: "set", set, alt };
      }
      case ".":
        this.#i++;
        return { t: "set", set: flags.dotAll ? EVERYTHING : complement(setOf(NEWLINE)) };
      case "^":
        this.#i++;
        return { t: "assert", kind: "bol" };
      case "$":
        this.#i++;
        return { t: "assert", kind: "eol" };
      case "\\":
        return this.#escape(flags);
      case "*":
      case "+":
      case "?":
        return this.#fail("target of repeat operator is not specified", start);
      case "{":
        if (interval(this.#src, this.#i) !== null) this.#fail("target of repeat operator is not specified", start);
        this.#i++;
        return this.#literal(0x7b, flags);
      default:
        return this.#literal(this.#codePoint(), flags);
    }
  }

  #literal(cp: number, flags: Flags): Node {
    if (!flags.ignoreCase) return { t: "char", cp };
    if (cp >= 0x80) this.#fail("a non-ASCII literal in a case-insensitive group");
    if (!isAsciiLetter(cp)) return { t: "char", cp };
    return { t: "set", set: foldAscii(setOf(cp)) };
  }

  #group(flags: Flags): Node | null {
    const start = this.#i;
    this.#i++; // (
    let kind: GroupKind = "plain";
    let inner = flags;
    if (this.#eat("?")) {
      if (this.#eat("#")) {
        const end = this.#src.indexOf(")", this.#i);
        if (end < 0) this.#fail("unterminated comment", start);
        this.#i = end + 1;
        return null;
      }
      if (this.#eat(":")) kind = "plain";
      else if (this.#eat("=")) kind = "ahead";
      else if (this.#eat("!")) kind = "nahead";
      else if (this.#eat("<=")) kind = "behind";
      else if (this.#eat("<!")) kind = "nbehind";
      else if (this.#eat(">")) kind = "atomic";
      else {
        const named = /^(?:<([A-Za-z_][A-Za-z0-9_]*)>|'([A-Za-z_][A-Za-z0-9_]*)')/.exec(this.#src.slice(this.#i, this.#i + 300));
        const opts = /^([imx]*)(?:-([imx]*))?:/.exec(this.#src.slice(this.#i, this.#i + 12));
        if (named !== null) this.#i += named[0].length; // a named capture: captures are never read
        else if (opts !== null) {
          inner = this.#options(flags, opts[1] ?? "", opts[2] ?? "");
          this.#i += opts[0].length;
        } else this.#fail("unsupported group", start);
      }
    }
    const body = this.#alternation(inner);
    if (!this.#eat(")")) this.#fail("unterminated group", start);
    return { t: "group", kind, body };
  }

  /** Quantifiers after an atom (several may follow one another: `a{2}{3}`, `a**`). */
  #quantifiers(atom: Node, start: number): Node {
    let node = atom;
    for (;;) {
      const c = this.#peek();
      let min: number;
      let max: number;
      let isInterval = false;
      if (c === "*") [min, max] = [0, Infinity];
      else if (c === "+") [min, max] = [1, Infinity];
      else if (c === "?") [min, max] = [0, 1];
      else if (c === "{") {
        const iv = interval(this.#src, this.#i);
        if (iv === null) return node; // a literal '{', read as the next atom
        [min, max] = [iv.min, iv.max];
        isInterval = true;
        this.#i += iv.length - 1;
      } else return node;
      this.#i++;
      if (node.t === "assert" || (node.t === "group" && node.kind !== "plain" && node.kind !== "atomic")) {
        this.#fail("target of repeat operator is invalid", start);
      }
      let mode: "greedy" | "lazy" | "possessive" = "greedy";
      if (this.#eat("?")) mode = "lazy";
      // Ruby syntax: `+` after ?, * or + is possessive; after an interval it is another repeat
      else if (!isInterval && this.#peek() === "+") {
        this.#i++;
        mode = "possessive";
      }
      node = { t: "repeat", body: node, min, max, mode };
    }
  }

  #escape(flags: Flags): Node {
    const start = this.#i;
    this.#i++; // backslash
    const c = this.#peek();
    if (c === undefined) this.#fail("pattern ends with a backslash", start);
    switch (c) {
      case "b":
      case "B":
      case "A":
      case "z":
      case "Z":
        this.#i++;
        return { t: "assert", kind: c === "b" ? "word" : c === "B" ? "nonword" : c === "A" ? "bos" : c === "z" ? "eos" : "eosnl" };
      default: {
        const leaf = this.#setEscape(false);
        if (leaf !== null) return { t: "set", set: leaf.set, alt: leaf.alt };
        return this.#literal(this.#charEscape(start), flags);
      }
    }
  }

  /** After a backslash: `\s \S \d \D \w \W \h \H \p{..} \P{..}` → its set (cursor moved), else null. */
  #setEscape(inClass: boolean): { set: CodePointSet; alt: string | undefined } | null {
    const c = this.#peek() as string;
    const lower = c.toLowerCase();
    if (lower === "s" || lower === "w" || lower === "d" || lower === "h") {
      this.#i++;
      return leafClass(escapeLeaf(lower, inClass), c !== lower);
    }
    if ((c === "p" || c === "P") && this.#peek(1) === "{") {
      const start = this.#i - 1;
      const end = this.#src.indexOf("}", this.#i);
      if (end < 0) this.#fail("unterminated property", start);
      let name = this.#src.slice(this.#i + 2, end);
      let negate = c === "P";
      if (name.startsWith("^")) {
        negate = !negate;
        name = name.slice(1);
      }
      const leaf = propertyLeaf(name, inClass);
      if (leaf === undefined) this.#fail(`property \\p{${name}} is not in the tables`, start);
      this.#i = end + 1;
      return leafClass(leaf, negate);
    }
    return null;
  }

  /** After a backslash: an escape that stands for one character → its code point (cursor moved). */
  #charEscape(start: number): number {
    const c = this.#peek() as string;
    const simple = SIMPLE_ESCAPES[c];
    if (simple !== undefined) {
      this.#i++;
      return simple;
    }
    if (c === "x") {
      const braced = /^x\{([0-9A-Fa-f]{1,8})\}/.exec(this.#src.slice(this.#i, this.#i + 12));
      const short = /^x([0-9A-Fa-f]{1,2})/.exec(this.#src.slice(this.#i, this.#i + 3));
      const m = braced ?? short;
      if (m === null) this.#fail("malformed \\x escape", start);
      const cp = parseInt(m[1] as string, 16);
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) this.#fail("\\x escape out of range", start);
      this.#i += m[0].length;
      return cp;
    }
    if (c === "u") {
      const m = /^u([0-9A-Fa-f]{4})/.exec(this.#src.slice(this.#i, this.#i + 5));
      if (m === null) this.#fail("malformed \\u escape", start);
      const cp = parseInt(m[1] as string, 16);
      if (cp >= 0xd800 && cp <= 0xdfff) this.#fail("\\u escape of a surrogate", start);
      this.#i += 5;
      return cp;
    }
    if (/[A-Za-z0-9]/.test(c)) this.#fail(`unsupported escape \\${c}`, start);
    // any other escaped character stands for itself
    return this.#codePoint();
  }

  /**
   * A bracketed class at the cursor → its set (case folding and negation applied), and the same
   * class built from the items' short JavaScript forms (undefined under case folding).
   */
  #class(flags: Flags): { set: CodePointSet; alt: string | undefined } {
    const start = this.#i;
    if (++this.#depth > MAX_DEPTH) this.#fail("nesting too deep");
    this.#i++; // [
    const negate = this.#eat("^");
    const operands: Array<{ set: CodePointSet; alt: string }> = [];
    let current: Array<number | readonly [number, number]> = [];
    let sets: CodePointSet[] = [];
    let alt = ""; // the operand's items as `v`-flag class contents
    let first = true;
    let lastWasSet = false; // the previous item was a set (a range may not follow it)
    const finishOperand = (): void => {
      if (current.length === 0 && sets.length === 0) this.#fail("empty operand in a character class", this.#i);
      let s = setOf(...current);
      for (const x of sets) s = union(s, x);
      operands.push({ set: s, alt });
      current = [];
      sets = [];
      alt = "";
    };
    const addSet = (set: CodePointSet, short: string | undefined): void => {
      sets.push(set);
      alt += short ?? `[${rangesV(set)}]`;
      lastWasSet = true;
    };
    for (;;) {
      const c = this.#peek();
      if (c === undefined) this.#fail("unterminated character class", start);
      if (c === "]" && !first) {
        this.#i++;
        break;
      }
      first = false;
      if (this.#src.startsWith("&&", this.#i)) {
        finishOperand();
        this.#i += 2;
        lastWasSet = false;
        continue;
      }
      if (c === "[") {
        const posix = /^\[:(\^?)([a-z]+):\]/.exec(this.#src.slice(this.#i, this.#i + 12));
        if (posix !== null) {
          const leaf = posixLeaf(posix[2] as string);
          if (leaf === undefined) this.#fail(`invalid POSIX bracket [:${posix[2]}:]`);
          const { set, alt: short } = leafClass(leaf, posix[1] === "^");
          addSet(set, short);
          this.#i += posix[0].length;
        } else if (this.#src.startsWith("[:", this.#i)) {
          this.#fail("a nested class starting with ':'");
        } else {
          const nested = this.#class({ ...flags, ignoreCase: false });
          addSet(nested.set, nested.alt);
        }
        continue;
      }
      let lo: number;
      if (c === "\\") {
        const escStart = this.#i;
        this.#i++;
        const n = this.#peek();
        if (n === undefined) this.#fail("unterminated character class", start);
        const leaf = this.#setEscape(true);
        if (leaf !== null) {
          addSet(leaf.set, leaf.alt);
          continue;
        }
        lo = this.#charEscape(escStart);
      } else if (c === "-") {
        if (lastWasSet && this.#peek(1) !== "]") this.#fail("a range after a set in a character class");
        this.#i++;
        current.push(0x2d);
        alt += classCharV(0x2d);
        lastWasSet = false;
        continue;
      } else lo = this.#codePoint();
      lastWasSet = false;
      // a range?
      if (this.#peek() === "-" && this.#peek(1) !== "]" && this.#peek(1) !== undefined && !this.#src.startsWith("&&", this.#i + 1)) {
        const dash = this.#i;
        this.#i++;
        const d = this.#peek() as string;
        let hi: number;
        if (d === "[") this.#fail("a class as a range end", dash);
        if (d === "\\") {
          const escStart = this.#i;
          this.#i++;
          if (this.#setEscape(true) !== null) this.#fail("a set as a range end", dash);
          hi = this.#charEscape(escStart);
        } else hi = this.#codePoint();
        if (hi < lo) this.#fail("empty range in a character class", dash);
        if (this.#peek() === "-" && this.#peek(1) !== "]") this.#fail("a range followed by '-'", this.#i);
        current.push([lo, hi]);
        alt += `${classCharV(lo)}-${classCharV(hi)}`;
      } else {
        current.push(lo);
        alt += classCharV(lo);
      }
    }
    finishOperand();
    let set = (operands[0] as { set: CodePointSet }).set;
    for (let k = 1; k < operands.length; k++) set = intersect(set, (operands[k] as { set: CodePointSet }).set);
    this.#depth--;
    if (flags.ignoreCase) {
      if (!isAscii(set)) this.#fail("a non-ASCII class in a case-insensitive group", start);
      set = foldAscii(set);
      return { set: negate ? complement(set) : set, alt: undefined };
    }
    const body = operands.length === 1 ? (operands[0] as { alt: string }).alt : operands.map((o) => `[${o.alt}]`).join("&&");
    return { set: negate ? complement(set) : set, alt: `[${negate ? "^" : ""}${body}]` };
  }
}

/** A named set, possibly negated, with its short JavaScript form when this Node has one. */
function leafClass(leaf: Leaf, negate: boolean): { set: CodePointSet; alt: string | undefined } {
  const short = leaf.base === null ? null : correctedClass(leaf.key, leaf.set, leaf.base);
  if (!negate) return { set: leaf.set, alt: short ?? undefined };
  return { set: complement(leaf.set), alt: short === null ? undefined : `[^${short}]` };
}

/** The case-folded ASCII letter that `src[from, to)` spells as a literal (plain or escaped), else null. */
function literalLetter(src: string, from: number, to: number): number | null {
  const text = src.slice(from, to);
  if (text.length === 1 && isAsciiLetter(text.charCodeAt(0))) return text.charCodeAt(0);
  const m = /^\\(?:x\{0*([0-9A-Fa-f]{1,2})\}|x([0-9A-Fa-f]{1,2})|u00([0-9A-Fa-f]{2}))$/.exec(text);
  if (m === null) return null;
  const cp = parseInt((m[1] ?? m[2] ?? m[3]) as string, 16);
  return isAsciiLetter(cp) ? cp : null;
}

/** `{n}`, `{n,}`, `{,m}`, `{n,m}` at `i` → bounds and length; null when it is not an interval. */
function interval(src: string, i: number): { min: number; max: number; length: number } | null {
  const m = /^\{(\d*)(,?)(\d*)\}/.exec(src.slice(i, i + 24));
  if (m === null) return null;
  const [text, a = "", comma, b = ""] = m;
  if (a === "" && (comma === "" || b === "")) return null; // `{}`, `{,}` are literals
  const min = a === "" ? 0 : Number(a);
  const max = comma === "" ? min : b === "" ? Infinity : Number(b);
  if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT)) throw new PatternNotTranslated("repeat count too big", i);
  if (max < min) throw new PatternNotTranslated("interval with max < min", i);
  return { min, max, length: text.length };
}

// ---- emitter --------------------------------------------------------------------------------------

function hex(cp: number): string {
  return `\\u{${cp.toString(16)}}`;
}

function charSource(cp: number): string {
  if ((cp >= 0x30 && cp <= 0x39) || isAsciiLetter(cp) || cp === 0x5f || cp === 0x20) return String.fromCharCode(cp);
  return hex(cp);
}

/**
 * A class of the set: its ranges, or the negation of its complement's when the set holds the top
 * of the code space (V8 matches a negated class much faster than one listing hundreds of astral
 * ranges), or `alt` (the same members from JavaScript properties) when that is shorter: V8 stops
 * optimizing a RegExp whose source passes 20 K code units.
 */
function setSource(set: CodePointSet, alt: string | undefined): string {
  if (set.length === 2 && set[0] === set[1]) return charSource(set[0] as number);
  // (never `[^]`: V8 11.3 matches it as if it could not repeat under the `v` flag)
  const rest = set[set.length - 1] === 0x10ffff ? complement(set) : null;
  const ranges = rest !== null && rest.length > 0 ? `[^${rangesV(rest)}]` : `[${rangesV(set)}]`;
  if (alt === undefined || alt.length >= ranges.length) return ranges;
  return alt.startsWith("[") ? alt : `[${alt}]`;
}

class Emitter {
  #groups = 0;
  #word: string | null = null;

  #wordClass(): string {
    return (this.#word ??= (() => {
      const w = leafClass(escapeLeaf("w", false), false); // \b reads \w as outside a class
      return setSource(w.set, w.alt);
    })());
  }

  emit(node: Node, inBehind: boolean): string {
    switch (node.t) {
      case "char":
        return charSource(node.cp);
      case "set":
        return setSource(node.set, node.alt);
      case "seq":
        return node.items.map((n) => this.#operand(n, inBehind)).join("");
      case "alt":
        return node.branches.map((n) => this.emit(n, inBehind)).join("|");
      case "group":
        return this.#group(node.kind, node.body, inBehind);
      case "repeat":
        return this.#repeat(node.body, node.min, node.max, node.mode, inBehind);
      case "assert":
        return this.#assert(node.kind);
    }
  }

  /** A node as an item of a sequence (an alternation needs a group there). */
  #operand(node: Node, inBehind: boolean): string {
    const s = this.emit(node, inBehind);
    return node.t === "alt" ? `(?:${s})` : s;
  }

  /** A node as the target of a quantifier. */
  #atom(node: Node, inBehind: boolean): string {
    const s = this.emit(node, inBehind);
    if (node.t === "char" || node.t === "set" || (node.t === "group" && node.kind === "plain")) return s;
    return `(?:${s})`;
  }

  #atomic(body: () => string, inBehind: boolean): string {
    // a lookahead does not backtrack into itself; the backreference consumes what it matched
    if (inBehind) throw new PatternNotTranslated("an atomic group or possessive quantifier inside a lookbehind", 0);
    const n = ++this.#groups;
    return `(?=(${body()}))\\${n}`;
  }

  #group(kind: GroupKind, body: Node, inBehind: boolean): string {
    switch (kind) {
      case "plain":
        return `(?:${this.emit(body, inBehind)})`;
      case "ahead":
        return `(?=${this.emit(body, inBehind)})`;
      case "nahead":
        return `(?!${this.emit(body, inBehind)})`;
      case "behind":
        return `(?<=${this.emit(body, true)})`;
      case "nbehind":
        return `(?<!${this.emit(body, true)})`;
      case "atomic":
        return this.#atomic(() => this.emit(body, inBehind), inBehind);
    }
  }

  #repeat(body: Node, min: number, max: number, mode: "greedy" | "lazy" | "possessive", inBehind: boolean): string {
    const q = min === 0 && max === Infinity ? "*" : min === 1 && max === Infinity ? "+" : min === 0 && max === 1 ? "?" : max === Infinity ? `{${min},}` : min === max ? `{${min}}` : `{${min},${max}}`;
    if (mode === "possessive") return this.#atomic(() => this.#atom(body, inBehind) + q, inBehind);
    return this.#atom(body, inBehind) + q + (mode === "lazy" ? "?" : "");
  }

  #assert(kind: AssertKind): string {
    switch (kind) {
      case "bol":
        return "(?<![^\\n])";
      case "eol":
        return "(?![^\\n])";
      // without the `m` flag JavaScript's ^ and $ are the input's ends (and, unlike an empty
      // lookaround, never hold between the two halves of a surrogate pair)
      case "bos":
        return "^";
      case "eos":
        return "$";
      case "eosnl":
        return "(?=\\n?$)";
      case "word": {
        const w = this.#wordClass();
        return `(?:(?<=${w})(?!${w})|(?<!${w})(?=${w}))`;
      }
      case "nonword": {
        const w = this.#wordClass();
        return `(?:(?<=${w})(?=${w})|(?<!${w})(?!${w}))`;
      }
    }
  }
}

/** Translates an Oniguruma pattern (Ruby syntax, as tokenizer.json's `{"Regex": ...}` holds it). */
export function translateOniguruma(pattern: string): TranslatedPattern {
  const ast = new Parser(pattern).parse();
  const source = new Emitter().emit(ast, false);
  let regex: RegExp;
  try {
    regex = new RegExp(source, "gv");
  } catch (e) {
    throw new PatternNotTranslated(`the translation does not compile (${(e as Error).message})`, 0);
  }
  return { source, regex };
}

/** A literal string pattern (`{"String": ...}`): Rust escapes it into a regex; this is the same search. */
export function literalPattern(text: string): TranslatedPattern {
  let source = "";
  for (const ch of text) source += charSource(ch.codePointAt(0) as number);
  return { source, regex: new RegExp(source, "gv") };
}
