/**
 * A SentencePiece model as `sentencepiece` itself runs it (SentencePieceProcessor `Encode` /
 * `Decode` with no extra options): normalize, segment with the Unigram or BPE model, then
 * - an unknown piece becomes its UTF-8 bytes' `<0xXX>` pieces when `byte_fallback` is on;
 * - otherwise a run of consecutive unknown pieces becomes one unknown id;
 * and decoding turns pieces back into text: control pieces vanish, the unknown piece prints
 * `unk_surface`, runs of byte pieces are decoded as UTF-8 (each malformed byte a U+FFFD), "▁"
 * becomes " ", and the leading "▁" of the text is dropped when `add_dummy_prefix` or
 * `remove_extra_whitespaces` is set (with the latter, every leading "▁" until some text).
 *
 * This is the `sentencepiece` reference. transformers 5 does not run sentencepiece: it converts
 * the model to a tokenizer.json (see spm-to-tokenizer-json.ts), which differs around special
 * tokens, whitespace and normalization.
 *
 * Layer: encoder.
 */

import { DeltatokError } from "../../errors.js";
import { SentencePieceNormalizer, validCharLength } from "../normalize/sentencepiece-normalizer.js";
import { ByteTrie } from "./byte-trie.js";
import { PieceSpans } from "./piece-spans.js";
import { SentencePieceBpeModel } from "./sentencepiece-bpe.js";
import {
  bytePieceValue,
  PIECE_BYTE,
  PIECE_CONTROL,
  PIECE_NORMAL,
  PIECE_UNKNOWN,
  PIECE_UNUSED,
  PIECE_USER_DEFINED,
  type SentencePieceModelData,
} from "./sentencepiece-model.js";
import { UnigramModel } from "./unigram.js";

const ESCAPED_SPACE = "\u2581";
const encoder = new TextEncoder();
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

interface SegmentingModel {
  encode(text: Uint8Array, end: number, out: PieceSpans): void;
}

export class SentencePieceProcessor {
  readonly model: SentencePieceModelData;
  readonly #normalizer: SentencePieceNormalizer;
  readonly #denormalizer: SentencePieceNormalizer | null;
  readonly #segmenter: SegmentingModel;
  readonly #spans = new PieceSpans();
  readonly #normal = new Map<string, number>();
  readonly #reserved = new Map<string, number>();

