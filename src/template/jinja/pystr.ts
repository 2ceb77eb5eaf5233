/**
 * Python `str` semantics on JS strings. Python indexes strings by code point; JS by UTF-16
 * unit. Strings without surrogates (the common case) take the fast paths; others are handled
 * code point by code point (a lone surrogate is one code point, as in Python).
 *
 * Layer: template/jinja.
 */
import { NONPRINTABLE_RANGES, TITLE_EXCEPTIONS } from "./unicode-data.js";

const SURR = /[\ud800-\udfff]/;

export function hasSurrogates(s: string): boolean {
  return SURR.test(s);
}

/** Python `len(s)`. */
export function cpLen(s: string): number {
  if (!SURR.test(s)) return s.length;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** Code points of `s` as one-character strings (Python iteration). */
export function cpArray(s: string): string[] {
  if (!SURR.test(s)) return s.split("");
  return Array.from(s);
}

/** Python `str.isspace` for one code unit/point. */
export function isPySpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x1f);
  if (c < 0x85) return false;
  return (
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

function isNonPrintable(cp: number): boolean {
  const r = NONPRINTABLE_RANGES;
  let lo = 0;
  let hi = r.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const a = r[2 * mid] as number;
    const b = r[2 * mid + 1] as number;
    if (cp < a) hi = mid - 1;
    else if (cp > b) lo = mid + 1;
    else return true;
  }
  return false;
}

/** Python `str.isprintable()` for one code point. */
export function isPrintableCp(cp: number): boolean {
  if (cp >= 0x20 && cp < 0x7f) return true;
  return !isNonPrintable(cp);
}

function hex(n: number, w: number): string {
  return n.toString(16).padStart(w, "0");
}

/**
 * Builds a long string from many pieces without one rope node per piece (V8 keeps a 32-byte
 * node for every `+=` until the result is flattened): pieces are joined in chunks of 4,096,
 * the chunks once at the end.
 */
export class StrBuilder {
  private readonly parts: string[] = [];
  private chunks: string[] | null = null;
  /** UTF-16 units added so far */
  length = 0;
  add(s: string): void {
    this.parts.push(s);
    this.length += s.length;
    if (this.parts.length >= 4096) this.spill();
  }
  private spill(): void {
    (this.chunks ??= []).push(this.parts.join(""));
    this.parts.length = 0;
  }
  toString(): string {
    if (this.chunks === null) return this.parts.join("");
    this.spill();
    const r = this.chunks.join("");
    this.chunks = null;
    return r;
  }
}

/** Thrown by the builders here when a result would exceed the size they were given. */
export class TooLarge extends Error {
  constructor(readonly size: number) {
    super(`result too large (${size} units)`);
  }
}

/**
 * Python `repr(s)` for a str; a result longer than `max` UTF-16 units throws TooLarge before
 * it is complete.
 */
export function pyStrRepr(s: string, max = Infinity): string {
  const quote = s.indexOf("'") >= 0 && s.indexOf('"') < 0 ? '"' : "'";
  let out: StrBuilder | null = null;
  let start = 0;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f && c !== 92 && c !== 39 && c !== 34) continue;
    let cp = c;
    let w = 1;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        cp = (c - 0xd800) * 0x400 + (d - 0xdc00) + 0x10000;
        w = 2;
      }
    }
    let rep: string | null = null;
    if (cp === 92) rep = "\\\\";
    else if (cp === 39 || cp === 34) rep = String.fromCharCode(cp) === quote ? "\\" + quote : null;
    else if (cp === 9) rep = "\\t";
    else if (cp === 10) rep = "\\n";
    else if (cp === 13) rep = "\\r";
    else if (cp < 0x20 || cp === 0x7f) rep = "\\x" + hex(cp, 2);
    else if (cp >= 0x80 && isNonPrintable(cp)) {
      rep = cp <= 0xff ? "\\x" + hex(cp, 2) : cp <= 0xffff ? "\\u" + hex(cp, 4) : "\\U" + hex(cp, 8);
    }
    if (rep !== null) {
      if (out === null) {
        out = new StrBuilder();
        out.add(quote);
      }
      if (start < i) out.add(s.slice(start, i));
      out.add(rep);
      // (the rest of s and the closing quote are still to come)
      if (out.length + (n - i - w) + 1 > max) throw new TooLarge(out.length + (n - i - w) + 1);
      start = i + w;
    }
    i += w - 1;
  }
  if (out === null) return quote + s + quote;
  if (start < n) out.add(s.slice(start));
  out.add(quote);
  return out.toString();
}

