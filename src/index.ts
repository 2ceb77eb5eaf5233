/**
 * deltatok's public API. Everything a user imports is named here; nothing else is public.
 */
export { Deltatok, type PromptResult, type DeltatokStats } from "./api/deltatok.js";
export type { DeltatokOptions, PromptOptions, MessageOptions, ResolvedOptions } from "./api/options.js";
export { DeltatokError, ERROR_CODES, isDeltatokError, type ErrorCode, type ErrorRecord } from "./errors.js";
export type { Outcome, FallbackReason, EngineStats } from "./engine/engine.js";
export { BUNDLED_TOKENIZERS, loadTokenizer, type LoadedTokenizer, type LoadOptions } from "./load/index.js";
export type { RendererKind } from "./render/renderer.js";
