/**
 * The data of a SentencePiece model (`tokenizer.model`, protobuf `ModelProto`) as the encoder
 * uses it: pieces with scores and types, the trainer settings that change encoding, and the
 * normalizer settings. The load layer's reader (src/load/formats/sentencepiece-model.ts) fills
 * it from the file and validates it the way `sentencepiece` does when it loads a model;
 * everything here may assume a validated model.
 *
 * Field names follow sentencepiece_model.proto (camel-cased); defaults are the proto2 defaults.
 *
 * Layer: encoder. Imports nothing.
 */

/** `ModelProto.SentencePiece.Type`. */
export const PIECE_NORMAL = 1;
export const PIECE_UNKNOWN = 2;
export const PIECE_CONTROL = 3;
export const PIECE_USER_DEFINED = 4;
export const PIECE_UNUSED = 5;
export const PIECE_BYTE = 6;

export type SentencePieceModelType = "unigram" | "bpe" | "word" | "char";

/** `TrainerSpec` fields that matter after training (the rest are kept for reporting only). */
export interface SentencePieceTrainerSpec {
  /** `model_type` (default UNIGRAM). */
  readonly modelType: SentencePieceModelType;
  /** `vocab_size` as trained (default 8000); the piece list is authoritative. */
  readonly vocabSize: number;
  /** `byte_fallback` (default false): unknown pieces become `<0xXX>` byte pieces. */
  readonly byteFallback: boolean;
  /** `treat_whitespace_as_suffix` (default false): the dummy space goes at the end. */
  readonly treatWhitespaceAsSuffix: boolean;
  /** `split_digits` (default false). Training-time; encoding follows the vocabulary. */
  readonly splitDigits: boolean;
  /** `split_by_whitespace` (default true). Training-time. */
  readonly splitByWhitespace: boolean;
  /** `allow_whitespace_only_pieces` (default false). Training-time. */
  readonly allowWhitespaceOnlyPieces: boolean;
  /** `unk_id`, `bos_id`, `eos_id`, `pad_id` (defaults 0, 1, 2, -1; -1 = none). */
  readonly unkId: number;
  readonly bosId: number;
  readonly eosId: number;
  readonly padId: number;
  /** `unk_piece`, `bos_piece`, `eos_piece`, `pad_piece` (defaults `<unk>`, `<s>`, `</s>`, `<pad>`). */
  readonly unkPiece: string;
  readonly bosPiece: string;
  readonly eosPiece: string;
  readonly padPiece: string;
  /** `unk_surface` (default " ⁇ "): what decoding prints for the unknown piece. */
  readonly unkSurface: string;
  /** `control_symbols`, `user_defined_symbols` as given to the trainer (the piece types are authoritative). */
  readonly controlSymbols: readonly string[];
  readonly userDefinedSymbols: readonly string[];
}

/** `NormalizerSpec` (also used for `denormalizer_spec`). */
export interface SentencePieceNormalizerSpec {
  /** `name` of the rule set (`nmt_nfkc`, `identity`, ...): informational. */
  readonly name: string;
  /** `precompiled_charsmap`: the compiled rules (empty = no rules). */
  readonly precompiledCharsmap: Uint8Array;
  /** `add_dummy_prefix` (default true). */
  readonly addDummyPrefix: boolean;
  /** `remove_extra_whitespaces` (default true). */
  readonly removeExtraWhitespaces: boolean;
  /** `escape_whitespaces` (default true): " " becomes "▁". */
  readonly escapeWhitespaces: boolean;
}

export interface SentencePieceModelData {
  /** Piece text by id. */
  readonly pieces: readonly string[];
  /** Piece score by id (proto `float`, so exactly representable as float32). */
  readonly scores: Float32Array;
  /** Piece type by id (PIECE_*). */
  readonly types: Uint8Array;
  readonly trainer: SentencePieceTrainerSpec;
  readonly normalizer: SentencePieceNormalizerSpec;
  /** `denormalizer_spec`, or null when absent or without rules (decoding then applies none). */
  readonly denormalizer: SentencePieceNormalizerSpec | null;
  /** Id of the one UNKNOWN piece. */
  readonly unkId: number;
  /** Byte value → id of its `<0xXX>` piece, or -1 (all 256 present when byte fallback is on). */
  readonly byteIds: Int32Array;
}

/** The piece text of a byte piece: `<0x41>` (two upper-case hex digits), as sentencepiece spells it. */
export function bytePieceText(byte: number): string {
  return `<0x${byte.toString(16).toUpperCase().padStart(2, "0")}>`;
}

/** The byte a `<0xXX>` piece stands for, or -1 when the text is not one (sentencepiece's PieceToByte). */
export function bytePieceValue(piece: string): number {
  if (piece.length !== 6 || !piece.startsWith("<0x") || piece[5] !== ">") return -1;
  const hex = piece.slice(3, 5);
  if (!/^[0-9A-F]{2}$/.test(hex)) return -1;
  return Number.parseInt(hex, 16);
}
