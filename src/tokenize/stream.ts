/**
 * Counting a text that grows at its end (a streamed response), exactly, re-encoding only the
 * characters after the last safe cut.
 *
 * A cut is a position b of the text at which every continuation of `text[0, b+1)` is tokenized
 * as the tokens of `text[0, b)` alone followed by tokens that depend only on `text[b-1, ...)`.
 * Whether b is a cut is decided from the pair of UTF-16 units (text[b-1], text[b]) alone, by a
 * rule proven for each family of tokenizer pipelines (src/tokenize/README.md, "Streaming cut
 * rules", has the argument per family):
 *
 * - byte-level BPE behind a known split pattern (Qwen, Llama 3, GPT-4o / o200k, cl100k,
 *   DeepSeek-V3, GPT-2's): an ASCII letter or a run character (CJK ideograph, kana letter, Hangul
 *   syllable: stream-run.ts) followed by an ASCII character that
 *   is not a letter or an apostrophe, or by CJK / full-width punctuation (isWidePunct); and, for the patterns that try `\s*[\r\n]+` before
 *   `\s+(?!\S)`, a newline followed by an ASCII letter or CJK ideograph;
 * - SentencePiece-style BPE over whole pieces (Llama 2, Gemma, Gemini: spaces replaced by "▁",
 *   no pre-tokenizer): a space after a unit no vocabulary token or merge places before a "▁"
 *   and no added token ends with.
 *
 * No cut is ever taken inside an added token: pairs of units adjacent in any added token's
 * content are excluded. A tokenizer whose pipeline is not one of these (another normalizer,
 * pre-tokenizer, model or added-token flags) gets no rule: its counter re-encodes the whole
 * text on every append ("whole" mode), exact and slow, reported in stats and warned once.
 *
 * The counter keeps the committed prefix `text[0, c)` as a token count (and ids when asked)
 * and counts, per append, the text from c cut at every cut in it into pieces: up to the newest
 * cut (committed) and after it (the tail). A piece that starts at a cut is counted behind its
 * anchor, the unit just before the cut, whose own count is subtracted, so start-of-text effects
 * (SentencePiece's prepended "▁") see the context they see in the whole text. Pieces seen
 * before are answered by the tokenizer's piece memo (PieceMemo); the rest are encoded.
 *
 * An uncut tail ending in CJK ideographs, kana or Hangul that grows by more of them only grows
 * its last word (the last pre-token; for the SentencePiece rule, the section's part after its
 * last cut at "▁"): the counter keeps that word as an open run (stream-run.ts, an appendable BPE)
 * and counts such appends without encoding; any other append drops the run.
 *
 * Layer: tokenize.
 */
import { Pipeline } from "../encoder/pipeline.js";
import { DeltatokError } from "../errors.js";
import { U32List, type EncoderSource, type TokenEncoder } from "./encoder.js";
import { appendableRuleFor, classOfAll, isRunCharacter, OPEN_RUN_MIN_TAIL, OpenRun, type AppendableRule } from "./stream-run.js";

const SPACE_MARK = 0x2581; // "▁"

/** How a tokenizer's stream is cut. */
export interface StreamRule {
  /** "regex" and "sentencepiece" have a proven cut rule; "whole" re-encodes everything. */
  readonly mode: "regex" | "sentencepiece" | "whole";
  /** Why the mode is "whole" (the first unrecognized part of the pipeline); "" otherwise. */
  readonly reason: string;
  /** Whether a cut lies between units `prev` and `next`. */
  isCut(prev: number, next: number): boolean;
  /**
   * Byte-level tokenizers only: the ids of a text and how many UTF-8 bytes of input each stands
   * for, so one encode can be split at a cut (see TextStream#recount). Null when not available.
   */
  readonly split: TokenSplitter | null;
  /** Tokens of pieces between cuts seen before, behind their anchors (null in "whole" mode). */
  readonly memo: PieceMemo | null;
  /**
   * How a counter keeps an uncut tail ending in a run of CJK, kana or Hangul characters as an open
   * run (stream-run.ts), or null with `appendableReason` saying why the tokenizer has none.
   */
  readonly appendable: AppendableRule | null;
  readonly appendableReason: string;
}

/** Pieces this long or longer (anchor excluded) are not memoized. */
const PIECE_KEY_MAX = 32;
/** Slots of a tokenizer's piece memo (a power of two). */
const PIECE_MEMO_SLOTS = 1 << 16;

/**
 * The tokens of pieces of text between two cuts, each keyed by its anchor (the code point before
 * the first cut) followed by the piece: |tokens(anchor + piece)| - |tokens(anchor)|, a pure
 * function of the tokenizer and the key, shared by every counter of the tokenizer (one
 * thread's). A direct-mapped table: a key's hash picks its one slot, a new key takes the slot
 * over; a lookup hashes and compares the text in place, without making a string. An entry holds
 * the count and, when an ids counter put it, the ids. Bounded: PIECE_MEMO_SLOTS keys of at most
 * PIECE_KEY_MAX + 1 units, each a copy of its characters (never a view pinning a caller's text),
 * about 6 MB when full.
 */
export class PieceMemo {
  readonly #keys = new Array<string | undefined>(PIECE_MEMO_SLOTS).fill(undefined);
  readonly #pieces = new Array<Piece | undefined>(PIECE_MEMO_SLOTS).fill(undefined);

  /** The piece stored for the key text[from, to) (with ids when `ids`), or null. */
  get(w: string, from: number, to: number, ids: boolean): Piece | null {
    const slot = slotOf(w, from, to);
    const k = this.#keys[slot];
    if (k === undefined || k.length !== to - from) return null;
    for (let i = 0; i < k.length; i++) if (k.charCodeAt(i) !== w.charCodeAt(from + i)) return null;
    const p = this.#pieces[slot] as Piece;
    return ids && p.ids === null ? null : p;
  }