// ---- index conversion ------------------------------------------------------------------

/** Python slice-index normalization for [start, end) over a length. */
export function sliceBounds(len: number, start: number | null, end: number | null): [number, number] {
  let a = start === null ? 0 : start;
  let b = end === null ? len : end;
  if (a < 0) a = Math.max(0, a + len);
  else if (a > len) a = len;
  if (b < 0) b = Math.max(0, b + len);
  else if (b > len) b = len;
  return [a, b];
}

/** UTF-16 offset of code point index `cpIdx` in s (s may contain surrogates). */
export function cpToUnit(s: string, cpIdx: number): number {
  let u = 0;
  for (let k = 0; k < cpIdx && u < s.length; k++) {
    const c = s.charCodeAt(u);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(u + 1);
      u += d >= 0xdc00 && d <= 0xdfff ? 2 : 1;
    } else u++;
  }
  return u;
}

/** Code point index of UTF-16 offset `unit` in s. */
export function unitToCp(s: string, unit: number): number {
  if (!SURR.test(s)) return unit;
  let k = 0;
  for (let u = 0; u < unit; ) {
    const c = s.charCodeAt(u);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(u + 1);
      u += d >= 0xdc00 && d <= 0xdfff ? 2 : 1;
    } else u++;
    k++;
  }
  return k;
}

/** The code point range [a, b) of s as a JS string. */
export function cpSlice(s: string, a: number, b: number): string {
  if (!SURR.test(s)) return s.slice(a, b);
  const ua = cpToUnit(s, a);
  const ub = cpToUnit(s, b);
  return s.slice(ua, ub);
}

// ---- strip / split -----------------------------------------------------------------------

function charSet(chars: string): Set<number> {
  const set = new Set<number>();
  for (const ch of chars) set.add(ch.codePointAt(0) as number);
  return set;
}

