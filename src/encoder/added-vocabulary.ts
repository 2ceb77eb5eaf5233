/**
 * Added tokens, found in a text exactly as the Rust crate's `AddedVocabulary` finds them
 * (tokenizer/added_vocabulary.rs):
 *
 * - Two sets: tokens with `normalized: false` are matched on the raw text; the others on each
 *   normalized section between raw matches, with their content normalized by the same
 *   normalizer.
 * - Leftmost-longest: the match starting first wins, the longest among those; the search goes
 *   on after the match (before any `rstrip` extension, as the crate's aho-corasick iterator does).
 * - `single_word`: a match with a word character (the `regex` crate's Unicode `\w`) right before
 *   or after it is dropped. `lstrip` / `rstrip`: the whitespace (the `regex` crate's `\s`) before /
 *   after the match joins it, never reaching into what an earlier match took.
 *
 * Matching runs on UTF-16 units. Token contents are valid Unicode, so a match never starts or
 * ends inside a surrogate pair, and unit offsets are the crate's byte offsets.
 *
 * Layer: encoder.
 */

import { has, regexCrateLeaf, type CodePointSet } from "./regex/unicode-sets.js";

/** One added token as tokenizer.json describes it (flags filled with their defaults). */
export interface AddedTokenDef {
  readonly id: number;
  readonly content: string;
  readonly special: boolean;
  readonly lstrip: boolean;
  readonly rstrip: boolean;
  readonly single_word: boolean;
  readonly normalized: boolean;
}

interface Node {
  next: Map<number, Node> | null;
  /** Index into the matcher's tokens of a token ending here, or -1. */
  token: number;
}

let wordSet: CodePointSet | null = null;
let spaceSet: CodePointSet | null = null;
const isWord = (cp: number): boolean => {
  if (cp < 0x80) return (cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a) || cp === 0x5f;
  wordSet ??= regexCrateLeaf("w").set;
  return has(wordSet, cp);
};
const isSpace = (cp: number): boolean => {
  if (cp < 0x80) return cp === 0x20 || (cp >= 0x09 && cp <= 0x0d);
  spaceSet ??= regexCrateLeaf("s").set;
  return has(spaceSet, cp);
};

function codePointBefore(s: string, i: number): number {
  const c = s.charCodeAt(i - 1);
  if (c >= 0xdc00 && c <= 0xdfff && i >= 2) {
    const h = s.charCodeAt(i - 2);
    if (h >= 0xd800 && h <= 0xdbff) return 0x10000 + ((h - 0xd800) << 10) + (c - 0xdc00);
  }
  return c;
}

/** One set of added tokens and its trie. */
export class AddedMatcher {
  readonly #root: Node = { next: null, token: -1 };
  readonly #tokens: AddedTokenDef[] = [];
  readonly #first = new Uint8Array(65536);
  /** Whether no token is in the set. */
  readonly empty: boolean;
  /** Whether some token has lstrip, rstrip or single_word. */
  readonly flagged: boolean;
  /** The start every token's content shares ("<" for most chat tokenizers), or "": a jump target for indexOf. */
  readonly #prefix: string;

  /** `contents[i]` is the text to match for `tokens[i]` (its normalized content in the normalized set). */
  constructor(tokens: readonly AddedTokenDef[], contents: readonly string[]) {
    let flagged = false;
    for (let t = 0; t < tokens.length; t++) {
      const c = contents[t] as string;
      if (c.length === 0) continue; // the crate's trie never matches an empty pattern
      const def = tokens[t] as AddedTokenDef;
      let node = this.#root;
      for (let i = 0; i < c.length; i++) {
        const u = c.charCodeAt(i);
        node.next ??= new Map();
        let child = node.next.get(u);
        if (child === undefined) {
          child = { next: null, token: -1 };
          node.next.set(u, child);
        }
        node = child;
      }
      // the same content twice: the first listed keeps it (aho-corasick reports the lower pattern)
      if (node.token < 0) {
        node.token = this.#tokens.length;
        this.#tokens.push(def);
      }
      this.#first[c.charCodeAt(0)] = 1;
      if (def.lstrip || def.rstrip || def.single_word) flagged = true;
    }
    this.empty = this.#tokens.length === 0;
    this.flagged = flagged;
    this.#prefix = sharedPrefix(contents.slice(0, tokens.length));
  }

  /** The longest token starting at i of s (before `end`): its index and end, or null. */
  #longestAt(s: string, i: number, end: number): { token: number; end: number } | null {
    let node: Node = this.#root;
    let best = -1;
    let bestEnd = i;
    for (let j = i; j < end; j++) {
      const child: Node | undefined = node.next?.get(s.charCodeAt(j));
      if (child === undefined) break;
      node = child;
      if (node.token >= 0) {
        best = node.token;
        bestEnd = j + 1;
      }
      if (node.next === null) break;
    }
    return best < 0 ? null : { token: best, end: bestEnd };
  }

  /**
   * The crate's `find_matches` over s[from, to): calls `piece(start, end)` for text between
   * matches and `token(id, start, end)` for each match (extended by lstrip / rstrip), in order,
   * covering s[from, to) (overlaps only where the crate's own rstrip / lstrip overlap). Empty
   * text between matches is not reported.
   */
  split(s: string, from: number, to: number, piece: (start: number, end: number) => void, token: (id: number, start: number, end: number) => void): void {
    let startOffset = from;
    let i = from;
    const first = this.#first;
    const prefix = this.#prefix;
    while (i < to) {
      if (prefix.length > 0) {
        // every token starts with the prefix: jump to its next occurrence
        const j = s.indexOf(prefix, i);
        if (j < 0 || j >= to) break;
        i = j;
      } else if (first[s.charCodeAt(i)] === 0) {
        i++;
        continue;
      }
      const m = this.#longestAt(s, i, to);
      if (m === null) {
        i++;
        continue;
      }
      const def = this.#tokens[m.token] as AddedTokenDef;
      let start = i;
      let stop = m.end;
      i = m.end; // the search goes on after the match itself
      if (def.single_word) {
        const before = start > from && isWord(codePointBefore(s, start));
        const after = stop < to && isWord(s.codePointAt(stop) as number);
        if (before || after) continue;
      }
      if (def.lstrip) {
        let ns = start;
        while (ns > from) {
          const cp = codePointBefore(s, ns);
          if (!isSpace(cp)) break;
          ns -= cp > 0xffff ? 2 : 1;
        }
        start = Math.max(ns, startOffset);
      }
      if (def.rstrip) {
        while (stop < to) {
          const cp = s.codePointAt(stop) as number;
          if (!isSpace(cp)) break;
          stop += cp > 0xffff ? 2 : 1;
        }
      }
      if (startOffset < start) piece(startOffset, start);
      token(def.id, start, stop);
      startOffset = stop;
    }
    if (startOffset < to) piece(startOffset, to);
  }
}

/**
 * The start every non-empty token text shares ("<" for most chat tokenizers), where a scan for
 * them can jump with indexOf; "" when they share none. Never ends inside a surrogate pair.
 */
export function sharedPrefix(texts: Iterable<string>): string {
  let prefix: string | null = null;
  for (const c of texts) {
    if (c.length === 0) continue;
    if (prefix === null) prefix = c;
    else {
      let k = 0;
      while (k < prefix.length && k < c.length && prefix.charCodeAt(k) === c.charCodeAt(k)) k++;
      prefix = prefix.slice(0, k);
    }
  }
  if (prefix === null) return "";
  const last = prefix.charCodeAt(prefix.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? prefix.slice(0, -1) : prefix;
}