  constructor(model: SentencePieceModelData) {
    this.model = model;
    const userKeys: Uint8Array[] = [];
    const userIds: number[] = [];
    for (let id = 0; id < model.pieces.length; id++) {
      const type = model.types[id] as number;
      const piece = model.pieces[id] as string;
      if (type === PIECE_NORMAL || type === PIECE_USER_DEFINED || type === PIECE_UNUSED) this.#normal.set(piece, id);
      else this.#reserved.set(piece, id);
      if (type === PIECE_USER_DEFINED) {
        userKeys.push(encoder.encode(piece));
        userIds.push(id);
      }
    }
    this.#normalizer = new SentencePieceNormalizer({
      spec: model.normalizer,
      treatWhitespaceAsSuffix: model.trainer.treatWhitespaceAsSuffix,
      userDefined: userKeys.length > 0 ? new ByteTrie(userKeys, userIds) : null,
    });
    this.#denormalizer =
      model.denormalizer === null
        ? null
        : new SentencePieceNormalizer({ spec: model.denormalizer, treatWhitespaceAsSuffix: false, userDefined: null });
    this.#segmenter = model.trainer.modelType === "bpe" ? new SentencePieceBpeModel(model) : new UnigramModel(model);
  }

  /** The normalized text (sentencepiece `normalize`). */
  normalize(text: string): string {
    return utf8.decode(this.#normalizer.normalize(text));
  }

  /** Token ids of `text` (sentencepiece `encode(text)`). */
  encode(text: string): Uint32Array {
    const normalized = this.#normalizer.normalize(text);
    const spans = this.#spans;
    this.#segmenter.encode(normalized, normalized.length, spans);
    const { types, byteIds } = this.model;
    const byteFallback = this.model.trainer.byteFallback;
    const ids: number[] = [];
    let prevUnknown = false;
    for (let i = 0; i < spans.length; i++) {
      const id = spans.id(i);
      const unknown = types[id] === PIECE_UNKNOWN;
      if (types[id] === PIECE_CONTROL) ids.push(id);
      else if (unknown && byteFallback) {
        for (let k = spans.start(i), end = spans.end(i); k < end; k++) ids.push(byteIds[normalized[k] as number] as number);
      } else if (!(unknown && prevUnknown)) ids.push(id);
      prevUnknown = unknown;
    }
    return Uint32Array.from(ids);
  }

  /** PieceToId: CONTROL/UNKNOWN/BYTE pieces first, then the others, else the unknown id. */
  pieceToId(piece: string): number {
    return this.#reserved.get(piece) ?? this.#normal.get(piece) ?? this.model.unkId;
  }

  /** Text of `ids` (sentencepiece `decode(ids)`); an id outside the vocabulary is refused. */
  decode(ids: ArrayLike<number>): string {
    const { pieces, types, normalizer, trainer } = this.model;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as number;
      if (!Number.isInteger(id) || id < 0 || id >= pieces.length) {
        throw new DeltatokError("DT_INVALID_REQUEST", `ids[${i}] is not a token id of this model (0..${pieces.length - 1}): ${id}`, {
          path: `ids[${i}]`,
        });
      }
    }
    const stripBos = normalizer.addDummyPrefix || normalizer.removeExtraWhitespaces;
    let text = "";
    let isBosWs = true;
    let bosWsSeen = false;
    let byteStart = 0;
    const flushBytes = (from: number, to: number): void => {
      if (from >= to) return;
      const bytes = new Uint8Array(to - from);
      for (let k = from; k < to; k++) bytes[k - from] = bytePieceValue(pieces[ids[k] as number] as string);
      text += decodeBytesLikeSentencePiece(bytes);
    };
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as number;
      const type = types[id] as number;
      if (type === PIECE_BYTE) continue;
      flushBytes(byteStart, i);
      if (bosWsSeen || text !== "") isBosWs = false;
      byteStart = i + 1;
      if (type === PIECE_CONTROL) {
        bosWsSeen = false;
        continue;
      }
      if (type === PIECE_UNKNOWN) {
        text += trainer.unkSurface;
        bosWsSeen = false;
        continue;
      }
      let piece = pieces[id] as string;
      let hasBosWs = false;
      if (isBosWs && stripBos && piece.startsWith(ESCAPED_SPACE)) {
        piece = piece.slice(ESCAPED_SPACE.length);
        hasBosWs = !normalizer.removeExtraWhitespaces;
      }
      text += piece.replaceAll(ESCAPED_SPACE, " ");
      bosWsSeen = hasBosWs;
    }
    flushBytes(byteStart, ids.length);
    if (this.#denormalizer !== null) text = utf8.decode(this.#denormalizer.normalize(text));
    return text;
  }
}

/**
 * UTF-8 bytes to text as sentencepiece decodes byte pieces: each well-formed character kept,
 * each byte that does not start one becomes U+FFFD on its own.
 */
export function decodeBytesLikeSentencePiece(bytes: Uint8Array): string {
  let out = "";
  const decoder = utf8;
  let pos = 0;
  let runStart = 0;
  while (pos < bytes.length) {
    const length = validCharLength(bytes, pos, bytes.length);
    if (length === 0) {
      out += decoder.decode(bytes.subarray(runStart, pos)) + "\ufffd";
      pos++;
      runStart = pos;
    } else pos += length;
  }
  return out + decoder.decode(bytes.subarray(runStart, pos));
}
