/**
 * Patterns the Rust crate builds in rather than reads from tokenizer.json.
 *
 * Layer: encoder.
 */

/** ByteLevel's pattern (pre_tokenizers/byte_level.rs, `use_regex: true`), run with Oniguruma. */
export const GPT2_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
