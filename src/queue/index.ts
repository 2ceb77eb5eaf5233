/**
 * Batch queue for benchmark harnesses: enqueue items, results by callback, a live lane and a
 * drain with MLCommons endpoints' contract. (src/pool/README.md explains the design.)
 */
export { BatchQueue, systemClock, isInfrastructureError } from "./queue.js";
export type {
  BatchQueueOptions,
  QueueItem,
  TextItem,
  MessageItem,
  PromptItem,
  ConversationItem,
  ItemKind,
  QueueResult,
  ResultCallback,
  QueueClock,
  DrainOptions,
  DrainResult,
  DrainProgress,
  QueueStats,
} from "./types.js";