/** Python str.strip/lstrip/rstrip; `chars` null = whitespace. */
export function pyStrip(s: string, chars: string | null, left: boolean, right: boolean): string {
  let a = 0;
  let b = s.length;
  if (chars === null) {
    if (left) while (a < b && isPySpace(s.charCodeAt(a))) a++;
    if (right) while (b > a && isPySpace(s.charCodeAt(b - 1))) b--;
    return a === 0 && b === s.length ? s : s.slice(a, b);
  }
  if (chars.length === 0) return s;
  if (!SURR.test(chars) && !SURR.test(s)) {
    if (chars.length === 1) {
      const c = chars.charCodeAt(0);
      if (left) while (a < b && s.charCodeAt(a) === c) a++;
      if (right) while (b > a && s.charCodeAt(b - 1) === c) b--;
    } else {
      if (left) while (a < b && chars.indexOf(s[a] as string) >= 0) a++;
      if (right) while (b > a && chars.indexOf(s[b - 1] as string) >= 0) b--;
    }
    return a === 0 && b === s.length ? s : s.slice(a, b);
  }
  // by code point (a surrogate pair is one, a lone surrogate is one), without listing them
  const set = charSet(chars);
  if (left) {
    while (a < b) {
      const cp = s.codePointAt(a) as number;
      if (!set.has(cp)) break;
      a += cp > 0xffff ? 2 : 1;
    }
  }
  if (right) {
    while (b > a) {
      const lo = s.charCodeAt(b - 1);
      const hi = b - 2 >= a ? s.charCodeAt(b - 2) : 0;
      const pair = lo >= 0xdc00 && lo <= 0xdfff && hi >= 0xd800 && hi <= 0xdbff;
      const cp = pair ? (s.codePointAt(b - 2) as number) : lo;
      if (!set.has(cp)) break;
      b -= pair ? 2 : 1;
    }
  }
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

/** Python str.split(sep, maxsplit). */
export function pySplit(s: string, sep: string | null, maxsplit: number): string[] {
  if (sep === null) {
    const out: string[] = [];
    let i = 0;
    const n = s.length;
    while (true) {
      while (i < n && isPySpace(s.charCodeAt(i))) i++;
      if (i >= n) break;
      if (maxsplit >= 0 && out.length === maxsplit) {
        out.push(s.slice(i));
        break;
      }
      let j = i;
      while (j < n && !isPySpace(s.charCodeAt(j))) j++;
      out.push(s.slice(i, j));
      i = j;
    }
    return out;
  }
  if (maxsplit < 0) return s.split(sep);
  const out: string[] = [];
  let i = 0;
  while (out.length < maxsplit) {
    const j = s.indexOf(sep, i);
    if (j < 0) break;
    out.push(s.slice(i, j));
    i = j + sep.length;
  }
  out.push(s.slice(i));
  return out;
}

/** The most pieces str.split / rsplit (sep, maxsplit) can return for a string of this length. */
export function splitBound(s: string, sep: string | null, maxsplit: number): number {
  const n = sep === null ? Math.floor(s.length / 2) + 1 : Math.floor(s.length / sep.length) + 1;
  return maxsplit >= 0 ? Math.min(n, maxsplit + 1) : n;
}

/** How many pieces str.split(sep, maxsplit) returns (rsplit returns as many); nothing is built. */
export function pySplitCount(s: string, sep: string | null, maxsplit: number): number {
  let n = 0;
  if (sep === null) {
    let i = 0;
    const len = s.length;
    while (true) {
      while (i < len && isPySpace(s.charCodeAt(i))) i++;
      if (i >= len) break;
      if (maxsplit >= 0 && n === maxsplit) return n + 1;
      while (i < len && !isPySpace(s.charCodeAt(i))) i++;
      n++;
    }
    return n;
  }
  let i = s.indexOf(sep);
  while (i >= 0 && (maxsplit < 0 || n < maxsplit)) {
    n++;
    i = s.indexOf(sep, i + sep.length);
  }
  return n + 1;
}

/** Python str.rsplit(sep, maxsplit). */
export function pyRsplit(s: string, sep: string | null, maxsplit: number): string[] {
  if (maxsplit < 0) return pySplit(s, sep, -1);
  const out: string[] = [];
  if (sep === null) {
    let j = s.length;
    while (true) {
      while (j > 0 && isPySpace(s.charCodeAt(j - 1))) j--;
      if (j <= 0) break;
      if (out.length === maxsplit) {
        out.push(s.slice(0, j));
        break;
      }
      let i = j;
      while (i > 0 && !isPySpace(s.charCodeAt(i - 1))) i--;
      out.push(s.slice(i, j));
      j = i;
    }
    return out.reverse();
  }
  let j = s.length;
  while (out.length < maxsplit) {
    const i = j - sep.length < 0 ? -1 : s.lastIndexOf(sep, j - sep.length);
    if (i < 0) break;
    out.push(s.slice(i + sep.length, j));
    j = i;
  }
  out.push(s.slice(0, j));
  return out.reverse();
}

function isLineBreak(c: number): boolean {
  return c === 10 || c === 13 || c === 11 || c === 12 || c === 0x1c || c === 0x1d || c === 0x1e || c === 0x85 || c === 0x2028 || c === 0x2029;
}

/** How many lines pySplitlines(s) returns (nothing is built). */
export function lineCount(s: string): number {
  let n = 0;
  let i = 0;
  let start = 0;
  const len = s.length;
  while (i < len) {
    const c = s.charCodeAt(i);
    if (isLineBreak(c)) {
      const eol = c === 13 && s.charCodeAt(i + 1) === 10 ? i + 2 : i + 1;
      n++;
      start = eol;
      i = eol;
    } else i++;
  }
  return start < len ? n + 1 : n;
}

/** Python str.splitlines(keepends). */
export function pySplitlines(s: string, keepends: boolean): string[] {
  const out: string[] = [];
  let i = 0;
  let start = 0;
  const n = s.length;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (isLineBreak(c)) {
      let eol = i + 1;
      if (c === 13 && s.charCodeAt(i + 1) === 10) eol = i + 2;
      out.push(s.slice(start, keepends ? eol : i));
      start = eol;
      i = eol;
    } else i++;
  }
  if (start < n) out.push(s.slice(start));
  return out;
}

