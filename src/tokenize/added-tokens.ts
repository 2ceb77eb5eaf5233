/**
 * Where a tokenizer splits text before any normalization or BPE: at its "raw" added tokens.
 *
 * Hugging Face tokenizers (Rust and @huggingface/tokenizers alike) first cut the input at every
 * added token that is matched on the raw text (`normalized: false`, or any added token when the
 * tokenizer has no normalizer), scanning left to right and taking the longest token that starts
 * at each position. The pieces between those tokens are then normalized, pre-tokenized and
 * encoded independently. deltatok cuts at the same places, which is what makes reusing the ids
 * before a cut exact (see DESIGN.md, "The reuse invariant").
 *
 * Only some raw added tokens serve as cut points ("boundary tokens"): special tokens without
 * lstrip/rstrip/single_word flags. Flags change the neighbouring text and non-special added
 * tokens may also be produced by the model from ordinary text, so those are matched (they affect
 * where boundary tokens are found) but never cut at.
 */
import { sharedPrefix } from "../encoder/added-vocabulary.js";

/** The fields of a tokenizer.json `added_tokens` entry that matter here. */
export interface AddedTokenSpec {
  id: number;
  content: string;
  special?: boolean;
  lstrip?: boolean;
  rstrip?: boolean;
  single_word?: boolean;
  normalized?: boolean;
}

/** One boundary token occurrence found in a text. */
export interface BoundaryMatch {
  /** UTF-16 offset where the token starts. */
  start: number;
  /** UTF-16 offset just after the token. */
  end: number;
  /** Token id. */
  id: number;
  /** Whether it is a boundary token (set by `scan` with `all`, which also returns the others). */
  boundary?: boolean;
}

interface TrieNode {
  next: Map<number, TrieNode> | null;
  /** Set when a token ends here: its id, and whether it is a boundary token. */
  id: number;
  boundary: boolean;
}

function newNode(): TrieNode {
  return { next: null, id: -1, boundary: false };
}

export class AddedTokenScanner {
  readonly #root: TrieNode = newNode();
  /** First UTF-16 units of every raw token, for a fast skip over ordinary text. */
  readonly #firstUnits: Uint8Array = new Uint8Array(65536);
  readonly #contentById = new Map<number, string>();
  /** Length (UTF-16 units) of the longest raw added token; 0 when there are none. */
  readonly maxTokenLength: number;
  /** Number of boundary tokens; when 0, no reuse is possible with this tokenizer. */
  readonly boundaryTokenCount: number;

  /**
   * @param addedTokens tokenizer.json `added_tokens`
   * @param hasNormalizer whether tokenizer.json has a non-null `normalizer` (tokens marked
   *   `normalized` are then matched after normalization, not on the raw text)
   */
  constructor(addedTokens: readonly AddedTokenSpec[], hasNormalizer: boolean) {
    let maxLen = 0;
    let boundaries = 0;
    for (const t of addedTokens) {
      const raw = !(t.normalized === true && hasNormalizer);
      if (!raw || t.content.length === 0) continue;
      const boundary = t.special === true && !t.lstrip && !t.rstrip && !t.single_word;
      let node = this.#root;
      for (let i = 0; i < t.content.length; i++) {
        const u = t.content.charCodeAt(i);
        if (node.next === null) node.next = new Map();
        let child = node.next.get(u);
        if (child === undefined) {
          child = newNode();
          node.next.set(u, child);
        }
        node = child;
      }
      node.id = t.id;
      node.boundary = boundary;
      this.#firstUnits[t.content.charCodeAt(0)] = 1;
      this.#contentById.set(t.id, t.content);
      if (boundary) boundaries++;
      if (t.content.length > maxLen) maxLen = t.content.length;
    }
    this.maxTokenLength = maxLen;
    this.boundaryTokenCount = boundaries;
    // the start every raw token shares ("<" for most chat tokenizers): scan jumps to it with indexOf
    this.#prefix = sharedPrefix(this.#contentById.values());
  }

  readonly #prefix: string;

  /**
   * Whether the scan's decision at position `i` of `text` (the longest raw token starting there,
   * or none) reads only characters before `limit`: the trie walk from `i` stops — on a character
   * no token continues with, or at a token with no longer one — without reading `text[limit]`.
   * Any text equal to `text` before `limit` then gets the same decision at `i`.
   */
  decidesBefore(text: string, i: number, limit: number): boolean {
    let node: TrieNode = this.#root;
    for (let j = i; ; j++) {
      const next = node.next;
      if (next === null) return true;
      if (j >= limit) return false;
      const child = next.get(text.charCodeAt(j));
      if (child === undefined) return true;
      node = child;
    }
  }

  /** Text of a raw added token by id (for the seam trick), or undefined. */
  contentOf(id: number): string | undefined {
    return this.#contentById.get(id);
  }

  /**
   * Boundary tokens in `text[from, to)`, found exactly as the tokenizer's raw splitter finds
   * them: scanning from `from`, the longest raw added token starting at each position is taken
   * and scanning resumes after it. `from` must be a position where the tokenizer's own scan is
   * not inside a token (0, or the end of a raw added token). Matches may not extend past `to`.
   * With `all`, every raw added token matched is returned, each with its `boundary` flag.
   */
  scan(text: string, from = 0, to: number = text.length, all = false): BoundaryMatch[] {
    const out: BoundaryMatch[] = [];
    const first = this.#firstUnits;
    const root = this.#root;
    const prefix = this.#prefix;
    let i = from;
    while (i < to) {
      if (prefix.length > 0) {
        const k = text.indexOf(prefix, i);
        if (k < 0 || k >= to) break;
        i = k;
      } else if (first[text.charCodeAt(i)] === 0) {
        i++;
        continue;
      }
      // longest raw token starting at i
      let node: TrieNode | undefined = root;
      let bestEnd = -1;
      let bestId = -1;
      let bestBoundary = false;
      let j = i;
      while (j < to && node.next !== null) {
        node = node.next.get(text.charCodeAt(j));
        if (node === undefined) break;
        j++;
        if (node.id >= 0) {
          bestEnd = j;
          bestId = node.id;
          bestBoundary = node.boundary;
        }
      }
      if (bestEnd < 0) {
        i++;
        continue;
      }
      if (all) out.push({ start: i, end: bestEnd, id: bestId, boundary: bestBoundary });
      else if (bestBoundary) out.push({ start: i, end: bestEnd, id: bestId });
      i = bestEnd;
    }
    return out;
  }
}