  put(w: string, from: number, to: number, p: Piece): void {
    const slot = slotOf(w, from, to);
    const key = w.slice(from, to);
    // V8 copies substrings shorter than 13 units and makes longer ones views of their parent: a
    // concatenation, flattened by the slice, is a fresh string of the key's own characters
    this.#keys[slot] = key.length < 13 ? key : (" " + key).slice(1);
    this.#pieces[slot] = p;
  }
}

/** The memo slot of text[from, to): FNV-1a over its UTF-16 units. */
function slotOf(w: string, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ w.charCodeAt(i), 0x01000193);
  return (h ^ (h >>> 16)) & (PIECE_MEMO_SLOTS - 1);
}

/** Ids of a byte-level tokenizer's encode, with the input bytes each covers. */
export interface TokenSplitter {
  ids(text: string): U32List;
  /** UTF-8 bytes of input the token `id` stands for; -1 when that is ambiguous. */
  bytesOf(id: number): number;
  /**
   * The tokenizer's normalizer form (NFC / NFKC), or null when it has none. With a form, the text
   * before a cut is split this way only when that form leaves it unchanged (ASCII always is).
   */
  readonly normalForm: "NFC" | "NFKC" | null;
}

// The split patterns the regex rule is proven for, exactly as tokenizer.json spells them.
const QWEN2 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const CL100K = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const O200K =
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|" +
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|" +
  "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const DEEPSEEK_DIGITS = "\\p{N}{1,3}";
const DEEPSEEK_CJK = "[一-龥぀-ゟ゠-ヿ]+";
const DEEPSEEK_MAIN =
  "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";
/** ByteLevel's own pattern when `use_regex` is true (GPT-2's). */
const GPT2 = "gpt2";

/** Pattern sequences (Split patterns in order, then ByteLevel's own when it splits) with a proof. */
const KNOWN_SPLITS: ReadonlyArray<{ patterns: readonly string[]; newlineRule: boolean }> = [
  { patterns: [QWEN2], newlineRule: true },
  { patterns: [CL100K], newlineRule: true },
  { patterns: [O200K], newlineRule: true },
  { patterns: [DEEPSEEK_DIGITS, DEEPSEEK_CJK, DEEPSEEK_MAIN], newlineRule: true },
  // no `\s*[\r\n]+` alternative: `\s+(?!\S)` reads past a newline run, so only the letter rule
  { patterns: [GPT2], newlineRule: false },
];


type Json = Record<string, unknown>;

const isAsciiLetter = (u: number): boolean => (u >= 0x41 && u <= 0x5a) || (u >= 0x61 && u <= 0x7a);
/** CJK Unified Ideographs as far as DeepSeek-V3's CJK split reaches (一-龥): letters, NFC/NFKC-stable, never composed. */
const isCjk = (u: number): boolean => u >= 0x4e00 && u <= 0x9fa5;
/** ASCII, not a letter, not an apostrophe (which starts a contraction suffix). */
const isAsciiBreak = (u: number): boolean => u < 0x80 && !isAsciiLetter(u) && u !== 0x27;
/**
 * CJK and full-width punctuation (、。〃, the CJK brackets, the full-width ASCII punctuation but
 * the apostrophe ＇, which NFKC turns into "'", and the half-width ｟｠｡｢｣､): general category P or
 * S, no letter, digit, mark or space, outside DeepSeek-V3's CJK split ranges, and a starter that
 * no composition joins to what precedes it — after a letter it ends the letter run exactly as an
 * ASCII punctuation mark does (Chinese and Japanese text has few ASCII cuts).
 */
const isWidePunct = (u: number): boolean =>
  (u >= 0x3001 && u <= 0x3003) ||
  (u >= 0x3008 && u <= 0x3011) ||
  (u >= 0x3014 && u <= 0x301f) ||
  (u >= 0xff01 && u <= 0xff0f && u !== 0xff07) ||
  (u >= 0xff1a && u <= 0xff20) ||
  (u >= 0xff3b && u <= 0xff40) ||
  (u >= 0xff5b && u <= 0xff64);

function whole(reason: string): StreamRule {
  return { mode: "whole", reason, isCut: () => false, split: null, memo: null, appendable: null, appendableReason: "no cut rule" };
}

