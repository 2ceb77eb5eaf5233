/**
 * The text layout of some filters, each built within the render's budget: `title`'s words,
 * `urlencode`'s quoting, `wordwrap`'s lines, `pprint`'s layout (filters.ts calls these).
 *
 * Layer: template/jinja.
 */
import { ITEM_UNITS, TUPLE_UNITS, dictSize, isDict, isStr, pyStr, saferepr, sortedItems, strOf } from "./ops.js";
import type { SizeGuard } from "./ops.js";
import { StrBuilder, cpLen, cpSlice } from "./pystr.js";
import { isTuple } from "./values.js";

/** Jinja2's do_title: the first code point of each word upper-cased, the rest lower-cased (built in chunks). */
export function titleWords(s: string): string {
  const out = new StrBuilder();
  // Jinja2's _word_beginning_split_re: Python's `\s` is str.isspace (\x1c-\x1f, \x85; not \ufeff)
  const re = /[-\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000({[<]+/gu;
  let last = 0;
  for (let m = re.exec(s); m !== null; m = re.exec(s)) {
    if (m.index > last) out.add(titleWord(s.slice(last, m.index)));
    out.add(m[0]);
    last = m.index + m[0].length;
  }
  if (last < s.length) out.add(titleWord(s.slice(last)));
  return out.toString();
}

function titleWord(item: string): string {
  const first = String.fromCodePoint(item.codePointAt(0) as number);
  return first.toUpperCase() + item.slice(first.length).toLowerCase();
}

/** urllib.parse.quote of the UTF-8 bytes (built in chunks; the bytes and the result are charged first). */
export function urlQuote(g: SizeGuard, v: unknown, forQs: boolean): string {
  const s = isStr(v) ? strOf(v) : pyStr(v, g);
  const safe = forQs ? "" : "/";
  g.charge(2 * s.length);
  const bytes = new TextEncoder().encode(s);
  const keep = (b: number): boolean => {
    const c = String.fromCharCode(b);
    return /[A-Za-z0-9_.\-~]/.test(c) || safe.includes(c) || (forQs && c === " ");
  };
  let n = 0;
  for (const b of bytes) n += keep(b) ? 1 : 3;
  g.checkSize(n);
  g.charge(2 * n);
  const out = new StrBuilder();
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9_.\-~]/.test(c) || safe.includes(c)) out.add(c);
    else if (forQs && c === " ") out.add("+");
    else out.add("%" + b.toString(16).toUpperCase().padStart(2, "0"));
  }
  return out.toString();
}

/** textwrap (simplified) of one line; its pieces and the lines made are charged to `g`. */
export function wrapLine(g: SizeGuard, line: string, width: number, breakLong: boolean, sepLen: number): string[] {
  // the runs of space and non-space split off (two arrays of them), counted first when the line is long
  const bound = line.length + 1;
  const n = 2 * bound * ITEM_UNITS <= g.room() && 2 * bound * 16 <= g.maxChars ? -1 : runCount(line);
  if (n >= 0) g.buildItems(2 * n);
  // textwrap splits on ASCII whitespace only (NBSP, U+3000 stay inside words)
  const words = line.split(/([\t\n\v\f\r ]+)/).filter((w) => w.length > 0);
  if (n < 0) g.buildItems(2 * words.length);
  const lines: string[] = [];
  const push = (x: string): void => {
    g.charge(ITEM_UNITS + x.length + sepLen);
    lines.push(x);
  };
  let cur = "";
  for (const w of words) {
    if (/^[\t\n\v\f\r ]+$/.test(w)) {
      if (cur.length > 0) cur += w;
      continue;
    }
    let word = w;
    if (cpLen(asciiTrimEnd(cur)) + cpLen(word) <= width && cpLen(cur) + cpLen(word) <= width) {
      cur += word;
      continue;
    }
    if (asciiTrimEnd(cur).length > 0) push(asciiTrimEnd(cur));
    cur = "";
    while (breakLong && cpLen(word) > width) {
      push(cpSlice(word, 0, width));
      word = cpSlice(word, width, cpLen(word));
      g.charge(word.length);
    }
    cur = word;
  }
  if (asciiTrimEnd(cur).length > 0) push(asciiTrimEnd(cur));
  return lines;
}

/** `s` without trailing ASCII whitespace (textwrap's whitespace). */
function asciiTrimEnd(s: string): string {
  return s.replace(/[\t\n\v\f\r ]+$/, "");
}

/** How many maximal runs of whitespace and of other characters `line` has (what wrapLine splits). */
function runCount(line: string): number {
  const re = /[\t\n\v\f\r ]+/g;
  let n = 0;
  let last = 0;
  for (let m = re.exec(line); m !== null; m = re.exec(line)) {
    if (m.index > last) n++;
    n++;
    last = m.index + m[0].length;
  }
  return last < line.length ? n + 1 : n;
}

/** pprint.pformat(v) (width 80; long strings are not split, unlike Python), built under `g`. */
export function pformat(g: SizeGuard, v: unknown, indent: number, allowance: number): string {
  const rep = saferepr(v, g);
  if (rep.length <= 80 - indent - allowance) return rep;
  let open: string;
  let end: string;
  let parts: string[];
  if (isDict(v) && dictSize(v) > 0) {
    g.buildItems(2 * dictSize(v));
    g.charge(dictSize(v) * TUPLE_UNITS);
    const items = sortedItems(v);
    open = "{";
    end = "}";
    parts = items.map(([k, x], i) => {
      const kr = saferepr(k, g);
      return kr + ": " + pformat(g, x, indent + 1 + kr.length + 2, i === items.length - 1 ? allowance + 1 : 1);
    });
  } else if (Array.isArray(v) && v.length > 0) {
    const tup = isTuple(v);
    open = tup ? "(" : "[";
    end = tup && v.length === 1 ? ",)" : tup ? ")" : "]";
    g.buildItems(v.length);
    parts = v.map((x, i) => pformat(g, x, indent + 1, i === v.length - 1 ? allowance + end.length : 1));
  } else return rep;
  // the parts, joined with a newline and the indentation
  let n = open.length + end.length;
  for (const p of parts) n += p.length + 2 + indent + 1;
  g.buildStr(n);
  return open + parts.join(",\n" + " ".repeat(indent + 1)) + end;
}
