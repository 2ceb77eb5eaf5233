/**
 * The tiktoken model families deltatok knows: their pre-tokenizer pattern (the fallback when a
 * directory names none), how their special tokens are numbered, and how a directory is
 * recognized as one of them.
 *
 * | family | pattern from | special tokens | recognized by |
 * |---|---|---|---|
 * | kimi | tokenization_kimi.py (K2/K2.5) | 256 ids right after the ranks, named from `added_tokens_decoder`, else `<\|reserved_token_{id}\|>`; long texts cut (kimi-chunks.ts) | `tokenization_kimi.py`, or `auto_map` naming `tokenization_kimi.*` |
 * | glm4 | tokenization_chatglm.py (GLM-4 chat) | 14 fixed names right after the ranks | `tokenization_chatglm.py` with a tiktoken rank file, or `auto_map` naming `ChatGLM4Tokenizer` |
 * | o200k_base, cl100k_base, p50k_base, r50k_base | tiktoken 0.14 `tiktoken_ext/openai_public.py` | fixed ids | the rank file's sha256 (tiktoken's expected hashes) or the name |
 *
 * Rank ranges: gaps are allowed (p50k_base's rank file has one at 50256, where `<|endoftext|>`
 * sits), but a special id that is also a rank is refused (Kimi and GLM-4 number their specials
 * from the rank count, so a gapped rank file can collide).
 *
 * Layer: load.
 */

import { DeltatokError } from "../../errors.js";
import type { TiktokenRanks } from "./tiktoken-ranks.js";

export type TiktokenFamilyName = "kimi" | "glm4" | "o200k_base" | "cl100k_base" | "p50k_base" | "r50k_base";

export interface TiktokenFamily {
  readonly name: TiktokenFamilyName;
  /** The pre-tokenizer pattern (tiktoken / fancy-regex syntax). */
  readonly pattern: string;
  /** How special-token ids are assigned: after the ranks (kimi, glm4) or fixed. */
  readonly specials: "kimi" | "glm4" | "fixed";
  /** For `fixed`: text → id. */
  readonly fixedSpecials: Readonly<Record<string, number>>;
  /** Long texts are cut as Kimi cuts them before encoding. */
  readonly kimiChunks: boolean;
  /** sha256 of the published rank file (OpenAI encodings), for recognizing it. */
  readonly rankFileSha256: string | null;
}

const R50K_PATTERN = String.raw`'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s`;
const CL100K_PATTERN = String.raw`'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`;
const O200K_PATTERN = [
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
  String.raw`\p{N}{1,3}`,
  String.raw` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
  String.raw`\s*[\r\n]+`,
  String.raw`\s+(?!\S)`,
  String.raw`\s+`,
].join("|");
const KIMI_PATTERN = [
  String.raw`[\p{Han}]+`,
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
  String.raw`\p{N}{1,3}`,
  String.raw` ?[^\s\p{L}\p{N}]+[\r\n]*`,
  String.raw`\s*[\r\n]+`,
  String.raw`\s+(?!\S)`,
  String.raw`\s+`,
].join("|");
const GLM4_PATTERN = String.raw`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`;

/** GLM-4's special tokens, numbered from the rank count in this order (tokenization_chatglm.py). */
export const GLM4_SPECIAL_NAMES: readonly string[] = [
  "<|endoftext|>", "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>", "<|system|>", "<|user|>", "<|assistant|>",
  "<|observation|>", "<|begin_of_image|>", "<|end_of_image|>", "<|begin_of_video|>", "<|end_of_video|>",
];

/** Number of special ids Kimi reserves after the ranks. */
export const KIMI_RESERVED_SPECIALS = 256;

function family(
  name: TiktokenFamilyName,
  pattern: string,
  specials: TiktokenFamily["specials"],
  fixedSpecials: Record<string, number>,
  rankFileSha256: string | null,
): TiktokenFamily {
  return Object.freeze({
    name,
    pattern,
    specials,
    fixedSpecials: Object.freeze(fixedSpecials),
    kimiChunks: name === "kimi",
    rankFileSha256,
  });
}

export const TIKTOKEN_FAMILIES: Readonly<Record<TiktokenFamilyName, TiktokenFamily>> = Object.freeze({
  kimi: family("kimi", KIMI_PATTERN, "kimi", {}, null),
  glm4: family("glm4", GLM4_PATTERN, "glm4", {}, null),
  o200k_base: family("o200k_base", O200K_PATTERN, "fixed", { "<|endoftext|>": 199999, "<|endofprompt|>": 200018 },
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
  cl100k_base: family("cl100k_base", CL100K_PATTERN, "fixed",
    { "<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276 },
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
  p50k_base: family("p50k_base", R50K_PATTERN, "fixed", { "<|endoftext|>": 50256 },
    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"),
  r50k_base: family("r50k_base", R50K_PATTERN, "fixed", { "<|endoftext|>": 50256 },
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"),
});

/** What a directory says about its tokenizer, for recognizing a family. */
export interface FamilyEvidence {
  /** Names of the `tokenization_*.py` files in the directory. */
  readonly pythonFiles: readonly string[];
  /** tokenizer_config.json's `auto_map.AutoTokenizer` slow class (`module.Class`), if any. */
  readonly autoMapTokenizer: string | null;
  /** sha256 (hex) of the rank file. */
  readonly rankFileSha256: string | null;
}

/** The family a directory belongs to and why, or null when nothing matches. */
export function identifyTiktokenFamily(evidence: FamilyEvidence): { family: TiktokenFamily; reason: string } | null {
  const auto = evidence.autoMapTokenizer ?? "";
  if (auto.startsWith("tokenization_kimi.")) return { family: TIKTOKEN_FAMILIES.kimi, reason: `auto_map names ${auto}` };
  if (auto.endsWith(".ChatGLM4Tokenizer")) return { family: TIKTOKEN_FAMILIES.glm4, reason: `auto_map names ${auto}` };
  if (evidence.pythonFiles.includes("tokenization_kimi.py")) return { family: TIKTOKEN_FAMILIES.kimi, reason: "tokenization_kimi.py" };
  if (evidence.pythonFiles.includes("tokenization_chatglm.py")) return { family: TIKTOKEN_FAMILIES.glm4, reason: "tokenization_chatglm.py" };
  for (const f of Object.values(TIKTOKEN_FAMILIES)) {
    if (f.rankFileSha256 !== null && f.rankFileSha256 === evidence.rankFileSha256) {
      return { family: f, reason: `the rank file is ${f.name}'s (sha256)` };
    }
  }
  return null;
}

