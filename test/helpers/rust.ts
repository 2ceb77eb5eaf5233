/** The Rust tokenizers binding (npm `tokenizers`, a dev dependency) as a reference for patterns and ids. */
import { createRequire } from "node:module";

interface RustPreTokenizer {
  preTokenizeString(s: string): Array<[string, [number, number]]>;
}
interface RustNormalizer {
  normalizeString(s: string): string;
}
export interface RustTokenizer {
  encode(t: string, pair: null, o: { addSpecialTokens: boolean }): Promise<{ getIds(): number[]; getTokens(): string[] }>;
  decode(ids: number[], skipSpecialTokens: boolean): Promise<string>;
  getVocabSize(withAddedTokens?: boolean): number;
  idToToken(id: number): string | null;
  tokenToId(token: string): number | null;
  getPreTokenizer(): RustPreTokenizer | null;
  getNormalizer(): RustNormalizer | null;
}

const { Tokenizer } = createRequire(import.meta.url)("tokenizers") as {
  Tokenizer: { fromFile(p: string): RustTokenizer; fromString(s: string): RustTokenizer };
};

export type PatternJson = { Regex: string } | { String: string };

/** A tokenizer with only the given normalizer and pre-tokenizer (WordLevel model, never used for ids). */
function bare(normalizer: unknown, preTokenizer: unknown): RustTokenizer {
  return Tokenizer.fromString(
    JSON.stringify({
      version: "1.0", truncation: null, padding: null, added_tokens: [], normalizer, pre_tokenizer: preTokenizer,
      post_processor: null, decoder: null, model: { type: "WordLevel", vocab: { "[UNK]": 0 }, unk_token: "[UNK]" },
    }),
  );
}

/** Rust's Split pre-tokenizer: text → pieces. Throws when Oniguruma rejects the pattern. */
export function rustSplit(pattern: PatternJson, behavior = "Isolated", invert = false): (text: string) => string[] {
  const pre = bare(null, { type: "Split", pattern, behavior, invert }).getPreTokenizer() as RustPreTokenizer;
  return (text) => pre.preTokenizeString(text).map((p) => p[0]);
}

/** Rust's Split pre-tokenizer with the pieces' [start, end) code point offsets. */
export function rustSplitOffsets(pattern: PatternJson, behavior = "Isolated", invert = false): (text: string) => Array<[number, number]> {
  const pre = bare(null, { type: "Split", pattern, behavior, invert }).getPreTokenizer() as RustPreTokenizer;
  return (text) => pre.preTokenizeString(text).map((p) => p[1]);
}

/** Rust's Replace normalizer: text → normalized text. */
export function rustReplace(pattern: PatternJson, content: string): (text: string) => string {
  const n = bare({ type: "Replace", pattern, content }, null).getNormalizer() as RustNormalizer;
  return (text) => n.normalizeString(text);
}

/** Rust's normalizer of the given tokenizer.json component: text → normalized text. */
export function rustNormalizer(component: unknown): (text: string) => string {
  const n = bare(component, null).getNormalizer() as RustNormalizer;
  return (text) => n.normalizeString(text);
}

/** Rust's pre-tokenizer of the given tokenizer.json component: text → pieces. */
export function rustPreTokenizer(component: unknown): (text: string) => string[] {
  const pre = bare(null, component).getPreTokenizer() as RustPreTokenizer;
  return (text) => pre.preTokenizeString(text).map((p) => p[0]);
}

export function rustTokenizerFile(path: string): RustTokenizer {
  return Tokenizer.fromFile(path);
}

/** Token ids of `text`, add_special_tokens=False. */
export async function rustIds(t: RustTokenizer, text: string): Promise<number[]> {
  return (await t.encode(text, null, { addSpecialTokens: false })).getIds();
}

/** Rust's pre-tokenizer of the given tokenizer.json component: text → the pieces' [start, end) code point offsets. */
export function rustPreTokenizerOffsets(component: unknown): (text: string) => Array<[number, number]> {
  const pre = bare(null, component).getPreTokenizer() as RustPreTokenizer;
  return (text) => pre.preTokenizeString(text).map((p) => p[1]);
}
