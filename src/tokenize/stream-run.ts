/**
 * The open run of a streaming counter: the last word of its uncut tail while that tail ends in a
 * run of CJK ideographs, kana or Hangul syllables and grows by more of them, counted by the
 * appendable BPE (encoder/model/appendable-bpe.ts) instead of re-encoding the tail per append.
 *
 * The counter's tail tokens are then those of the tail before that word (fixed) followed by the
 * word's BPE. Why appending run characters only extends the word (src/tokenize/README.md,
 * "Streaming cut rules" and "Open runs", has the argument): for the split patterns with a cut
 * rule they are letters (Lo, or Lm for ー) without case, NFC/NFKC-stable starters that no
 * composition takes as its second character, and every pattern alternative that reads a letter
 * reads it in a letter loop whose match then ends at the end of the text; for the
 * SentencePiece-style pipelines they are no space and no "▁", which is all the normalizer, the
 * pre-tokenizer and the model's cuts at "▁" read. In both, no added token contains one.
 *
 * Layer: tokenize.
 */
import { AppendableBpe, AppendableIndex, appendableReason } from "../encoder/model/appendable-bpe.js";
import { BpeModel } from "../encoder/model/bpe.js";
import { Pipeline } from "../encoder/pipeline.js";
import { U32List } from "./encoder.js";

/** What a tokenizer's counters need to keep an open run. */
export interface AppendableRule {
  readonly pipeline: Pipeline;
  /** The run class of a unit: 0 when it never extends a run, else the class of run it extends. */
  classOf(u: number): number;
  /** The model's appendable index (built on first use). */
  index(): AppendableIndex;
}

/**
 * Run characters: CJK ideographs U+4E00–U+9FA5 (the range of DeepSeek-V3's CJK split), hiragana
 * U+3041–U+3096, katakana U+30A1–U+30FA and ー U+30FC, Hangul syllables U+AC00–U+D7A3. DeepSeek-V3
 * isolates runs of the first three (its CJK split) from Hangul: two classes there, one elsewhere.
 */
function runClass(u: number, deepseek: boolean): number {
  if ((u >= 0x4e00 && u <= 0x9fa5) || (u >= 0x3041 && u <= 0x3096) || (u >= 0x30a1 && u <= 0x30fa) || u === 0x30fc) return 1;
  if (u >= 0xac00 && u <= 0xd7a3) return deepseek ? 2 : 1;
  return 0;
}

/**
 * Whether a unit is a run character (any class): the letters cut rule 1 also cuts after
 * (src/tokenize/README.md, "Streaming cut rules").
 */
export const isRunCharacter = (u: number): boolean => runClass(u, false) !== 0;

/**
 * The appendable rule of a tokenizer with a regex cut rule (byte-level BPE) or the SentencePiece
 * rule (character-level BPE), or the reason it has none. `added`: the added tokens' contents
 * (none may hold a run character, as matched or normalized).
 */
export function appendableRuleFor(enc: Pipeline, deepseek: boolean, added: readonly string[]): AppendableRule | string {
  const model = enc.model;
  if (!(model instanceof BpeModel)) return "the model is not BPE";
  const why = appendableReason(model);
  if (why !== "") return why;
  for (const c of added) {
    for (const form of [c, c.normalize("NFKC")]) {
      for (let i = 0; i < form.length; i++) if (runClass(form.charCodeAt(i), deepseek) !== 0) return "an added token holds a CJK, kana or Hangul character";
    }
  }
  let index: AppendableIndex | null = null;
  const rule: AppendableRule = {
    pipeline: enc,
    classOf: (u) => runClass(u, deepseek),
    index: () => (index ??= new AppendableIndex(model)),
  };
  return rule;
}

/** Shortest uncut tail (UTF-16 units) for which a counter opens a run: shorter ones re-encode cheaply. */
export const OPEN_RUN_MIN_TAIL = 24;

/** The class shared by every unit of s, or 0. */
export function classOfAll(rule: AppendableRule, s: string): number {
  if (s.length === 0) return 0;
  const k = rule.classOf(s.charCodeAt(0));
  for (let i = 1; i < s.length && k !== 0; i++) if (rule.classOf(s.charCodeAt(i)) !== k) return 0;
  return k;
}

/** The tail's last pre-token as an appendable word, and the tail's tokens before it. */
export class OpenRun {
  readonly cls: number;
  readonly #beforeCount: number;
  readonly #beforeIds: readonly number[] | null;
  readonly #word: AppendableBpe;
  readonly #scratch = new Uint8Array(96);

  private constructor(cls: number, beforeCount: number, beforeIds: readonly number[] | null, word: AppendableBpe) {
    this.cls = cls;
    this.#beforeCount = beforeCount;
    this.#beforeIds = beforeIds;
    this.#word = word;
  }

  /**
   * Opens the run of `text` (the anchor then the tail, ending in run characters of class `cls`),
   * `skip` being the anchor's own token count. "skip" when the encode does not end with the model
   * reading a word that ends the text after the anchor's tokens (then nothing is kept);
   * "mismatch" when the appendable BPE disagrees with the encode on that word, ids and all (never
   * expected: the caller counts it).
   */
  static open(rule: AppendableRule, text: string, skip: number, cls: number, ids: boolean): OpenRun | "skip" | "mismatch" {
    const pipe = rule.pipeline;
    const model = pipe.model as BpeModel;
    const out = new U32List(256);
    const last = pipe.lastPiece;
    last.after = -1;
    pipe.encodeInto(text, out);
    if (last.after !== out.length || last.end !== last.text.length || last.end <= last.start) return "skip";
    if (rule.classOf(last.text.charCodeAt(last.end - 1)) !== cls) return "skip";
    // the last word the model merged: the pre-token, or (character-level) its part after the last cut at "▁"
    const ws = model.lastWordStart;
    const at = model.lastWordAt;
    if (ws < last.start || ws >= last.end || at < skip || at < last.before || at > last.after) return "skip";
    const piece = new TextEncoder().encode(last.text.slice(ws, last.end));
    const word = new AppendableBpe(rule.index());
    const pushed = word.push(piece, 0, piece.length);
    if (pushed !== "ok") return "mismatch";
    const got: number[] = [];
    word.ids(got);
    if (got.length !== last.after - at) return "mismatch";
    for (let i = 0; i < got.length; i++) if (got[i] !== out.data[at + i]) return "mismatch";
    const before = ids ? Array.from(out.data.subarray(skip, at)) : null;
    return new OpenRun(cls, at - skip, before, word);
  }

  /** Appends `s` (every unit of this run's class, so three UTF-8 bytes each); not "ok": the run is unusable. */
  append(s: string): "ok" | "none" {
    let b = this.#scratch;
    if (b.length < s.length * 3) b = new Uint8Array(s.length * 3);
    let n = 0;
    for (let i = 0; i < s.length; i++) {
      const u = s.charCodeAt(i);
      b[n++] = 0xe0 | (u >> 12);
      b[n++] = 0x80 | ((u >> 6) & 0x3f);
      b[n++] = 0x80 | (u & 0x3f);
    }
    return this.#word.push(b, 0, n);
  }

  /** Tokens of the tail (after the anchor). */
  count(): number {
    return this.#beforeCount + this.#word.count();
  }

  /** Ids of the tail (only for a run opened with ids). */
  ids(): number[] {
    const out = this.#beforeIds === null ? [] : [...this.#beforeIds];
    this.#word.ids(out);
    return out;
  }

  /** Suffix lookups and compatibility checks of the word so far. */
  get steps(): number {
    return this.#word.steps;
  }
}