/** A special token of a tiktoken model. */
export interface TiktokenSpecialToken {
  readonly id: number;
  readonly text: string;
}

/**
 * Kimi's special tokens: ids n .. n+255 (n = rank count), each named by `added_tokens_decoder`
 * (id → content) when it names that id, else `<|reserved_token_{id}|>`. As in Kimi's Python dict,
 * when two ids get the same name the later id keeps it and the earlier one is gone. Sorted by id.
 */
export function kimiSpecialTokens(rankCount: number, addedTokensDecoder: ReadonlyMap<number, string> | null): TiktokenSpecialToken[] {
  const byName = new Map<string, number>();
  for (let id = rankCount; id < rankCount + KIMI_RESERVED_SPECIALS; id++) {
    byName.set(addedTokensDecoder?.get(id) ?? `<|reserved_token_${id}|>`, id);
  }
  return [...byName].map(([text, id]) => ({ id, text })).sort((a, b) => a.id - b.id);
}

/** GLM-4's special tokens: GLM4_SPECIAL_NAMES numbered from the rank count. */
export function glm4SpecialTokens(rankCount: number): TiktokenSpecialToken[] {
  return GLM4_SPECIAL_NAMES.map((text, k) => ({ id: rankCount + k, text }));
}

/**
 * The special tokens of a family over `ranks`. Refuses a layout whose special ids collide with
 * ranks (a Kimi or GLM-4 rank file with gaps; a fixed layout over another vocabulary).
 */
export function familySpecialTokens(
  f: TiktokenFamily,
  ranks: TiktokenRanks,
  addedTokensDecoder: ReadonlyMap<number, string> | null,
  file: string,
): TiktokenSpecialToken[] {
  const specials =
    f.specials === "kimi"
      ? kimiSpecialTokens(ranks.size, addedTokensDecoder)
      : f.specials === "glm4"
        ? glm4SpecialTokens(ranks.size)
        : Object.entries(f.fixedSpecials).map(([text, id]) => ({ id, text })).sort((a, b) => a.id - b.id);
  for (const s of specials) {
    if (hasRank(ranks, s.id)) {
      throw new DeltatokError(
        "DT_TOKENIZER_INVALID",
        `${file}: ${f.name} gives special token ${JSON.stringify(s.text)} id ${s.id}, which is also a rank of the rank file`,
      );
    }
  }
  return specials;
}

/** Whether `rank` is one of the ranks. */
export function hasRank(ranks: TiktokenRanks, rank: number): boolean {
  if (ranks.dense) return rank >= 0 && rank < ranks.size;
  let lo = 0;
  let hi = ranks.size - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const r = ranks.ranks[mid] as number;
    if (r === rank) return true;
    if (r < rank) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** Added-token entries of tokenizer_config.json (`added_tokens_decoder`), id → content. */
export function addedTokenContents(config: unknown, file: string): Map<number, string> | null {
  if (typeof config !== "object" || config === null) return null;
  const decoder = (config as Record<string, unknown>).added_tokens_decoder;
  if (decoder === undefined || decoder === null) return null;
  if (typeof decoder !== "object" || Array.isArray(decoder)) {
    throw new DeltatokError("DT_TOKENIZER_INVALID", `${file}: added_tokens_decoder must be an object`, { path: "added_tokens_decoder" });
  }
  const out = new Map<number, string>();
  for (const [key, entry] of Object.entries(decoder as Record<string, unknown>)) {
    const path = `added_tokens_decoder.${key}`;
    if (!/^(0|[1-9][0-9]*)$/.test(key) || Number(key) > 0xffffffff) {
      throw new DeltatokError("DT_TOKENIZER_INVALID", `${file}: ${path}: the key must be a token id`, { path });
    }
    const content = (entry as { content?: unknown } | null)?.content;
    if (typeof content !== "string") {
      throw new DeltatokError("DT_TOKENIZER_INVALID", `${file}: ${path}.content must be a string`, { path: `${path}.content` });
    }
    out.set(Number(key), content);
  }
  return out;
}
