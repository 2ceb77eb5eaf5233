/**
 * Where SentencePiece-style BPE can be cut: the units that may precede "▁" inside a token, and
 * a BPE stand-in that merges each side of every other "u▁" apart.
 *
 * In a BPE model whose words carry spaces as "▁" (Llama 2, Gemma, Gemini: a whole section between
 * added tokens is one word), a merge joins two adjacent symbols into one vocabulary string. If no
 * vocabulary token and no merge result contains the pair "u▁", no merge ever joins a symbol
 * ending in u with one starting with "▁": the two sides of every such position evolve apart,
 * each in its own rank order (the library's tie-break by position keeps the same order within a
 * side), and the word's tokens are the tokens of each side in turn. So the BPE of a word is the
 * concatenation of the BPE of its pieces cut there, which turns one BPE over a whole section
 * (O(n log n) with a large constant, and never memoized past 256 units) into a BPE per word,
 * memoized. The streaming counter's SentencePiece cut rule rests on the same argument
 * (src/tokenize/README.md, "Streaming cut rules"); the tokenizer tuning installs the stand-in only behind its
 * probe (src/tokenize/README.md, "Tuning").
 *
 * Layer: tokenize.
 */

export const SPACE_MARK = 0x2581; // "▁"

type Json = Record<string, unknown>;

/**
 * UTF-16 units that precede "▁" inside some vocabulary token or merge result of a runtime BPE
 * model of @huggingface/tokenizers (`tokens_to_ids`, `merges` or `bpe_ranks`); null when the
 * tables are not there.
 */
export function spaceMarkPredecessors(model: Json | undefined): ReadonlySet<number> | null {
  if (model === undefined) return null;
  let known = PREDECESSORS.get(model);
  if (known === undefined) {
    known = scanPredecessors(model);
    PREDECESSORS.set(model, known);
  }
  return known;
}

/** Per model object: its tables do not change once loaded (a scan of Gemma 3's takes ~180 ms). */
const PREDECESSORS = new WeakMap<object, Set<number> | null>();

function scanPredecessors(model: Json): Set<number> | null {
  const vocab = model.tokens_to_ids;
  const ranks = model.bpe_ranks;
  if (!(vocab instanceof Map) || !(ranks instanceof Map)) return null;
  const out = new Set<number>();
  const scan = (s: string): void => {
    for (let i = s.indexOf("▁", 1); i > 0; i = s.indexOf("▁", i + 1)) out.add(s.charCodeAt(i - 1));
  };
  for (const k of vocab.keys()) if (typeof k === "string") scan(k);
  const merges = model.merges;
  if (Array.isArray(merges) && merges.length === ranks.size && merges.every((m) => Array.isArray(m) && typeof m[0] === "string" && typeof m[1] === "string")) {
    // a merge result a + b: "▁" inside a or b, or b starting with it after a's last unit
    for (const [a, b] of merges as Array<[string, string]>) {
      scan(a);
      scan(b);
      if (b.charCodeAt(0) === SPACE_MARK && a.length > 0) out.add(a.charCodeAt(a.length - 1));
    }
  } else {
    for (const k of ranks.keys()) {
      if (typeof k !== "string") return null;
      const pair = JSON.parse(k) as unknown;
      if (!Array.isArray(pair) || typeof pair[0] !== "string" || typeof pair[1] !== "string") return null;
      scan(pair[0] + pair[1]);
    }
  }
  return out;
}

/**
 * A `bpe(word)` that cuts the word before every "▁" whose preceding unit is not in `before` (and
 * is not "▁") and returns the concatenation of `original` over the pieces. `original` is called
 * with the same `this` (the model), so its memo serves the pieces. The arrays it returns are not
 * changed (they may be memoized).
 */
export function splitAtSpaceMarks(original: (word: string) => string[], before: ReadonlySet<number>): (word: string) => string[] {
  return function bpe(this: unknown, word: string): string[] {
    let start = 0;
    let out: string[] | null = null;
    for (let i = word.indexOf("▁", 1); i > 0; i = word.indexOf("▁", i + 1)) {
      const u = word.charCodeAt(i - 1);
      if (u === SPACE_MARK || before.has(u)) continue;
      const part = original.call(this, word.slice(start, i));
      if (out === null) out = part.slice();
      else for (const t of part) out.push(t);
      start = i;
    }
    if (out === null) return original.call(this, word);
    for (const t of original.call(this, word.slice(start))) out.push(t);
    return out;
  };
}