/** How many substitutions str.replace(old, _, count) makes. */
export function replaceCount(s: string, old: string, count: number): number {
  if (count === 0) return 0;
  if (old.length === 0) {
    const slots = cpLen(s) + 1;
    return count < 0 ? slots : Math.min(count, slots);
  }
  let n = 0;
  let i = s.indexOf(old);
  while (i >= 0 && (count < 0 || n < count)) {
    n++;
    i = s.indexOf(old, i + old.length);
  }
  return n;
}

/**
 * Python str.replace(old, new, count). An empty `old` inserts `new` before every code point
 * and at the end (built in chunks, without listing the code points).
 */
export function pyReplace(s: string, old: string, rep: string, count: number): string {
  if (count === 0) return s;
  if (old.length === 0) {
    const out = new StrBuilder();
    let done = 0;
    const n = s.length;
    for (let i = 0; i <= n; ) {
      if (count >= 0 && done >= count) {
        out.add(s.slice(i));
        break;
      }
      out.add(rep);
      done++;
      if (i >= n) break;
      const c = s.charCodeAt(i);
      const d = s.charCodeAt(i + 1);
      const w = c >= 0xd800 && c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff ? 2 : 1;
      out.add(w === 1 ? (s[i] as string) : s.slice(i, i + 2));
      i += w;
    }
    return out.toString();
  }
  if (count < 0) return s.split(old).join(rep);
  const out = new StrBuilder();
  let i = 0;
  let done = 0;
  while (done < count) {
    const j = s.indexOf(old, i);
    if (j < 0) break;
    out.add(s.slice(i, j));
    out.add(rep);
    i = j + old.length;
    done++;
  }
  out.add(s.slice(i));
  return out.toString();
}

/** Python str.find / rfind with optional slice bounds (code point indices). */
export function pyFind(s: string, sub: string, start: number | null, end: number | null, reverse: boolean): number {
  const surr = SURR.test(s);
  const len = surr ? cpLen(s) : s.length;
  const [a, b] = sliceBounds(len, start, end);
  if (b - a < 0) return -1;
  if (!surr) {
    if (sub.length > b - a) return -1;
    if (reverse) {
      const j = s.lastIndexOf(sub, b - sub.length);
      return j >= a ? j : -1;
    }
    const j = s.indexOf(sub, a);
    return j >= 0 && j + sub.length <= b ? j : -1;
  }
  const ua = cpToUnit(s, a);
  const ub = cpToUnit(s, b);
  const seg = s.slice(ua, ub);
  const j = reverse ? seg.lastIndexOf(sub) : seg.indexOf(sub);
  if (j < 0) return -1;
  return a + unitToCp(seg, j);
}

/** Python str.count(sub, start, end). */
export function pyCount(s: string, sub: string, start: number | null, end: number | null): number {
  const surr = SURR.test(s);
  const len = surr ? cpLen(s) : s.length;
  const [a, b] = sliceBounds(len, start, end);
  if (a > b) return 0;
  const seg = surr ? cpSlice(s, a, b) : s.slice(a, b);
  if (sub.length === 0) return (surr ? cpLen(seg) : seg.length) + 1;
  let n = 0;
  let i = seg.indexOf(sub);
  while (i >= 0) {
    n++;
    i = seg.indexOf(sub, i + sub.length);
  }
  return n;
}

// ---- case --------------------------------------------------------------------------------

const RE_CASED = /\p{Cased}/u;
const RE_UPPER = /\p{Uppercase}/u;
const RE_LOWER = /\p{Lowercase}/u;
const RE_TITLECASE = /\p{Lt}/u;

