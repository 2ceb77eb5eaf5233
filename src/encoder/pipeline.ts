/**
 * deltatok's encoder: text → ids as the Rust crate's `Tokenizer::encode(text,
 * add_special_tokens=false)` answers, top to bottom in one place (the crate's
 * `encode_single_sequence`):
 *
 * 1. cut the text at the added tokens matched on the raw text (added-vocabulary.ts);
 * 2. normalize each section between them on its own (normalize/);
 * 3. cut each normalized section at the added tokens matched after normalization (first, for a
 *    format whose loader cuts long texts, at its cuts: each part goes on alone);
 * 4. pre-tokenize each remaining piece (pretokenize/stages.ts), depth first;
 * 5. run the model on each pre-token (model/bpe.ts, or model/unigram-json.ts), appending ids to one U32List.
 *
 * No per-piece strings are built on the common path (no normalizer or a normalizer that leaves
 * the text as it is, split-only pre-tokenizers): pieces are offsets into the section, the model
 * reads them in place and answers most from its memo.
 *
 * Layer: encoder.
 */

import type { AddedMatcher, AddedTokenDef } from "./added-vocabulary.js";
import type { DecodeChain } from "./decode/decoders.js";
import type { BpeModel } from "./model/bpe.js";
import type { UnigramModel } from "./model/unigram-json.js";
import type { Normalize } from "./normalize/normalizers.js";
import { Int32List, type PieceScanner } from "./pretokenize/scanner.js";
import type { PieceSink } from "./pretokenize/stages.js";
import type { Encoder } from "./types.js";
import { U32List } from "./u32-list.js";

/** Cuts of `text[s, e)` a format's loader makes before pre-tokenizing (absolute offsets, covering it), or null for none. */
export type SectionCuts = (text: string, s: number, e: number) => Array<[number, number]> | null;

export interface PipelineParts {
  readonly added: readonly AddedTokenDef[];
  /** Tokens known by id and text but never matched in text (after `added` in lookups). */
  readonly unmatched?: readonly AddedTokenDef[];
  /** Cuts inside each section, after its normalization (Kimi's long-text rule), or null. */
  readonly sectionCuts?: SectionCuts | null;
  readonly raw: AddedMatcher;
  readonly normalizedSet: AddedMatcher;
  readonly normalize: Normalize | null;
  /** The pre-tokenizer chain in front of a sink. */
  readonly chain: (sink: PieceSink) => PieceSink;
  /** The chain's one scanner when that is all it is (run inline), else null. */
  readonly scanner: PieceScanner | null;
  readonly model: BpeModel | UnigramModel;
  readonly decoder: DecodeChain | null;
  readonly notes: readonly string[];
  /** False when a component may differ from the Rust crate on some texts (a note says which). */
  readonly exact: boolean;
}

export class Pipeline implements Encoder {
  readonly engine = "deltatok" as const;
  readonly unsupported = null;
  readonly exact: boolean;
  readonly notes: readonly string[];
  readonly model: BpeModel | UnigramModel;
  readonly byteLevel: boolean;
  readonly #raw: AddedMatcher;
  readonly #normSet: AddedMatcher;
  readonly #normalize: Normalize | null;
  readonly #decoder: DecodeChain | null;
  readonly #addedById = new Map<number, AddedTokenDef>();
  readonly #addedByContent = new Map<string, number>();
  readonly #pretokenize: PieceSink;
  readonly #cuts: SectionCuts | null;
  #out: U32List = new U32List(16);
  #text = "";
  readonly #scratch = new U32List(1024);

  constructor(p: PipelineParts) {
    this.notes = p.notes;
    this.exact = p.exact;
    this.model = p.model;
    this.byteLevel = p.model.tables.byteLevel;
    this.#raw = p.raw;
    this.#normSet = p.normalizedSet;
    this.#normalize = p.normalize;
    this.#decoder = p.decoder;
    for (const t of [...p.added, ...(p.unmatched ?? [])]) {
      if (!this.#addedById.has(t.id)) this.#addedById.set(t.id, t);
      if (!this.#addedByContent.has(t.content)) this.#addedByContent.set(t.content, t.id);
    }
    this.#cuts = p.sectionCuts ?? null;
    const model = p.model;
    const chain = p.chain((text, s, e) => this.#tokenize(text, s, e));
    const scanner = p.scanner;
    // the common shape — one scanner that only cuts, then the model — without a call per stage
    this.#pretokenize =
      scanner === null
        ? chain
        : (text, s, e) => {
            const ends = this.#ends;
            ends.length = 0;
            scanner.scan(text, s, e, ends);
            const list = ends.data;
            const n = ends.length;
            const out = this.#out;
            let a = s;
            for (let i = 0; i < n; i++) {
              const b = list[i] as number;
              if (b > a) {
                this.lastPiece.before = out.length;
                model.tokenize(text, a, b, out);
                this.#setLast(text, a, b, out.length);
              }
              a = b;
            }
          };
  }

  readonly #ends = new Int32List(256);

  /**
   * The last pre-token the model read: the string it was read from (a normalized section, or the
   * text), its offsets, and the length of the encode's output before and after its ids. The
   * streaming counter reads it right after an encode (src/tokenize/stream.ts).
   */
  readonly lastPiece = { text: "", start: 0, end: 0, before: 0, after: 0 };

  #setLast(text: string, s: number, e: number, after: number): void {
    const l = this.lastPiece;
    l.text = text;
    l.start = s;
    l.end = e;
    l.after = after;
  }

  #tokenize(text: string, s: number, e: number): void {
    const out = this.#out;
    this.lastPiece.before = out.length;
    this.model.tokenize(text, s, e, out);
    this.#setLast(text, s, e, out.length);
  }

  readonly #pushToken = (id: number): void => {
    this.#out.push(id);
  };

