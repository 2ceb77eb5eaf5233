/**
 * The loading layer: tokenizers (bundled, directory, tokenizer.json, hub cache), their chat
 * templates and special tokens, template selection, and `--date` parsing.
 *
 * Layer: load (imports `errors` and `encoder`, plus xxhash-wasm; @huggingface/tokenizers only for the fallback).
 */

export { BUNDLED_TOKENIZERS } from "./bundled.js";
export { parseDate } from "./date.js";
export { hubCacheDir } from "./hub-cache.js";
export { clearTokenizerCache, loadTokenizer, loadTokenizerWith, MAX_CACHED_TOKENIZERS, shareTokenizer } from "./load.js";
export { sharedTokenizerBytes, TablesUnsupported, type SharedTokenizer } from "./shared-core.js";
export { DEFAULT_CACHE_MAX_BYTES, tokenizerCacheStats, type TokenizerCacheStats } from "./disk-cache.js";
export { referenceTokenizer, type ReferenceTokenizer } from "./reference.js";
export { selectTemplate } from "./select.js";
export { shownFile, tokenizerLabel } from "./display.js";
export type {
  AddedTokenJson,
  JsonValue,
  LoadedTokenizer,
  LoadOptions,
  PatternReport,
  TemplateRequest,
  TokenizerComponentJson,
  TokenizerJson,
  TokenizerModelJson,
  TokenizerOrigin,
} from "./types.js";
