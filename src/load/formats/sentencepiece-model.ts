/**
 * Reads a SentencePiece model file (`tokenizer.model`: a protobuf `ModelProto`) into
 * SentencePieceModelData, validating it the way `sentencepiece` validates a model when it loads
 * one (ModelInterface::InitializePieces, Normalizer::Init): non-empty pieces, no piece defined
 * twice, exactly one UNKNOWN piece, BYTE pieces only with `byte_fallback` and then all 256 of
 * them, a well-formed precompiled charsmap. Pure: bytes in, data out; every refusal is a coded
 * DeltatokError with a path.
 *
 * Protobuf semantics kept: proto2 defaults for absent fields, later scalar occurrences win,
 * repeated and message fields merge, unknown fields are skipped, and an enum value the schema
 * does not know leaves the field at its default (as the C++ and Python runtimes do).
 *
 * Layer: load.
 */

import { DeltatokError } from "../../errors.js";
import {
  bytePieceValue,
  PIECE_BYTE,
  PIECE_NORMAL,
  PIECE_UNKNOWN,
  PIECE_UNUSED,
  PIECE_USER_DEFINED,
  type SentencePieceModelData,
  type SentencePieceModelType,
  type SentencePieceNormalizerSpec,
  type SentencePieceTrainerSpec,
} from "../../encoder/model/sentencepiece-model.js";
import { ProtoCursor } from "./protobuf.js";

/** Largest SentencePiece model file read (bytes). Real models are 0.2–20 MB. */
export const MAX_SENTENCEPIECE_MODEL_BYTES = 64 * 1024 * 1024;

const MODEL_TYPES: Readonly<Record<number, SentencePieceModelType>> = { 1: "unigram", 2: "bpe", 3: "word", 4: "char" };

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Parses and validates a SentencePiece model. `file` names it in error messages. */
export function readSentencePieceModel(bytes: Uint8Array, file: string): SentencePieceModelData {
  if (bytes.length > MAX_SENTENCEPIECE_MODEL_BYTES) {
    throw new DeltatokError(
      "DT_TOKENIZER_TOO_LARGE",
      `${file} is ${bytes.length} bytes; SentencePiece models are read up to ${MAX_SENTENCEPIECE_MODEL_BYTES} bytes`,
    );
  }
  if (bytes.length === 0) {
    throw new DeltatokError("DT_TOKENIZER_INVALID", `${file}: not a valid SentencePiece model: the file is empty`);
  }
  const pieces: string[] = [];
  const scores: number[] = [];
  const types: number[] = [];
  const trainer = new TrainerAccumulator();
  const normalizer = new NormalizerAccumulator();
  let denormalizer: NormalizerAccumulator | null = null;

  const top = new ProtoCursor(bytes, 0, bytes.length, file, "");
  while (top.next()) {
    switch (top.field) {
      case 1: {
        const [s, e] = top.lengthDelimited("pieces");
        readPiece(new ProtoCursor(bytes, s, e, file, `pieces[${pieces.length}]`), pieces, scores, types);
        break;
      }
      case 2: {
        const [s, e] = top.lengthDelimited("trainer_spec");
        trainer.read(new ProtoCursor(bytes, s, e, file, "trainer_spec"));
        break;
      }
      case 3: {
        const [s, e] = top.lengthDelimited("normalizer_spec");
        normalizer.read(new ProtoCursor(bytes, s, e, file, "normalizer_spec"));
        break;
      }
      case 5: {
        const [s, e] = top.lengthDelimited("denormalizer_spec");
        denormalizer ??= new NormalizerAccumulator();
        denormalizer.read(new ProtoCursor(bytes, s, e, file, "denormalizer_spec"));
        break;
      }
      default:
        top.skip();
    }
  }

  const trainerSpec = trainer.spec();
  const normalizerSpec = normalizer.spec();
  const model: SentencePieceModelData = {
    pieces,
    scores: Float32Array.from(scores),
    types: Uint8Array.from(types),
    trainer: trainerSpec,
    normalizer: normalizerSpec,
    denormalizer:
      denormalizer === null || denormalizer.spec().precompiledCharsmap.length === 0 ? null : denormalizer.spec(),
    unkId: -1,
    byteIds: new Int32Array(256).fill(-1),
  };
  return validate(model, file);
}

