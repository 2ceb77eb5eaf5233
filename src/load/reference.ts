/**
 * A reference encoder for `deltatok verify --check-encoder`: another implementation of the same
 * tokenizer.json that deltatok's encoder is compared with, request by request. The Rust
 * `tokenizers` binding (npm `tokenizers`) when it can be imported — the reference deltatok's
 * answers are defined by — else @huggingface/tokenizers' stock pipeline (an optional dependency;
 * its patterns run with JavaScript's semantics, so it may itself differ on hostile text). Neither
 * is needed to run deltatok.
 *
 * Layer: load.
 */

import { createRequire } from "node:module";
import { join } from "node:path";

import { DeltatokError } from "../errors.js";
import type { LoadedTokenizer } from "./types.js";

export interface ReferenceTokenizer {
  readonly name: string;
  encode(text: string): Promise<number[]>;
}

interface RustBinding {
  Tokenizer: { fromFile(p: string): { encode(t: string, pair: null, o: { addSpecialTokens: boolean }): Promise<{ getIds(): number[] }> } };
}

const require = createRequire(import.meta.url);

/** The reference for `loaded` (its tokenizer.json re-read from disk). */
export async function referenceTokenizer(loaded: LoadedTokenizer): Promise<ReferenceTokenizer> {
  const file = join(loaded.dir, "tokenizer.json");
  try {
    const rust = require("tokenizers") as RustBinding;
    const version = (require("tokenizers/package.json") as { version?: string }).version ?? "?";
    const tok = rust.Tokenizer.fromFile(file);
    return { name: `Rust tokenizers ${version} (npm tokenizers)`, encode: async (text) => (await tok.encode(text, null, { addSpecialTokens: false })).getIds() };
  } catch {
    // not installed here: the library
  }
  try {
    const lib = (await import("@huggingface/tokenizers")) as unknown as { Tokenizer: new (j: unknown, c: unknown) => { encode(t: string, o: object): { ids: number[] } } };
    const { readFile } = await import("node:fs/promises");
    const json = JSON.parse(await readFile(file, "utf8")) as unknown;
    const tok = new lib.Tokenizer(json, loaded.config);
    return { name: "@huggingface/tokenizers (stock pipeline; JavaScript pattern semantics)", encode: async (text) => tok.encode(text, { add_special_tokens: false }).ids };
  } catch (e) {
    throw new DeltatokError("DT_TOKENIZER_UNSUPPORTED", `--check-encoder needs a reference encoder: install the npm package tokenizers (the Rust binding) or @huggingface/tokenizers`, { cause: e });
  }
}
