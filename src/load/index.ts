/**
 * The loading layer: tokenizers (bundled, directory, tokenizer.json, hub cache), their chat
 * templates and special tokens, template selection, and `--date` parsing.
 *
 * Layer: load (imports `errors` only, plus @huggingface/tokenizers and xxhash-wasm).
 */

export { BUNDLED_TOKENIZERS } from "./bundled.js";
export { parseDate } from "./date.js";
export { hubCacheDir } from "./hub-cache.js";
export { clearTokenizerCache, loadTokenizer, loadTokenizerWith, MAX_CACHED_TOKENIZERS, shareTokenizer, untunedTokenizer } from "./load.js";
export { BpeTablesUnsupported, bpeTablesBytes } from "./bpe-tables.js";
export type { SharedTokenizer } from "./shared-core.js";
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