  readonly #rawPiece = (s: number, e: number): void => {
    this.#section(this.#text, s, e);
  };

  #normStart = 0;
  #normOrigin = false;
  #normText = "";
  readonly #normPiece = (s: number, e: number): void => {
    this.#pretokenize(this.#normText, s, e, this.#normOrigin && s === this.#normStart);
  };

  /** One section between raw added tokens: normalize, cut at normalized added tokens, pre-tokenize. */
  #section(text: string, s: number, e: number): void {
    const origin = s === 0;
    let str = text;
    let a = s;
    let b = e;
    if (this.#normalize !== null) {
      str = this.#normalize(s === 0 && e === text.length ? text : text.slice(s, e));
      a = 0;
      b = str.length;
      if (b === 0) return;
    }
    const cuts = this.#cuts === null ? null : this.#cuts(str, a, b);
    if (cuts !== null) {
      for (const [cs, ce] of cuts) this.#part(str, cs, ce, origin && cs === a);
      return;
    }
    this.#part(str, a, b, origin);
  }

  /** A normalized section, or one part of it: cut at normalized added tokens, pre-tokenize. */
  #part(str: string, a: number, b: number, origin: boolean): void {
    if (this.#normSet.empty) {
      this.#pretokenize(str, a, b, origin);
      return;
    }
    // the callbacks read these; a nested section never starts while this one runs
    const [pt, ps, po] = [this.#normText, this.#normStart, this.#normOrigin];
    this.#normText = str;
    this.#normStart = a;
    this.#normOrigin = origin;
    this.#normSet.split(str, a, b, this.#normPiece, this.#pushToken);
    this.#normText = pt;
    this.#normStart = ps;
    this.#normOrigin = po;
  }

  encodeInto(text: string, out: U32List): void {
    if (text.length === 0) return;
    const prevOut = this.#out;
    const prevText = this.#text;
    this.#out = out;
    this.#text = text;
    try {
      if (this.#raw.empty) this.#section(text, 0, text.length);
      else this.#raw.split(text, 0, text.length, this.#rawPiece, this.#pushToken);
    } finally {
      this.#out = prevOut;
      this.#text = prevText;
    }
  }

  encode(text: string): number[] {
    const out = this.#scratch;
    out.clear();
    this.encodeInto(text, out);
    return out.toList();
  }

  idToToken(id: number): string | undefined {
    return this.#addedById.get(id)?.content ?? this.model.tables.tokenOf(id);
  }

  hasId(id: number): boolean {
    return this.#addedById.has(id) || (id >= 0 && id < this.model.tables.idLimit && this.model.tables.present[id] !== 0);
  }

  tokenToId(token: string): number | undefined {
    const a = this.#addedByContent.get(token);
    if (a !== undefined) return a;
    const id = this.model.idOfString(token);
    return id >= 0 ? id : undefined;
  }

  decode(ids: ArrayLike<number>): string {
    const tokens: string[] = [];
    for (let i = 0; i < ids.length; i++) {
      const t = this.idToToken(ids[i] as number);
      if (t !== undefined) tokens.push(t);
    }
    if (this.#decoder === null) return tokens.join(" ");
    return this.#decoder(tokens).join("");
  }

  normalize(text: string): string {
    return this.#normalize === null ? text : this.#normalize(text);
  }

  inputBytesOf(id: number): number {
    const added = this.#addedById.get(id);
    const units = this.model.tables.unitLength(id);
    if (added === undefined) return units;
    const content = utf8Length(added.content);
    // a model token with the same id spells other bytes: which one the encoder emitted is unknown
    if (this.model.tables.present[id] === 2 && units !== content) return -1;
    return content;
  }
}

function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    if (u < 0x80) n += 1;
    else if (u < 0x800) n += 2;
    else if (u >= 0xd800 && u <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}