function titleChar(ch: string): string {
  const t = TITLE_EXCEPTIONS.get(ch.codePointAt(0) as number);
  return t !== undefined ? t : ch.toUpperCase();
}

/** Python str.title(). */
export function pyTitle(s: string): string {
  const out = new StrBuilder();
  let prevCased = false;
  for (const ch of s) {
    const c = ch.charCodeAt(0);
    if (c < 0x80) {
      const isLower = c >= 97 && c <= 122;
      const isUpper = c >= 65 && c <= 90;
      if (prevCased) out.add(isUpper ? String.fromCharCode(c + 32) : ch);
      else out.add(isLower ? String.fromCharCode(c - 32) : ch);
      prevCased = isLower || isUpper;
      continue;
    }
    out.add(prevCased ? ch.toLowerCase() : titleChar(ch));
    prevCased = RE_CASED.test(ch);
  }
  return out.toString();
}

/** Python str.capitalize(). */
export function pyCapitalize(s: string): string {
  if (s.length === 0) return s;
  const first = String.fromCodePoint(s.codePointAt(0) as number);
  return titleChar(first) + s.slice(first.length).toLowerCase();
}

/** Python str.swapcase(). */
export function pySwapcase(s: string): string {
  const out = new StrBuilder();
  for (const ch of s) {
    if (RE_UPPER.test(ch)) out.add(ch.toLowerCase());
    else if (RE_LOWER.test(ch)) out.add(ch.toUpperCase());
    else out.add(ch);
  }
  return out.toString();
}

/** Python str.islower(). */
export function pyIsLower(s: string): boolean {
  let cased = false;
  for (const ch of s) {
    if (RE_UPPER.test(ch) || RE_TITLECASE.test(ch)) return false;
    if (!cased && RE_LOWER.test(ch)) cased = true;
  }
  return cased;
}

/** Python str.isupper(). */
export function pyIsUpper(s: string): boolean {
  let cased = false;
  for (const ch of s) {
    if (RE_LOWER.test(ch) || RE_TITLECASE.test(ch)) return false;
    if (!cased && RE_UPPER.test(ch)) cased = true;
  }
  return cased;
}

/** Python str.istitle(). */
export function pyIsTitle(s: string): boolean {
  let cased = false;
  let prevCased = false;
  for (const ch of s) {
    if (RE_UPPER.test(ch) || RE_TITLECASE.test(ch)) {
      if (prevCased) return false;
      prevCased = true;
      cased = true;
    } else if (RE_LOWER.test(ch)) {
      if (!prevCased) return false;
      prevCased = true;
      cased = true;
    } else prevCased = false;
  }
  return cased;
}

const RE_ALPHA = /^[\p{L}]+$/u;
const RE_DECIMAL = /^\p{Nd}+$/u;
const RE_DIGIT = /^[\p{Nd}\u00b2\u00b3\u00b9\u2070\u2074-\u2079\u2080-\u2089\u2460-\u2468\u2474-\u247c\u2488-\u2490\u24ea\u24f5-\u24fd\u24ff\u2776-\u277e\u2780-\u2788\u278a-\u2792\u{1f100}-\u{1f10a}]+$/u;
const RE_NUMERIC = /^[\p{Nd}\p{Nl}\p{No}\u3405\u3483\u382a\u3b4d\u4e00\u4e03\u4e07\u4e09\u4e5d\u4e8c\u4e94\u4e96\u4ebf\u4ec0\u4edf\u4ee8\u4f0d\u4f70\u5104\u5146\u5169\u516b\u516d\u5341\u5343-\u5345\u534c\u53c1-\u53c4\u56db\u58f1\u58f9\u5e7a\u5efe\u5eff\u5f0c-\u5f0e\u5f10\u62fe\u634c\u67d2\u6f06\u7396\u767e\u8086\u842c\u8cae\u8cb3\u8d30\u9621\u9646\u964c\u9678\u96f6\uf96b\uf973\uf978\uf9b2\uf9d1\uf9d3\uf9fd\u{20001}\u{20064}\u{200e2}\u{20121}\u{2092a}\u{20983}\u{2098c}\u{2099c}\u{20aea}\u{20afd}\u{20b19}\u{22390}\u{22998}\u{23b1b}\u{2626d}\u{2f890}]+$/u;