/** UTF-8 length of s[from, to). */
const utf8LengthOf = (s: string, from: number, to: number): number => {
  let n = 0;
  for (let i = from; i < to; i++) {
    const u = s.charCodeAt(i);
    if (u < 0x80) n += 1;
    else if (u < 0x800) n += 2;
    else if (u >= 0xd800 && u <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
};

/** The byte-level splitter of deltatok's encoder: one encode's ids and the input bytes of each. */
function byteLevelSplitter(enc: Pipeline, normalForm: "NFC" | "NFKC" | null): TokenSplitter {
  const out = new U32List(256);
  return {
    ids: (text) => {
      out.clear();
      enc.encodeInto(text, out);
      return out;
    },
    bytesOf: (id) => enc.inputBytesOf(id),
    normalForm,
  };
}

/** Pairs of units adjacent in an added token's content, as prev * 65536 + next. */
function addedPairs(added: readonly Json[]): Set<number> {
  const pairs = new Set<number>();
  for (const t of added) {
    const c = typeof t.content === "string" ? t.content : "";
    for (let i = 1; i < c.length; i++) pairs.add(c.charCodeAt(i - 1) * 65536 + c.charCodeAt(i));
  }
  return pairs;
}

/** Split patterns (and ByteLevel's own) in pipeline order, or a reason they are not plain. */
function splitPatterns(pre: Json | null): string[] | string {
  if (pre === null) return "no pre-tokenizer";
  const parts = pre.type === "Sequence" && Array.isArray(pre.pretokenizers) ? (pre.pretokenizers as Json[]) : [pre];
  const out: string[] = [];
  let byteLevel = false;
  for (const p of parts) {
    if (p.type === "Split") {
      const pat = p.pattern as Json | undefined;
      const isolatedOrKept = (p.behavior === "Isolated" && p.invert === false) || (p.behavior === "Removed" && p.invert === true);
      if (byteLevel || typeof pat?.Regex !== "string" || !isolatedOrKept) return "a Split pre-tokenizer of another shape";
      out.push(pat.Regex);
    } else if (p.type === "ByteLevel") {
      if (byteLevel || p.add_prefix_space === true) return "a ByteLevel pre-tokenizer that adds a prefix space";
      byteLevel = true;
      if (p.use_regex !== false) out.push(GPT2);
    } else return `pre-tokenizer ${String(p.type)}`;
  }
  return byteLevel ? out : "no ByteLevel pre-tokenizer";
}

const sameList = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/** The SentencePiece normalizer shapes: Replace " " → "▁", optionally after Prepend "▁". */
function isSpaceMarkNormalizer(n: Json | null): boolean {
  if (n === null) return false;
  const isReplace = (x: Json) => x.type === "Replace" && (x.pattern as Json | undefined)?.String === " " && x.content === "▁";
  if (isReplace(n)) return true;
  if (n.type !== "Sequence" || !Array.isArray(n.normalizers)) return false;
  const parts = n.normalizers as Json[];
  return parts.length === 2 && parts[0]?.type === "Prepend" && parts[0]?.prepend === "▁" && isReplace(parts[1] as Json);
}

/**
 * transformers' conversion of a SentencePiece model (no normalizer): Metaspace "▁" without
 * splitting, its dummy prefix at every section (`always`), at the text's start only (`first`) or
 * never. Each section is then one BPE word over the text with spaces as "▁", as under the
 * normalizer shapes above.
 */
function isWordMetaspace(p: Json | null): boolean {
  if (p === null || p.type !== "Metaspace" || p.replacement !== "▁" || p.split !== false) return false;
  return p.prepend_scheme === "always" || p.prepend_scheme === "first" || p.prepend_scheme === "never";
}

const RULES = new WeakMap<object, StreamRule>();

/** The cut rule of a loaded tokenizer (computed once per tokenizer object). */
export function streamRuleFor(source: EncoderSource): StreamRule {
  let rule = RULES.get(source.tokenizer);
  if (rule === undefined) {
    rule = deriveRule(source);
    RULES.set(source.tokenizer, rule);
  }
  return rule;
}

function deriveRule(source: EncoderSource): StreamRule {
  const json = source.tokenizerJson as unknown as Json;
  const enc = source.tokenizer;
  if (!(enc instanceof Pipeline)) return whole("the tokenizer runs on the library fallback");
  // Kimi's cuts fall where a run of white space or of other characters passes 25,000 characters,
  // and at every 400,000: the text after a cut does not restart them where the whole text does
  if ((json.extensions as Json | undefined)?.sectionCuts !== undefined) return whole("the loader cuts long texts by run length (Kimi)");
  const added = (json.added_tokens as Json[] | undefined) ?? [];
  if (added.some((t) => t.lstrip === true || t.rstrip === true || t.single_word === true)) return whole("an added token strips or matches single words");
  const model = json.model as Json;
  if (model.type !== "BPE") return whole(`model ${String(model.type)}`);
  if ((model.dropout !== null && model.dropout !== undefined) || model.continuing_subword_prefix || model.end_of_word_suffix) {
    return whole("a BPE model with dropout or subword affixes");
  }
  const normalizer = (json.normalizer as Json | null | undefined) ?? null;
  const identity = normalizer === null || (normalizer.type === "Sequence" && Array.isArray(normalizer.normalizers) && normalizer.normalizers.length === 0);
  if (added.some((t) => t.normalized === true) && !identity && !isSpaceMarkNormalizer(normalizer)) {
    return whole("an added token is matched after a normalizer");
  }
  const pairs = addedPairs(added);
  const pre = (json.pre_tokenizer as Json | null | undefined) ?? null;

  const metaspace = normalizer === null && isWordMetaspace(pre);
  if (isSpaceMarkNormalizer(normalizer) || metaspace) {
    // no pre-tokenizer, or Gemma's Split on " ", a no-op once every space is "▁"; or no
    // normalizer and the Metaspace doing the same (its dummy prefix at a section's or the text's
    // start: a cut's anchor restarts the text, and the split below holds with or without "▁" in
    // front of the anchor)
    const preOk =
      metaspace ||
      pre === null ||
      (pre.type === "Split" && (pre.pattern as Json | undefined)?.String === " " && pre.behavior === "MergedWithPrevious" && pre.invert === false);
    if (!preOk) return whole("a pre-tokenizer after the SentencePiece normalizer");
    if (!metaspace && added.some((t) => t.normalized === true)) return whole("an added token is matched after the SentencePiece normalizer");
    const table = enc.model.tables.spacePredecessors;
    if (table === null) return whole("the BPE model merges byte-fallback pieces");
    const before = new Set<number>();
    for (let u = 0; u < table.length; u++) if (table[u] === 1) before.add(u);
    // A piece after an added token starts a new section (Llama 2's Prepend "▁" applies there):
    // never cut right after a unit an added token can end with, so the anchor is never one.
    for (const t of added) {
      const c = typeof t.content === "string" ? t.content : "";
      if (c.length > 0) before.add(c.charCodeAt(c.length - 1));
    }
    // run characters are no space and no "▁": appending them only grows the section's last word
    const run = appendableRuleFor(enc, false, added.map((t) => (typeof t.content === "string" ? t.content : "")));
    return {
      mode: "sentencepiece",
      reason: "",
      split: null,
      isCut: (prev, next) => next === 0x20 && prev !== 0x20 && prev !== SPACE_MARK && !before.has(prev) && !pairs.has(prev * 65536 + next),
      memo: new PieceMemo(),
      appendable: typeof run === "string" ? null : run,
      appendableReason: typeof run === "string" ? run : "",
    };
  }

  if (!identity && normalizer.type !== "NFC" && normalizer.type !== "NFKC") return whole(`normalizer ${String(normalizer.type)}`);
  const splits = splitPatterns(pre);
  if (typeof splits === "string") return whole(splits);
  const known = KNOWN_SPLITS.find((k) => sameList(k.patterns, splits));
  if (known === undefined) return whole("a split pattern without a proven cut rule");
  const newline = known.newlineRule;
  const run = enc.byteLevel
    ? appendableRuleFor(enc, known.patterns.length === 3, added.map((t) => (typeof t.content === "string" ? t.content : "")))
    : "not a byte-level tokenizer";
  return {
    mode: "regex",
    reason: "",
    split: enc.byteLevel ? byteLevelSplitter(enc, identity ? null : (normalizer.type as "NFC" | "NFKC")) : null,
    isCut: (prev, next) => {
      const cut = ((isAsciiLetter(prev) || isRunCharacter(prev)) && (isAsciiBreak(next) || isWidePunct(next))) || (newline && prev === 0x0a && (isAsciiLetter(next) || isCjk(next)));
      return cut && !pairs.has(prev * 65536 + next);
    },
    memo: new PieceMemo(),
    appendable: typeof run === "string" ? null : run,
    appendableReason: typeof run === "string" ? run : "",
  };
}

/** Limits of one counter. */
export interface StreamLimits {
  /** Most characters a counter may hold (the library's maxPromptChars). */
  maxChars: number;
  /**
   * Most characters re-encoded after the last cut: an append that would leave a longer uncut
   * tail fails DT_STREAM_LOOKBACK and leaves the counter as it was.
   */
  maxLookBack: number;
  /** Keep token ids (committed and tail). */
  ids: boolean;
}

/** Work and state of one counter. */
export interface TextCounterStats {
  mode: StreamRule["mode"];
  /** Why mode is "whole"; "" otherwise. */
  reason: string;
  appends: number;
  /** Characters handed to the tokenizer in total (anchors included). */
  charsEncoded: number;
  /** Characters handed to the tokenizer by the last append / the largest number by any append. */
  lastCharsEncoded: number;
  maxCharsEncoded: number;
  /** The largest look-back of an append: characters it encoded beyond those it appended. */
  maxLookBack: number;
  /** Characters and tokens of the committed prefix. */
  committedChars: number;
  committedTokens: number;
  /** Characters after the last cut (re-encoded by the next append). */
  tailChars: number;
  /** Times the counter was rewound (message counters). */
  rewinds: number;
  /** Appends answered by one encode split at the cut (byte-level tokenizers) instead of two. */
  splitEncodes: number;
  /** Appends that found a new cut and encoded the text before and after it apart (two encodes). */
  pieceEncodes: number;
  /** Pieces between cuts answered by the tokenizer's piece memo (not encoded). */
  memoPieces: number;
  /** Why the counter keeps no open run (the tokenizer has no appendable BPE); "" when it keeps them. */
  appendableReason: string;
  /** Appends answered by the open run's appendable BPE (no encode). */
  runAppends: number;
  /** Suffix lookups and compatibility checks the open runs made (their work). */
  runSteps: number;
  /** Runs not opened because the appendable BPE disagreed with the encode (never expected). */
  runMismatches: number;
}

/** Tokens of one piece: their number, and their ids when the counter keeps ids (never mutated: memos share them). */
interface Piece {
  readonly count: number;
  readonly ids: readonly number[] | null;
}

/** The tokens of a piece whose tokens were counted with the piece before it. */
const EMPTY: Piece = { count: 0, ids: [] };

/** Characters at the end of the text a counter keeps in its tail (beyond its last checkpoint's anchor). */
const TAIL_RETAIN = 512;

const isLowSurrogate = (u: number): boolean => u >= 0xdc00 && u <= 0xdfff;

/** Where the anchor of a cut at `from` starts (`w` holds the text from `wBase`): the code point before it. */
function anchorStart(w: string, from: number, wBase: number): number {
  if (from === 0) return 0;
  const low = w.charCodeAt(from - 1 - wBase);
  return from - 2 >= wBase && low >= 0xdc00 && low <= 0xdfff ? from - 2 : from - 1;
}

/** A streaming text counter (see the file header). */
export class TextStream {
  readonly #enc: TokenEncoder;
  readonly #rule: StreamRule;
  readonly #limits: StreamLimits;
  /**
   * The text is `#head + #tail`; `#tail` starts at `#base`, at or before the anchor of the last
   * checkpoint and about TAIL_RETAIN characters from the end, so an append, and a rewind near the
   * end, reads and copies only the tail (the head is never flattened by them).
   */
  #head = "";
  #tail = "";
  /** The text's last unit (-1: none), read without flattening a tail grown by concatenation. */
  #lastUnit = -1;
  #base = 0;
  /** A high surrogate held back from the end of the last chunk. */
  #pending = "";
  #finished = false;
  /** Checkpoints: committed offsets (ascending, first is 0) and the tokens before each. */
  #cutAt = new U32List(16);
  #cutTokens = new U32List(16);
  #committedIds: U32List | null;
  /** The tail's ids; null while the open run holds them. */
  #tailIds: readonly number[] | null = [];
  /** The open run at the end of the tail, or null. */
  #run: OpenRun | null = null;
  /** The open run's steps already added to the stats. */
  #runStepsSeen = 0;
  /** The checkpoint whose tail a run failed on (no run is opened again before a new cut), or -1. */
  #runFailedAt = -1;
  /** Scratch: the cuts of the text an append counts. */
  readonly #bounds: number[] = [];
  #tailCount = 0;
  readonly #anchorCounts = new Map<string, number>();
  #stats: TextCounterStats;

  constructor(encoder: TokenEncoder, rule: StreamRule, limits: StreamLimits) {
    this.#enc = encoder;
    this.#rule = rule;
    this.#limits = limits;
    this.#committedIds = limits.ids ? new U32List(256) : null;
    this.#cutAt.push(0);
    this.#cutTokens.push(0);
    this.#stats = {
      mode: rule.mode,
      reason: rule.reason,
      appends: 0,
      charsEncoded: 0,
      lastCharsEncoded: 0,
      maxCharsEncoded: 0,
      maxLookBack: 0,
      committedChars: 0,
      committedTokens: 0,
      tailChars: 0,
      rewinds: 0,
      splitEncodes: 0,
      pieceEncodes: 0,
      memoPieces: 0,
      appendableReason: rule.appendableReason,
      runAppends: 0,
      runSteps: 0,
      runMismatches: 0,
    };
  }

  /** Exact token count of everything appended so far (a held-back high surrogate excluded). */
  get count(): number {
    return this.#committed() + this.#tailCount;
  }

  /** Characters counted so far (UTF-16 units, a held-back high surrogate excluded). */
  get length(): number {
    return this.#base + this.#tail.length;
  }

  get finished(): boolean {
    return this.#finished;
  }

  /** The text counted so far. */
  get text(): string {
    return this.#head + this.#tail;
  }

  /** Appends `chunk`; returns the exact count of everything appended so far. */
  append(chunk: unknown): number {
    if (this.#finished) throw new DeltatokError("DT_STREAM_FINISHED", "the counter is finished; reset() it to count another text");
    if (typeof chunk !== "string") throw new DeltatokError("DT_INVALID_REQUEST", `chunk must be a string, got ${chunk === null ? "null" : typeof chunk}`, { path: "chunk" });
    let s = this.#pending + chunk;
    let pending = "";
    const last = s.charCodeAt(s.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      pending = s.slice(-1);
      s = s.slice(0, -1);
    }
    if (!s.isWellFormed()) throw new DeltatokError("DT_LONE_SURROGATE", "chunk contains a lone UTF-16 surrogate", { path: "chunk" });
    if (this.length + s.length + pending.length > this.#limits.maxChars) {
      throw new DeltatokError("DT_INPUT_TOO_LARGE", `streamed text is longer than ${this.#limits.maxChars} characters`, { path: "chunk" });
    }
    const app = this.#rule.appendable;
    // run characters after run characters of the same class: never a cut, only the open pre-token grows
    const cls = app !== null && this.#pending === "" && this.#tail.length > 0 ? classOfAll(app, s) : 0;
    const extends_ = cls !== 0 && app !== null && app.classOf(this.#lastUnit) === cls;
    if (extends_ && this.#run !== null && this.#run.cls === cls && this.#appendRun(s)) {
      this.#pending = pending;
      return this.count;
    }
    this.#recount(this.#head, this.#tail + s, this.#base, s.length);
    this.#pending = pending;
    if (extends_ && app !== null && this.length - this.#committedAt() >= OPEN_RUN_MIN_TAIL) this.#openRun(app, cls);
    return this.count;
  }

  /** Appends run characters to the open run; false (the counter unchanged) when the caller must recount. */
  #appendRun(s: string): boolean {
    const run = this.#run as OpenRun;
    const end = this.length + s.length;
    const tailChars = end - this.#committedAt();
    if (tailChars > this.#limits.maxLookBack) {
      throw new DeltatokError(
        "DT_STREAM_LOOKBACK",
        `the last ${tailChars} characters have no safe cut (more than maxLookBack ${this.#limits.maxLookBack}); count the text whole with countText`,
        { path: "chunk" },
      );
    }
    const pushed = run.append(s);
    if (pushed !== "ok") {
      // no compatible candidate (by the argument only a token spelled like another id): recount
      // the tail whole, say so, and open no run again before the next cut (the run, as it was,
      // still answers for the text so far should the recount fail)
      if (this.#tailIds === null) this.#tailIds = this.#limits.ids ? run.ids() : [];
      this.#run = null;
      this.#stats.runMismatches++;
      this.#runFailedAt = this.#committedAt();
      return false;
    }
    this.#tail += s;
    this.#lastUnit = s.charCodeAt(s.length - 1);
    this.#tailCount = run.count();
    this.#tailIds = null;
    const st = this.#stats;
    st.appends++;
    st.runAppends++;
    st.runSteps += run.steps - this.#runStepsSeen;
    this.#runStepsSeen = run.steps;
    st.charsEncoded += s.length;
    st.lastCharsEncoded = s.length;
    if (s.length > st.maxCharsEncoded) st.maxCharsEncoded = s.length;
    st.tailChars = tailChars;
    return true;
  }

  /** Opens a run over the tail's last pre-token (once per run: one more encode of the tail). */
  #openRun(app: AppendableRule, cls: number): void {
    const c = this.#committedAt();
    const a = c === 0 ? 0 : anchorStart(this.#tail, c, this.#base);
    const t = this.#tail.slice(a - this.#base);
    const skip = a < c ? this.#anchorCount(t.slice(0, c - a)) : 0;
    if (this.#runFailedAt === c) return;
    let run: OpenRun | "skip" | "mismatch";
    try {
      run = OpenRun.open(app, t, skip, cls, this.#limits.ids);
    } catch {
      // the same text was just encoded without error: not expected; the append stands, no run
      run = "mismatch";
    }
    if (run === "mismatch") this.#stats.runMismatches++;
    if (typeof run === "string") {
      if (run !== "skip") this.#runFailedAt = c;
      return;
    }
    if (run.count() !== this.#tailCount) {
      this.#stats.runMismatches++;
      this.#runFailedAt = c;
      return;
    }
    this.#run = run;
    this.#runStepsSeen = run.steps;
    this.#stats.runSteps += run.steps;
  }

  /** The final count; the counter takes no more text until reset. A held-back half pair fails DT_LONE_SURROGATE. */
  finish(): number {
    if (this.#pending !== "") throw new DeltatokError("DT_LONE_SURROGATE", "the text ends with a lone high surrogate", { path: "chunk" });
    this.#finished = true;
    return this.count;
  }

  /** Forgets the text: the counter counts a new one from nothing. */
  reset(): void {
    this.#head = "";
    this.#tail = "";
    this.#lastUnit = -1;
    this.#base = 0;
    this.#pending = "";
    this.#finished = false;
    this.#cutAt.length = 1;
    this.#cutTokens.length = 1;
    if (this.#committedIds !== null) this.#committedIds.length = 0;
    this.#tailIds = [];
    this.#run = null;
    this.#runFailedAt = -1;
    this.#tailCount = 0;
    this.#stats.committedChars = 0;
    this.#stats.committedTokens = 0;
    this.#stats.tailChars = 0;
  }

  /**
   * Replaces the text from `offset` on with `text` (a render that changed there), reusing the
   * checkpoints before `offset`; returns the new count. Offsets inside a surrogate pair move
   * back to its start.
   */
  replaceFrom(offset: number, text: string): number {
    if (this.#finished) throw new DeltatokError("DT_STREAM_FINISHED", "the counter is finished");
    const length = this.length;
    if (!Number.isInteger(offset) || offset < 0 || offset > length) {
      throw new DeltatokError("DT_INTERNAL", `replaceFrom offset ${offset} outside 0..${length}`);
    }
    let from = offset;
    // the units at and before `from` live in the tail unless the rewind reaches before it
    const unit = (i: number): number => (i >= this.#base ? this.#tail.charCodeAt(i - this.#base) : this.text.charCodeAt(i));
    const prev = from > 0 ? unit(from - 1) : 0;
    if (from > 0 && from < length && prev >= 0xd800 && prev <= 0xdbff) from--;
    if (from + text.length > this.#limits.maxChars) throw new DeltatokError("DT_INPUT_TOO_LARGE", `streamed text is longer than ${this.#limits.maxChars} characters`);
    // (text before `from` never ends with a high surrogate now: only a leading low one could pair wrongly)
    const first = text.charCodeAt(0);
    if (!text.isWellFormed() || (first >= 0xdc00 && first <= 0xdfff)) {
      throw new DeltatokError("DT_LONE_SURROGATE", "text contains a lone UTF-16 surrogate", { path: "text" });
    }
    // keep the checkpoints before `from`: a cut at b is decided by text[b-1] and text[b], both kept
    let keep = this.#cutAt.length;
    while (keep > 1 && (this.#cutAt.data[keep - 1] as number) >= from) keep--;
    const rewound = from < length;
    const kept = this.#cutAt.data[keep - 1] as number;
    // the anchor of the kept checkpoint starts one or two units before it (a surrogate pair)
    const wBase = kept === 0 ? 0 : kept - 2 >= 0 && isLowSurrogate(unit(kept - 1)) ? kept - 2 : kept - 1;
    if (wBase >= this.#base) {
      // within the tail: no copy of the text before it
      const t = this.#tail;
      this.#recount(this.#head + t.slice(0, wBase - this.#base), t.slice(wBase - this.#base, from - this.#base) + text, wBase, text.length, keep);
    } else {
      const full = this.text;
      this.#recount(full.slice(0, wBase), full.slice(wBase, from) + text, wBase, text.length, keep);
    }
    this.#pending = "";
    if (rewound) this.#stats.rewinds++;
    return this.count;
  }

  /** Committed token ids then the tail's (only when the counter keeps ids). */
  ids(): Uint32Array {
    if (this.#committedIds === null) throw new DeltatokError("DT_INVALID_OPTION", "this counter was opened without ids: true", { path: "ids" });
    const tail = this.#tailIds ?? (this.#run as OpenRun).ids();
    const out = new Uint32Array(this.#committedIds.length + tail.length);
    out.set(this.#committedIds.data.subarray(0, this.#committedIds.length));
    out.set(tail, this.#committedIds.length);
    return out;
  }

  stats(): TextCounterStats {
    return { ...this.#stats };
  }

  /**
   * The first *split* of `text` at or after `from` (and after its first unit), or its length: a
   * position b where the tokens of the text are those of text[0, b) alone followed by
   * `countBehind(anchor, text[b:])`'s, the anchor being the code point before b. A split is a cut
   * of the tokenizer's rule, or the start of a boundary token (special, no strip flags) that the
   * raw added-token scan of the whole text matches there, right after no other added token's match
   * (src/tokenize/README.md, "Splits of a render"). None in "whole" mode.
   *
   * The scan starts at `hint.safe` when that is a start of the raw scan of an earlier text equal to
   * this one before `hint.same` and at least the longest added token before it (no decision before
   * it reads a changed character), else at 0. `safe` in the answer is such a start for the next
   * call: about the longest added token before `from`, or the start of the match covering that.
   * `token`: the split is a boundary token's start (then `countBehind` of the rest is the same
   * whatever the anchor: the anchor is a section of its own).
   */
  splitAt(text: string, from: number, hint = { safe: 0, same: 0 }): { at: number; safe: number; token: boolean } {
    const end = text.length;
    if (this.#rule.mode === "whole") return { at: end, safe: 0, token: false };
    const scanner = this.#enc.scanner;
    const reach = scanner.maxTokenLength;
    const scanFrom = hint.safe > 0 && hint.safe + reach <= hint.same && hint.safe <= from ? hint.safe : 0;
    const want = Math.max(scanFrom, from - reach);
    let safe = want;
    let token = -1;
    let prevEnd = -1;
    for (const m of scanner.scan(text, scanFrom, end, true)) {
      if (m.start < want && m.end > want) safe = m.start;
      if (m.start >= from && m.start >= 1 && m.boundary === true && m.start !== prevEnd) {
        token = m.start;
        break;
      }
      prevEnd = m.end;
    }
    const stop = token < 0 ? end : token;
    for (let b = Math.max(from, 1); b < stop; b++) if (this.#rule.isCut(text.charCodeAt(b - 1), text.charCodeAt(b))) return { at: b, safe, token: false };
    return { at: stop, safe, token: token >= 0 };
  }

  /**
   * Tokens of `text` placed right after a cut whose anchor (the code point before it) is
   * `anchor`, as inside any whole text with that cut: the encode of anchor + text minus the
   * anchor's own tokens. The message counter counts a render's suffix with it.
   */
  countBehind(anchor: string, text: string): number {
    if (text.length === 0) return 0;
    return this.#enc.encodeWhole(anchor + text).length - (anchor.length > 0 ? this.#anchorCount(anchor) : 0);
  }

  #committed(): number {
    return this.#cutTokens.data[this.#cutTokens.length - 1] as number;
  }

  #committedAt(): number {
    return this.#cutAt.data[this.#cutAt.length - 1] as number;
  }

  /**
   * Makes `head + w` the counted text, `w` starting at offset `wBase` (at or before the anchor of
   * checkpoint `keep - 1`, which it extends); `fresh` characters of it are new. Atomic: throws
   * before any change.
   *
   * The text from the last checkpoint c to the end is cut at every cut in it into pieces; each
   * piece's tokens are those of its anchor + the piece minus the anchor's (the cut property,
   * applied at each cut in turn), so a piece seen before is answered by the tokenizer's piece memo
   * and only the span from the first unknown piece to the last is encoded: once, split at the cuts
   * inside it by the bytes each token stands for (byte-level tokenizers), or else as the committed
   * span and the tail apart.
   */
  #recount(head: string, w: string, wBase: number, fresh: number, keep = this.#cutAt.length): void {
    const c = this.#cutAt.data[keep - 1] as number;
    const base = this.#cutTokens.data[keep - 1] as number;
    const end = wBase + w.length;
    const bounds = this.#bounds;
    bounds.length = 0;
    bounds.push(c);
    if (this.#rule.mode !== "whole") {
      let prev = w.charCodeAt(c + 1 - 1 - wBase);
      for (let b = c + 1; b < end; b++) {
        const next = w.charCodeAt(b - wBase);
        if (this.#rule.isCut(prev, next)) bounds.push(b);
        prev = next;
      }
    }
    const n = bounds.length; // pieces: [bounds[i], bounds[i + 1]), the last one ending at `end`
    bounds.push(end);
    const cut = n > 1 ? (bounds[n - 1] as number) : -1;
    const tailFrom = cut < 0 ? c : cut;
    if (end - tailFrom > this.#limits.maxLookBack) {
      throw new DeltatokError(
        "DT_STREAM_LOOKBACK",
        `the last ${end - tailFrom} characters have no safe cut (more than maxLookBack ${this.#limits.maxLookBack}); count the text whole with countText`,
        { path: "chunk" },
      );
    }
    const pieces = new Array<Piece | null>(n).fill(null);
    const memo = this.#rule.memo;
    let first = -1;
    let last = -1;
    let fromMemo = 0;
    for (let i = 0; i < n; i++) {
      const a = bounds[i] as number;
      const b = bounds[i + 1] as number;
      const hit = memo !== null && a > 0 && b - a < PIECE_KEY_MAX ? memo.get(w, anchorStart(w, a, wBase) - wBase, b - wBase, this.#limits.ids) : null;
      if (hit !== null) {
        pieces[i] = hit;
        fromMemo++;
      } else {
        if (first < 0) first = i;
        last = i;
      }
    }
    let encoded = 0;
    if (first >= 0) {
      let split: Piece[] | null = null;
      if (first < last && this.#rule.split !== null) {
        split = this.#splitSpan(w, wBase, bounds, first, last);
        if (split !== null) {
          for (let i = first; i <= last; i++) pieces[i] = split[i - first] as Piece;
          const a = bounds[first] as number;
          encoded += (bounds[last + 1] as number) - anchorStart(w, a, wBase);
          this.#stats.splitEncodes++;
          for (let i = first; i <= last; i++) this.#remember(w, wBase, bounds[i] as number, bounds[i + 1] as number, pieces[i] as Piece);
        }
      }
      if (split === null) {
        // the committed span (first miss .. last committed miss) and the tail apart
        const lastCommitted = last === n - 1 ? n - 2 : last;
        if (first <= lastCommitted) {
          const a = bounds[first] as number;
          const b = bounds[lastCommitted + 1] as number;
          pieces[first] = this.#encodePiece(w, wBase, a, b);
          for (let i = first + 1; i <= lastCommitted; i++) pieces[i] = EMPTY;
          encoded += b - anchorStart(w, a, wBase);
          if (first === lastCommitted) this.#remember(w, wBase, a, b, pieces[first] as Piece);
          if (last === n - 1) this.#stats.pieceEncodes++;
        }
        if (last === n - 1) {
          const a = bounds[n - 1] as number;
          pieces[n - 1] = this.#encodePiece(w, wBase, a, end);
          encoded += end - anchorStart(w, a, wBase);
          this.#remember(w, wBase, a, end, pieces[n - 1] as Piece);
        }
      }
    }
    // commit (nothing above changed the counter)
    this.#cutAt.length = keep;
    this.#cutTokens.length = keep;
    const ids = this.#committedIds;
    if (ids !== null) ids.length = base;
    if (cut >= 0) {
      let count = 0;
      for (let i = 0; i < n - 1; i++) {
        const p = pieces[i] as Piece;
        count += p.count;
        if (ids !== null && p.ids !== null) ids.pushAll(p.ids);
      }
      this.#cutAt.push(cut);
      this.#cutTokens.push(base + count);
    }
    const tail = pieces[n - 1] as Piece;
    // the tail keeps the last TAIL_RETAIN characters or more (from a checkpoint's anchor), so a
    // rewind near the end (a message render whose suffix follows the new text) reads only the tail
    let k = this.#cutAt.length - 1;
    while (k > 0 && (this.#cutAt.data[k] as number) > end - TAIL_RETAIN) k--;
    const newBase = Math.max(wBase, anchorStart(w, this.#cutAt.data[k] as number, wBase));
    this.#head = newBase > wBase ? head + w.slice(0, newBase - wBase) : head;
    this.#tail = w.slice(newBase - wBase);
    this.#lastUnit = w.length > 0 ? w.charCodeAt(w.length - 1) : -1;
    this.#base = newBase;
    this.#tailIds = tail.ids ?? [];
    this.#tailCount = tail.count;
    this.#run = null;
    const st = this.#stats;
    st.appends++;
    st.memoPieces += fromMemo;
    st.charsEncoded += encoded;
    st.lastCharsEncoded = encoded;
    if (encoded > st.maxCharsEncoded) st.maxCharsEncoded = encoded;
    if (encoded - fresh > st.maxLookBack) st.maxLookBack = encoded - fresh;
    st.committedChars = this.#committedAt();
    st.committedTokens = this.#committed();
    st.tailChars = end - this.#committedAt();
  }

  /** Puts the tokens of piece text[a, b) (a > 0: behind its anchor) into the tokenizer's piece memo. */
  #remember(w: string, wBase: number, a: number, b: number, p: Piece): void {
    const memo = this.#rule.memo;
    if (memo === null || a === 0 || b - a >= PIECE_KEY_MAX) return;
    memo.put(w, anchorStart(w, a, wBase) - wBase, b - wBase, p);
  }

  /**
   * The tokens of pieces first..last (text[bounds[first], bounds[last + 1]) behind its anchor) from
   * one encode, split at each cut between them by the bytes each token stands for. Null (the
   * caller encodes apart) when the normalizer could change the bytes before the last inner cut
   * (non-ASCII text under NFC/NFKC), a token's byte count is ambiguous, or no token ends exactly
   * at a cut.
   */
  #splitSpan(w: string, wBase: number, bounds: readonly number[], first: number, last: number): Piece[] | null {
    const split = this.#rule.split as TokenSplitter;
    const from = bounds[first] as number;
    const start = anchorStart(w, from, wBase);
    // A cut is before an ASCII character or (after a newline) a CJK ideograph: starters that no
    // canonical or compatibility composition takes as its second character (the test "NFC and
    // NFKC never join a cut's characters…" checks every code point), so NFC / NFKC of the text is
    // that of each side, and the normalized text begins with the text before a cut exactly when
    // the form leaves that text unchanged. ASCII is unchanged by both forms: no normalize call.
    if (split.normalForm !== null) {
      const left = w.slice(start - wBase, (bounds[last] as number) - wBase);
      if (!/^[\x00-\x7f]*$/.test(left) && left.normalize(split.normalForm) !== left) return null;
    }
    let tokens: U32List;
    try {
      tokens = split.ids(w.slice(start - wBase, (bounds[last + 1] as number) - wBase));
    } catch (e) {
      throw new DeltatokError("DT_TOKENIZE_FAILED", `tokenizer failed: ${(e as Error)?.message ?? e}`, { cause: e });
    }
    // token index at each inner cut: where the tokens have covered exactly the bytes before it
    const at = new Array<number>(last - first + 2);
    at[0] = start < from ? this.#anchorCount(w.slice(start - wBase, from - wBase)) : 0;
    let target = 0;
    let bytes = 0;
    let i = 0;
    let pos = start;
    for (let j = first + 1; j <= last; j++) {
      const b = bounds[j] as number;
      target += utf8LengthOf(w, pos - wBase, b - wBase);
      pos = b;
      while (i < tokens.length && bytes < target) {
        const n = split.bytesOf(tokens.data[i] as number);
        if (n < 0) return null;
        bytes += n;
        i++;
      }
      if (bytes !== target) return null;
      at[j - first] = i;
    }
    at[last - first + 1] = tokens.length;
    if ((at[0] as number) > (at[1] as number)) return null;
    const out = new Array<Piece>(last - first + 1);
    for (let k = 0; k <= last - first; k++) {
      const a = at[k] as number;
      const b = at[k + 1] as number;
      if (!this.#limits.ids) out[k] = { count: b - a, ids: null };
      else {
        const ids = new Array<number>(b - a);
        for (let t = a; t < b; t++) ids[t - a] = tokens.data[t] as number;
        out[k] = { count: b - a, ids };
      }
    }
    return out;
  }

  /** Tokens of text[from, to) as they appear in the whole text, `from` being 0 or a cut (w holds text from wBase). */
  #encodePiece(w: string, wBase: number, from: number, to: number): Piece {
    if (to <= from) return { count: 0, ids: this.#limits.ids ? [] : null };
    // the anchor is the code point before the cut (two units when it is a surrogate pair)
    const start = anchorStart(w, from, wBase);
    const ids = this.#enc.encodeWhole(w.slice(start - wBase, to - wBase));
    const skip = start < from ? this.#anchorCount(w.slice(start - wBase, from - wBase)) : 0;
    return { count: ids.length - skip, ids: this.#limits.ids ? ids.slice(skip) : null };
  }

  #anchorCount(anchor: string): number {
    let n = this.#anchorCounts.get(anchor);
    if (n === undefined) {
      n = this.#enc.encodeWhole(anchor).length;
      if (this.#anchorCounts.size < 4096) this.#anchorCounts.set(anchor, n);
    }
    return n;
  }
}
