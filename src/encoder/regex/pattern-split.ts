/**
 * What the Rust `tokenizers` crate does with a compiled pattern, on JavaScript strings: find its
 * matches the way the `onig` crate iterates them, split a text at them with a Split pre-tokenizer's
 * behavior and `invert` flag, or replace them with a literal text (the Replace normalizer).
 *
 * Match iteration (`onig::FindMatches`): search from the end of the previous match; an empty match
 * that starts right where the previous match ended is skipped and the search moves on by one code
 * point. (JavaScript's `matchAll`/`replaceAll` report that empty match: `a*` over "baab" is
 * replaced to "-b--b-" in JavaScript and "-b-b-" in Rust.)
 *
 * Offsets are UTF-16 indexes; the patterns are `u`-flag RegExps, so a match never cuts a
 * surrogate pair, and UTF-16 boundaries are exactly Rust's UTF-8 ones.
 *
 * Layer: encoder.
 */

/** A Split pre-tokenizer's `behavior` (tokenizers' SplitDelimiterBehavior). */
export type SplitBehavior = "Removed" | "Isolated" | "MergedWithPrevious" | "MergedWithNext" | "Contiguous";
export const SPLIT_BEHAVIORS: ReadonlySet<string> = new Set(["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]);

const isLead = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isTrail = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

/** Matches of `re` (global) in `text` as flat [start, end) pairs, in Oniguruma's iteration order. */
export function findMatches(re: RegExp, text: string): number[] {
  const out: number[] = [];
  let from = 0;
  let lastMatchEnd = -1;
  while (from <= text.length) {
    re.lastIndex = from;
    const m = re.exec(text);
    if (m === null) break;
    const s = m.index;
    const e = s + m[0].length;
    if (s > 0 && isTrail(text.charCodeAt(s)) && isLead(text.charCodeAt(s - 1))) {
      // V8 lets an empty match (a lookahead) start between the halves of a surrogate pair, which
      // is no position in UTF-8: go on from the pair's end
      from = s + 1;
      continue;
    }
    if (s === e && e === lastMatchEnd) {
      // no empty match right after a match: move on one code point
      from += isLead(text.charCodeAt(from)) && isTrail(text.charCodeAt(from + 1)) ? 2 : 1;
      continue;
    }
    out.push(s, e);
    from = e;
    lastMatchEnd = e;
  }
  return out;
}

/**
 * `text` cut at the matches: flat [start, end, isMatch] triples covering the text in order
 * (tokenizers' `Pattern::find_matches`, with `invert` flipping isMatch).
 */
function pieces(re: RegExp, text: string, invert: boolean): number[] {
  if (text.length === 0) return [0, 0, invert ? 1 : 0];
  const m = findMatches(re, text);
  const out: number[] = [];
  const yes = invert ? 0 : 1;
  let prev = 0;
  for (let i = 0; i < m.length; i += 2) {
    const s = m[i] as number;
    const e = m[i + 1] as number;
    if (s !== prev) out.push(prev, s, 1 - yes);
    out.push(s, e, yes);
    prev = e;
  }
  if (prev !== text.length) out.push(prev, text.length, 1 - yes);
  return out;
}

/**
 * The pre-tokens a Split pre-tokenizer makes of `text`: `NormalizedString::split` with the
 * behavior, then the empty pieces dropped (as `PreTokenizedString::split` drops them).
 */
export function splitText(re: RegExp, text: string, behavior: SplitBehavior, invert: boolean): string[] {
  // Fast paths on `String.prototype.match`: its non-empty matches are Oniguruma's (an empty match
  // makes both regex engines resume one code point on), and these behaviors drop the empty pieces.
  if (behavior === "Removed" && invert) return nonEmpty(text.match(re));
  if (behavior === "Isolated") {
    // when the matches tile the text (as the tokenizers' own patterns do), they are the pieces
    const all = text.match(re);
    if (all === null) return text.length > 0 ? [text] : [];
    let covered = 0;
    for (let i = 0; i < all.length; i++) covered += (all[i] as string).length;
    if (covered === text.length) return nonEmpty(all);
  }
  const spans = splitSpans(re, text, behavior, invert);
  const out: string[] = [];
  for (let i = 0; i < spans.length; i += 2) out.push(text.slice(spans[i] as number, spans[i + 1] as number));
  return out;
}

/** The pieces of {@link splitText} as flat, non-empty [start, end) pairs in order. */
export function splitSpans(re: RegExp, text: string, behavior: SplitBehavior, invert: boolean): number[] {
  const p = pieces(re, text, invert);
  const out: number[] = [];
  const emit = (s: number, e: number): void => {
    if (e > s) out.push(s, e);
  };
  switch (behavior) {
    case "Isolated":
      for (let i = 0; i < p.length; i += 3) emit(p[i] as number, p[i + 1] as number);
      return out;
    case "Removed":
      for (let i = 0; i < p.length; i += 3) if (p[i + 2] === 0) emit(p[i] as number, p[i + 1] as number);
      return out;
    case "MergedWithPrevious": {
      // a match joins the piece before it (unless that one was a match too)
      const ends: number[] = [];
      let prevMatch = false;
      for (let i = 0; i < p.length; i += 3) {
        const isMatch = p[i + 2] === 1;
        if (isMatch && !prevMatch && ends.length > 0) ends[ends.length - 1] = p[i + 1] as number;
        else ends.push(p[i] as number, p[i + 1] as number);
        prevMatch = isMatch;
      }
      for (let i = 0; i < ends.length; i += 2) emit(ends[i] as number, ends[i + 1] as number);
      return out;
    }
    case "MergedWithNext": {
      // a match joins the piece after it (unless that one is a match too): the same, backwards
      const spans: number[] = [];
      let nextMatch = false;
      for (let i = p.length - 3; i >= 0; i -= 3) {
        const isMatch = p[i + 2] === 1;
        if (isMatch && !nextMatch && spans.length > 0) spans[spans.length - 2] = p[i] as number;
        else spans.push(p[i] as number, p[i + 1] as number);
        nextMatch = isMatch;
      }
      for (let i = spans.length - 2; i >= 0; i -= 2) emit(spans[i] as number, spans[i + 1] as number);
      return out;
    }
    case "Contiguous": {
      // runs of pieces with the same isMatch become one
      const spans: number[] = [];
      let prevMatch: boolean | null = null;
      for (let i = 0; i < p.length; i += 3) {
        const isMatch = p[i + 2] === 1;
        if (isMatch === prevMatch && spans.length > 0) spans[spans.length - 1] = p[i + 1] as number;
        else spans.push(p[i] as number, p[i + 1] as number);
        prevMatch = isMatch;
      }
      for (let i = 0; i < spans.length; i += 2) emit(spans[i] as number, spans[i + 1] as number);
      return out;
    }
  }
}

function nonEmpty(list: RegExpMatchArray | null): string[] {
  if (list === null) return [];
  for (let i = 0; i < list.length; i++) if ((list[i] as string).length === 0) return list.filter((x) => x.length > 0);
  return list;
}

/** `text` with every match of `re` replaced by `content`, taken literally (no `$` patterns). */
export function replaceText(re: RegExp, text: string, content: string): string {
  if (text.length === 0) return text; // tokenizers' find_matches: no match in an empty text
  const m = findMatches(re, text);
  if (m.length === 0) return text;
  let out = "";
  let prev = 0;
  for (let i = 0; i < m.length; i += 2) {
    out += text.slice(prev, m[i] as number) + content;
    prev = m[i + 1] as number;
  }
  return out + text.slice(prev);
}