export function pyIsAlpha(s: string): boolean {
  return s.length > 0 && RE_ALPHA.test(s);
}
export function pyIsDecimal(s: string): boolean {
  return s.length > 0 && RE_DECIMAL.test(s);
}
export function pyIsDigit(s: string): boolean {
  return s.length > 0 && RE_DIGIT.test(s);
}
export function pyIsNumeric(s: string): boolean {
  return s.length > 0 && RE_NUMERIC.test(s);
}
export function pyIsAlnum(s: string): boolean {
  if (s.length === 0) return false;
  for (const ch of s) if (!(RE_ALPHA.test(ch) || RE_NUMERIC.test(ch))) return false;
  return true;
}
export function pyIsSpace(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) if (!isPySpace(s.charCodeAt(i))) return false;
  return true;
}
export function pyIsPrintable(s: string): boolean {
  for (const ch of s) if (!isPrintableCp(ch.codePointAt(0) as number)) return false;
  return true;
}
const RE_IDENTIFIER = /^[\p{ID_Start}_\u2118\u212e\u309b\u309c][\p{ID_Continue}\u00b7\u0387\u1369-\u1371\u19da]*$/u;
export function pyIsIdentifier(s: string): boolean {
  return RE_IDENTIFIER.test(s);
}

// ---- padding -------------------------------------------------------------------------------

/** Python str.center(width, fill). */
export function pyCenter(s: string, width: number, fill: string): string {
  const len = cpLen(s);
  const marg = width - len;
  if (marg <= 0) return s;
  const left = Math.floor(marg / 2) + (marg & width & 1);
  return fill.repeat(left) + s + fill.repeat(marg - left);
}

export function pyLjust(s: string, width: number, fill: string): string {
  const len = cpLen(s);
  return width <= len ? s : s + fill.repeat(width - len);
}

export function pyRjust(s: string, width: number, fill: string): string {
  const len = cpLen(s);
  return width <= len ? s : fill.repeat(width - len) + s;
}

export function pyZfill(s: string, width: number): string {
  const len = cpLen(s);
  if (width <= len) return s;
  const fill = "0".repeat(width - len);
  if (s[0] === "+" || s[0] === "-") return s[0] + fill + s.slice(1);
  return fill + s;
}

/** Length of str.expandtabs(tabsize), in UTF-16 units (nothing is built). */
export function expandedLength(s: string, tabsize: number): number {
  let n = 0;
  let col = 0;
  for (const ch of s) {
    if (ch === "\t") {
      if (tabsize > 0) {
        const k = tabsize - (col % tabsize);
        n += k;
        col += k;
      }
    } else if (ch === "\n" || ch === "\r") {
      n++;
      col = 0;
    } else {
      n += ch.length;
      col++;
    }
  }
  return n;
}

/** Python str.expandtabs(tabsize). */
export function pyExpandtabs(s: string, tabsize: number): string {
  const out = new StrBuilder();
  let col = 0;
  let start = 0;
  let i = 0;
  for (const ch of s) {
    if (ch === "\t") {
      if (start < i) out.add(s.slice(start, i));
      start = i + 1;
      if (tabsize > 0) {
        const n = tabsize - (col % tabsize);
        out.add(" ".repeat(n));
        col += n;
      }
    } else if (ch === "\n" || ch === "\r") col = 0;
    else col++;
    i += ch.length;
  }
  if (start < s.length) out.add(s.slice(start));
  return out.toString();
}

/** Python string comparison (code point order): negative, zero or positive. */
/** Python str ordering (by code point). */
export { compareCodePoints as pyStrCompare } from "../../json/dumps.js";

/** markupsafe.escape for a plain string. */
export function htmlEscape(s: string): string {
  if (!/[&<>"']/.test(s)) return s;
  return s.replace(/[&<>"']/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&#34;" : "&#39;",
  );
}
