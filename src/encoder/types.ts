/**
 * What every text encoder deltatok runs offers: deltatok's own (pipeline.ts) and, for a
 * tokenizer.json with a component it does not implement, the library fallback (src/load).
 *
 * Layer: encoder.
 */

import type { U32List } from "./u32-list.js";

export interface Encoder {
  /**
   * `"deltatok"`: deltatok's own encoder; `"fallback"`: @huggingface/tokenizers' stock pipeline,
   * for a tokenizer.json using a component deltatok does not implement (`unsupported` names it).
   */
  readonly engine: "deltatok" | "fallback";
  /** The component that made this a fallback, or null. */
  readonly unsupported: string | null;
  /** One line per pattern-driven component: what runs it (a scanner, the Oniguruma translation, the library). */
  readonly notes: readonly string[];
  /** Whether every pattern runs with the Rust crate's semantics. */
  readonly exact: boolean;
  /** Appends the ids of `text` (add_special_tokens=False) to `out`. */
  encodeInto(text: string, out: U32List): void;
  /** The ids of `text`, add_special_tokens=False. */
  encode(text: string): number[];
  /** The Rust crate's `Tokenizer::decode(ids, skip_special_tokens=false)`: the decoder over the ids' tokens. */
  decode(ids: ArrayLike<number>): string;
  /** The token of an id (an added token's content first, as the crate answers), or undefined. */
  idToToken(id: number): string | undefined;
  /** Whether an id is a token (of the vocabulary or an added token). */
  hasId(id: number): boolean;
  /** The id of a token (added tokens first), or undefined. */
  tokenToId(token: string): number | undefined;
  /** The normalizer alone (the identity when there is none). */
  normalize(text: string): string;
  /**
   * UTF-8 bytes of input text the id stands for when the encoder emits it: an added token's
   * content, a model token's units (bytes for a byte-level model, else its string's UTF-8); -1
   * when that is not one number (an added token whose content and model units differ).
   */
  inputBytesOf(id: number): number;
  /** Whether the model reads bytes (a ByteLevel pre-tokenizer). */
  readonly byteLevel: boolean;
}
