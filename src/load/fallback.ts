/**
 * The library fallback: a tokenizer.json using a component deltatok's encoder does not implement
 * (src/encoder/build.ts names it) runs on @huggingface/tokenizers' stock pipeline, as the library
 * ships it — nothing is patched — and says so: `engine: "fallback"`, the component in
 * `unsupported`, a `DELTATOK_TOKENIZER_FALLBACK` warning at load, and `exact: false` (the
 * library runs patterns with JavaScript's semantics, which differ from the Rust crate's on some
 * texts; DESIGN.md, "What exact means").
 *
 * The library is an optional dependency, imported only when a fallback is needed; without it
 * such a tokenizer is refused (`DT_TOKENIZER_UNSUPPORTED`).
 *
 * Layer: load.
 */

import { DeltatokError } from "../errors.js";
import type { Encoder } from "../encoder/types.js";
import type { U32List } from "../encoder/u32-list.js";

interface LibraryTokenizer {
  encode(text: string, o: { add_special_tokens: boolean }): { ids: number[] };
  decode(ids: number[], o: { skip_special_tokens: boolean; clean_up_tokenization_spaces: boolean }): string;
  id_to_token(id: number): string | undefined;
  token_to_id(token: string): number | undefined;
  readonly normalizer: ((s: string) => string) | null;
}

type LibraryModule = { Tokenizer: new (json: unknown, config: unknown) => LibraryTokenizer };

let library: Promise<LibraryModule> | null = null;

const utf8 = new TextEncoder();

class LibraryEncoder implements Encoder {
  readonly engine = "fallback" as const;
  readonly exact = false;
  readonly byteLevel = false;
  readonly unsupported: string;
  readonly notes: readonly string[];
  readonly #tok: LibraryTokenizer;

  constructor(tok: LibraryTokenizer, unsupported: string) {
    this.#tok = tok;
    this.unsupported = unsupported;
    this.notes = [`@huggingface/tokenizers' stock pipeline (deltatok's encoder does not implement ${unsupported})`];
  }

  encode(text: string): number[] {
    return this.#tok.encode(text, { add_special_tokens: false }).ids;
  }

  encodeInto(text: string, out: U32List): void {
    out.pushAll(this.encode(text));
  }

  decode(ids: ArrayLike<number>): string {
    // the library refuses an empty list; the Rust crate decodes it to ""
    if (ids.length === 0) return "";
    return this.#tok.decode(Array.from(ids), { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  }

  idToToken(id: number): string | undefined {
    return this.#tok.id_to_token(id) ?? undefined;
  }

  hasId(id: number): boolean {
    return this.idToToken(id) !== undefined;
  }

  tokenToId(token: string): number | undefined {
    return this.#tok.token_to_id(token) ?? undefined;
  }

  normalize(text: string): string {
    const n = this.#tok.normalizer;
    return typeof n === "function" ? n.call(this.#tok, text) : text;
  }

  inputBytesOf(id: number): number {
    const t = this.idToToken(id);
    return t === undefined ? 0 : utf8.encode(t).length;
  }
}

/** The library's stock tokenizer for `json`, as an Encoder; `unsupported` names why deltatok's did not build. */
export async function libraryEncoder(json: unknown, runtimeConfig: Record<string, unknown>, unsupported: string, file: string): Promise<Encoder> {
  let mod: LibraryModule;
  try {
    library ??= import("@huggingface/tokenizers") as unknown as Promise<LibraryModule>;
    mod = await library;
  } catch (e) {
    library = null;
    throw new DeltatokError(
      "DT_TOKENIZER_UNSUPPORTED",
      `${file}: deltatok's encoder does not implement ${unsupported}, and the optional dependency @huggingface/tokenizers (its fallback) is not installed`,
      { cause: e },
    );
  }
  let tok: LibraryTokenizer;
  try {
    tok = new mod.Tokenizer(json, runtimeConfig);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new DeltatokError("DT_TOKENIZER_INVALID", `${file}: @huggingface/tokenizers rejects it: ${why}`, { cause: e });
  }
  process.emitWarning(`${file}: deltatok's encoder does not implement ${unsupported}; this tokenizer runs on @huggingface/tokenizers' stock pipeline, whose ids may differ from the Rust tokenizers on some texts`, {
    code: "DELTATOK_TOKENIZER_FALLBACK",
  });
  return new LibraryEncoder(tok, unsupported);
}
