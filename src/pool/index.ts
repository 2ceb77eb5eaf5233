/**
 * Worker pool: one Deltatok per worker thread, conversation affinity, CPU detection.
 * (src/pool/README.md explains the design.)
 */
export {
  DeltatokPool,
  maxWorkers,
  defaultWorkerHeapMb,
  WORKERS_PER_CPU,
  ENCODE_CHUNK_CHARS,
  ENCODE_CHUNK_TEXTS,
  type PoolOptions,
  type ResolvedPoolOptions,
  type BatchRunner,
  type PoolStats,
  type StartupProgress,
} from "./pool.js";
export { detectCpus, parseCpuList, type CpuInfo, type CpuDetectOptions } from "./cpus.js";
export { AffinityRouter, type RouterOptions, type RouterStats } from "./router.js";
export type { WorkerInfo, ReplayRecord, ReplayItemOptions } from "./protocol.js";
