/**
 * deltatok's public API. Everything a user imports is named here; nothing else is public.
 */
export { Deltatok, type PromptResult, type DeltatokStats } from "./api/deltatok.js";
export type { DeltatokOptions, PromptOptions, MessageOptions, ResolvedOptions, TemplateBudgetOptions } from "./api/options.js";
export { ContextTooSmallError, type TrimOptions, type TrimPolicy, type TrimResult } from "./api/budget.js";
export { DeltatokError, ERROR_CODES, isDeltatokError, type ErrorCode, type ErrorRecord } from "./errors.js";
export type { Outcome, FallbackReason, SplicerStats } from "./splice/splicer.js";
/** @deprecated the splicer's counters are `SplicerStats`; this older name stays for callers that used it. */
export type { SplicerStats as EngineStats } from "./splice/splicer.js";
export { BUNDLED_TOKENIZERS, loadTokenizer, tokenizerCacheStats, type LoadedTokenizer, type LoadOptions, type PatternReport, type TokenizerCacheStats } from "./load/index.js";
export type { RendererKind } from "./render/renderer.js";
export { DeltatokPool, detectCpus, maxWorkers, defaultWorkerHeapMb, type PoolOptions, type PoolStats, type CpuInfo } from "./pool/index.js";
export {
  BatchQueue,
  type BatchQueueOptions,
  type QueueItem,
  type QueueResult,
  type DrainOptions,
  type DrainResult,
  type DrainProgress,
  type QueueStats,
} from "./queue/index.js";
export type { CorpusId, NumberId } from "./corpus/id.js";
export { serve, type ServeOptions, type RunningServer } from "./serve/server.js";
export { InProcessBackend } from "./serve/in-process.js";
export { PoolBackend } from "./serve/pool-backend.js";
export type { Backend } from "./serve/protocol.js";
export { TextStream, type TextCounterStats } from "./tokenize/stream.js";
export { MessageCounter, type TextCounter, type TextCounterOptions, type MessageCounterOptions, type MessageDelta, type ToolCallDelta, type StreamedMessage, type MessageCounterStats } from "./api/stream.js";