function readPiece(c: ProtoCursor, pieces: string[], scores: number[], types: number[]): void {
  let piece = "";
  let score = 0;
  let type = PIECE_NORMAL;
  while (c.next()) {
    switch (c.field) {
      case 1: {
        const [s, e] = c.lengthDelimited("piece");
        piece = decodeText(c, s, e, "piece");
        break;
      }
      case 2:
        score = c.float32("score");
        break;
      case 3: {
        const t = c.int32("type");
        if (t >= 1 && t <= 6) type = t;
        break;
      }
      default:
        c.skip();
    }
  }
  pieces.push(piece);
  scores.push(score);
  types.push(type);
}

function decodeText(c: ProtoCursor, start: number, end: number, what: string): string {
  try {
    return strictUtf8.decode(c.bytes.subarray(start, end));
  } catch {
    throw c.fail(`${what} is not valid UTF-8`, start);
  }
}

class TrainerAccumulator {
  modelType = 1;
  vocabSize = 8000;
  byteFallback = false;
  treatWhitespaceAsSuffix = false;
  splitDigits = false;
  splitByWhitespace = true;
  allowWhitespaceOnlyPieces = false;
  unkId = 0;
  bosId = 1;
  eosId = 2;
  padId = -1;
  unkPiece = "<unk>";
  bosPiece = "<s>";
  eosPiece = "</s>";
  padPiece = "<pad>";
  unkSurface = " \u2047 ";
  controlSymbols: string[] = [];
  userDefinedSymbols: string[] = [];

  read(c: ProtoCursor): void {
    while (c.next()) {
      switch (c.field) {
        case 3: {
          const t = c.int32("model_type");
          if (MODEL_TYPES[t] !== undefined) this.modelType = t;
          break;
        }
        case 4:
          this.vocabSize = c.int32("vocab_size");
          break;
        case 35:
          this.byteFallback = c.bool("byte_fallback");
          break;
        case 24:
          this.treatWhitespaceAsSuffix = c.bool("treat_whitespace_as_suffix");
          break;
        case 25:
          this.splitDigits = c.bool("split_digits");
          break;
        case 22:
          this.splitByWhitespace = c.bool("split_by_whitespace");
          break;
        case 26:
          this.allowWhitespaceOnlyPieces = c.bool("allow_whitespace_only_pieces");
          break;
        case 40:
          this.unkId = c.int32("unk_id");
          break;
        case 41:
          this.bosId = c.int32("bos_id");
          break;
        case 42:
          this.eosId = c.int32("eos_id");
          break;
        case 43:
          this.padId = c.int32("pad_id");
          break;
        case 45:
          this.unkPiece = this.#text(c, "unk_piece");
          break;
        case 46:
          this.bosPiece = this.#text(c, "bos_piece");
          break;
        case 47:
          this.eosPiece = this.#text(c, "eos_piece");
          break;
        case 48:
          this.padPiece = this.#text(c, "pad_piece");
          break;
        case 44:
          this.unkSurface = this.#text(c, "unk_surface");
          break;
        case 30:
          this.controlSymbols.push(this.#text(c, "control_symbols"));
          break;
        case 31:
          this.userDefinedSymbols.push(this.#text(c, "user_defined_symbols"));
          break;
        default:
          c.skip();
      }
    }
  }

  #text(c: ProtoCursor, what: string): string {
    const [s, e] = c.lengthDelimited(what);
    return decodeText(c, s, e, what);
  }

  spec(): SentencePieceTrainerSpec {
    return {
      modelType: MODEL_TYPES[this.modelType] ?? "unigram",
      vocabSize: this.vocabSize,
      byteFallback: this.byteFallback,
      treatWhitespaceAsSuffix: this.treatWhitespaceAsSuffix,
      splitDigits: this.splitDigits,
      splitByWhitespace: this.splitByWhitespace,
      allowWhitespaceOnlyPieces: this.allowWhitespaceOnlyPieces,
      unkId: this.unkId,
      bosId: this.bosId,
      eosId: this.eosId,
      padId: this.padId,
      unkPiece: this.unkPiece,
      bosPiece: this.bosPiece,
      eosPiece: this.eosPiece,
      padPiece: this.padPiece,
      unkSurface: this.unkSurface,
      controlSymbols: this.controlSymbols,
      userDefinedSymbols: this.userDefinedSymbols,
    };
  }
}

class NormalizerAccumulator {
  name = "";
  charsmap: Uint8Array = new Uint8Array(0);
  addDummyPrefix = true;
  removeExtraWhitespaces = true;
  escapeWhitespaces = true;

