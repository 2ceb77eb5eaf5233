/**
 * The special-token variables a chat template sees, computed the way transformers 4.4x/4.5x does.
 *
 * What transformers does (src/transformers/tokenization_utils_base.py, `SpecialTokensMixin`,
 * `PreTrainedTokenizerBase.__init__`, `_from_pretrained`, `apply_chat_template`):
 * - `apply_chat_template` renders with `**self.special_tokens_map` (then the caller's kwargs).
 * - `special_tokens_map` walks `SPECIAL_TOKENS_ATTRIBUTES` (bos, eos, unk, sep, pad, cls, mask,
 *   additional_special_tokens) and keeps each attribute whose value is truthy, as `str(value)`:
 *   an AddedToken becomes its content, `None` and `""` are left out, and
 *   `additional_special_tokens` is a list of strings, left out when empty.
 * - A dict-valued `extra_special_tokens` in tokenizer_config.json is appended to
 *   `SPECIAL_TOKENS_ATTRIBUTES` (`_set_model_specific_special_tokens`), so its names (Gemma 3's
 *   `boi_token`, `image_token`, ...) are passed to the template too.
 * - AddedToken dicts are recognized by `"__type": "AddedToken"` (`convert_added_tokens`); deltatok
 *   also accepts a plain `{ "content": ... }` dict, which transformers would reject.
 * - Legacy layout: when tokenizer_config.json has no `added_tokens_decoder`, the values in
 *   special_tokens_map.json override the config's, and its additional_special_tokens are
 *   appended to the config's (`_from_pretrained`, "begin legacy" block).
 *
 * Not modelled: defaults from a tokenizer class's `__init__` (e.g. `Qwen2TokenizerFast`'s
 * `eos_token="<|endoftext|>"`) for a key the config leaves out entirely, and transformers v5,
 * which drops additional_special_tokens from the map.
 *
 * Layer: load.
 */

import { DeltatokError } from "../errors.js";

/** Named special-token attributes, in transformers' order. */
export const NAMED_SPECIAL_TOKENS = [
  "bos_token",
  "eos_token",
  "unk_token",
  "sep_token",
  "pad_token",
  "cls_token",
  "mask_token",
] as const;

/** Where a special-token value came from, for error messages. */
interface SourceFiles {
  readonly config: string;
  readonly specialTokensMap: string;
}

/**
 * A token value as text: a string as is, an AddedToken dict as its content, null/undefined as
 * undefined. Anything else is malformed (transformers raises a TypeError).
 */
function tokenText(value: unknown, file: string, field: string): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "object" && !Array.isArray(value)) {
    const content = (value as Record<string, unknown>)["content"];
    if (typeof content === "string") return content;
  }
  throw new DeltatokError(
    "DT_TOKENIZER_INVALID",
    `${file}: ${field} must be a string, an AddedToken object with a string "content", or null; got ${describe(value)}`,
    { path: field },
  );
}

function tokenList(value: unknown, file: string, field: string): string[] | undefined {
  if (value === null || value === undefined) return undefined;
  if (!Array.isArray(value)) {
    throw new DeltatokError("DT_TOKENIZER_INVALID", `${file}: ${field} must be a list; got ${describe(value)}`, {
      path: field,
    });
  }
  const out: string[] = [];
  value.forEach((v: unknown, i) => {
    const t = tokenText(v, file, `${field}[${i}]`);
    if (t === undefined) {
      throw new DeltatokError("DT_TOKENIZER_INVALID", `${file}: ${field}[${i}] is null`, { path: `${field}[${i}]` });
    }
    out.push(t);
  });
  return out;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "a list";
  if (value === null) return "null";
  return typeof value === "object" ? "an object" : `${typeof value} ${JSON.stringify(value)}`;
}

/** The effective special-token values (strings) after the legacy special_tokens_map.json merge. */
export interface ResolvedSpecialTokens {
  /** Named tokens: values may be "" (kept here; left out of the template variables). */
  readonly named: ReadonlyMap<string, string>;
  readonly additional: readonly string[] | undefined;
  /** Entries of a dict-valued extra_special_tokens, in file order. */
  readonly extra: ReadonlyMap<string, string>;
}

/**
 * Resolves special tokens from tokenizer_config.json and (legacy layout) special_tokens_map.json.
 * `specialTokensMap` is the parsed special_tokens_map.json or null when absent.
 */
export function resolveSpecialTokens(
  config: Readonly<Record<string, unknown>>,
  specialTokensMap: Readonly<Record<string, unknown>> | null,
  files: SourceFiles,
): ResolvedSpecialTokens {
  const named = new Map<string, string>();
  for (const key of NAMED_SPECIAL_TOKENS) {
    const t = tokenText(config[key], files.config, key);
    if (t !== undefined) named.set(key, t);
  }
  let additional = tokenList(config["additional_special_tokens"], files.config, "additional_special_tokens");

  const useLegacyMap = specialTokensMap !== null && !Object.hasOwn(config, "added_tokens_decoder");
  if (useLegacyMap) {
    for (const [key, value] of Object.entries(specialTokensMap)) {
      if (key === "additional_special_tokens") {
        const extra = tokenList(value, files.specialTokensMap, key);
        if (extra === undefined) {
          additional = undefined;
          continue;
        }
        const merged = [...(additional ?? [])];
        for (const t of extra) if (!merged.includes(t)) merged.push(t);
        additional = merged;
      } else if ((NAMED_SPECIAL_TOKENS as readonly string[]).includes(key)) {
        const t = tokenText(value, files.specialTokensMap, key);
        if (t === undefined) named.delete(key);
        else named.set(key, t);
      }
    }
  }

  const extra = new Map<string, string>();
  const extraRaw = config["extra_special_tokens"];
  if (extraRaw !== null && typeof extraRaw === "object" && !Array.isArray(extraRaw)) {
    for (const [key, value] of Object.entries(extraRaw as Record<string, unknown>)) {
      const t = tokenText(value, files.config, `extra_special_tokens.${key}`);
      if (t !== undefined) extra.set(key, t);
    }
  }
  return { named, additional, extra };
}

/**
 * The template variables: named tokens with a non-empty value, additional_special_tokens when
 * non-empty, then extra_special_tokens entries with a non-empty value. Frozen.
 */
export function specialTokenVariables(resolved: ResolvedSpecialTokens): Readonly<Record<string, string | string[]>> {
  const out: Record<string, string | string[]> = {};
  for (const key of NAMED_SPECIAL_TOKENS) {
    const v = resolved.named.get(key);
    if (v !== undefined && v !== "") out[key] = v;
  }
  if (resolved.additional !== undefined && resolved.additional.length > 0) {
    out["additional_special_tokens"] = Object.freeze([...resolved.additional]) as string[];
  }
  for (const [key, v] of resolved.extra) {
    if (v !== "") out[key] = v;
  }
  return Object.freeze(out);
}

/**
 * The tokenizer_config given to @huggingface/tokenizers: the config with its special tokens
 * flattened to strings (the library expects strings; AddedToken dicts would leak into its
 * special-token lists). The caller's config object is not modified.
 */
export function configForRuntime(
  config: Readonly<Record<string, unknown>>,
  resolved: ResolvedSpecialTokens,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const key of NAMED_SPECIAL_TOKENS) {
    const v = resolved.named.get(key);
    if (v !== undefined) out[key] = v;
    else if (key in out) out[key] = null;
  }
  if (resolved.additional !== undefined) out["additional_special_tokens"] = [...resolved.additional];
  else delete out["additional_special_tokens"];
  return out;
}
