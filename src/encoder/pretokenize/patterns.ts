/**
 * The pattern strings the scanners implement, exactly as their sources spell them: tokenizer.json
 * `{"Regex": ...}` values (after JSON parsing; DeepSeek's third one holds real \r and \n characters)
 * and tiktoken `pat_str`s (tiktoken_ext/openai_public.py, Kimi's tokenization_kimi.py, GLM-4's
 * tokenization_chatglm.py).
 *
 * Layer: encoder.
 */

import { GPT2_PATTERN } from "./gpt2.js";

export { GPT2_PATTERN };

/** Llama 3 / 3.1, GPT-3.5 (tokenizer.json), and GLM-4's tiktoken pattern. */
export const CL100K_PATTERN = String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;

/** Qwen 2 / 2.5 / 3: cl100k with single digits. */
export const QWEN_PATTERN = String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;

/** GPT-4o, gpt-oss (tokenizer.json), and tiktoken's o200k_base. */
export const O200K_PATTERN =
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
  String.raw`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
  String.raw`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`;

/** DeepSeek V3's three Splits, in order. */
export const DEEPSEEK_PATTERNS: readonly string[] = [
  String.raw`\p{N}{1,3}`,
  "[一-龥぀-ゟ゠-ヿ]+",
  String.raw`[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_` + "`" + String.raw`{|}~][A-Za-z]+|[^` + "\r\n" + String.raw`\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[` +
    "\r\n" + String.raw`]*|\s*[` + "\r\n" + String.raw`]+|\s+(?!\S)|\s+`,
];

/** tiktoken's r50k_base / p50k_base (and gpt2) pattern. */
export const TIKTOKEN_R50K_PATTERN = String.raw`'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s`;

/** tiktoken's cl100k_base pattern. */
export const TIKTOKEN_CL100K_PATTERN = String.raw`'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`;

/** Kimi K2 / K2.5 (tokenization_kimi.py `pat_str`). */
export const KIMI_PATTERN = [
  String.raw`[\p{Han}]+`,
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
  String.raw`\p{N}{1,3}`,
  String.raw` ?[^\s\p{L}\p{N}]+[\r\n]*`,
  String.raw`\s*[\r\n]+`,
  String.raw`\s+(?!\S)`,
  String.raw`\s+`,
].join("|");

/** GLM-4 (tokenization_chatglm.py): the cl100k pattern of tokenizer.json, run by tiktoken. */
export const GLM4_PATTERN = CL100K_PATTERN;