  read(c: ProtoCursor): void {
    while (c.next()) {
      switch (c.field) {
        case 1: {
          const [s, e] = c.lengthDelimited("name");
          this.name = decodeText(c, s, e, "name");
          break;
        }
        case 2: {
          const [s, e] = c.lengthDelimited("precompiled_charsmap");
          // A copy: the model must not keep the whole file's buffer alive.
          this.charsmap = c.bytes.slice(s, e);
          break;
        }
        case 3:
          this.addDummyPrefix = c.bool("add_dummy_prefix");
          break;
        case 4:
          this.removeExtraWhitespaces = c.bool("remove_extra_whitespaces");
          break;
        case 5:
          this.escapeWhitespaces = c.bool("escape_whitespaces");
          break;
        default:
          c.skip();
      }
    }
  }

  spec(): SentencePieceNormalizerSpec {
    return {
      name: this.name,
      precompiledCharsmap: this.charsmap,
      addDummyPrefix: this.addDummyPrefix,
      removeExtraWhitespaces: this.removeExtraWhitespaces,
      escapeWhitespaces: this.escapeWhitespaces,
    };
  }
}

function invalid(file: string, path: string, reason: string): DeltatokError {
  return new DeltatokError("DT_TOKENIZER_INVALID", `${file}: not a valid SentencePiece model: ${reason}`, { path });
}

/** The checks sentencepiece makes when it loads a model (ModelInterface, Normalizer). */
function validate(model: SentencePieceModelData, file: string): SentencePieceModelData {
  const { pieces, types, trainer } = model;
  if (trainer.modelType === "word" || trainer.modelType === "char") {
    throw new DeltatokError(
      "DT_TOKENIZER_UNSUPPORTED",
      `${file}: SentencePiece ${trainer.modelType.toUpperCase()} models are not supported (only UNIGRAM and BPE)`,
      { path: "trainer_spec.model_type" },
    );
  }
  if (pieces.length === 0) throw invalid(file, "pieces", "it has no pieces");
  const normal = new Set<string>();
  const reserved = new Set<string>();
  let unkId = -1;
  const byteIds = model.byteIds as Int32Array;
  let inTrie = 0;
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i] as string;
    const type = types[i] as number;
    if (piece === "") throw invalid(file, `pieces[${i}].piece`, `piece ${i} is empty`);
    const isNormal = type === PIECE_NORMAL || type === PIECE_USER_DEFINED || type === PIECE_UNUSED;
    const map = isNormal ? normal : reserved;
    if (map.has(piece)) throw invalid(file, `pieces[${i}].piece`, `piece ${JSON.stringify(piece)} is defined twice`);
    map.add(piece);
    if (isNormal) inTrie++;
    if (type === PIECE_UNKNOWN) {
      if (unkId >= 0) throw invalid(file, `pieces[${i}].type`, `a second UNKNOWN piece (${i}; the first is ${unkId})`);
      unkId = i;
    }
    if (type === PIECE_BYTE) {
      if (!trainer.byteFallback) {
        throw invalid(file, `pieces[${i}].type`, `byte piece ${JSON.stringify(piece)} although byte_fallback is false`);
      }
      const b = bytePieceValue(piece);
      if (b < 0) throw invalid(file, `pieces[${i}].piece`, `byte piece ${JSON.stringify(piece)} is not <0xXX>`);
      byteIds[b] = i;
    }
  }
  if (unkId < 0) throw invalid(file, "pieces", "no piece has type UNKNOWN");
  if (trainer.byteFallback && byteIds.includes(-1)) {
    throw invalid(file, "pieces", `byte_fallback is true but byte piece <0x${byteIds.indexOf(-1).toString(16).toUpperCase().padStart(2, "0")}> is missing`);
  }
  if (trainer.modelType === "unigram" && inTrie === 0) {
    throw invalid(file, "pieces", "a UNIGRAM model needs at least one NORMAL, USER_DEFINED or UNUSED piece");
  }
  checkCharsmap(model.normalizer.precompiledCharsmap, file, "normalizer_spec.precompiled_charsmap");
  if (model.denormalizer !== null) {
    checkCharsmap(model.denormalizer.precompiledCharsmap, file, "denormalizer_spec.precompiled_charsmap");
  }
  return { ...model, unkId };
}

/** Normalizer::DecodePrecompiledCharsMap's checks: a 4-byte trie size that leaves room for the strings. */
function checkCharsmap(blob: Uint8Array, file: string, path: string): void {
  if (blob.length === 0) return;
  if (blob.length <= 4) throw invalid(file, path, "the precompiled charsmap is shorter than its 4-byte header");
  const trieSize = new DataView(blob.buffer, blob.byteOffset, blob.byteLength).getUint32(0, true);
  if (trieSize > blob.length - 4) {
    throw invalid(file, path, `the precompiled charsmap's trie (${trieSize} bytes) does not fit in it (${blob.length} bytes)`);
  }
}
