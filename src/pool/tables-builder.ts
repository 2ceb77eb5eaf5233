/**
 * The short-lived thread that builds a pool's shared tokenizer tables (src/pool/tables.ts):
 * it loads tokenizer.json, builds the tables in SharedArrayBuffers, posts them and exits, so the
 * parse's garbage dies with its isolate instead of staying in the main thread's resident set.
 * Answers `{ok: true, shared}`, `{ok: false, unsupported}` (no shared form) or `{ok: false, error}`.
 */
import { parentPort, workerData } from "node:worker_threads";
import { toDeltatokError } from "../errors.js";
import { shareTokenizer, TablesUnsupported } from "../load/index.js";

const { spec, pattern, cacheDir } = workerData as { spec: string; pattern?: string; cacheDir?: string };
try {
  const shared = await shareTokenizer(spec, { ...(pattern === undefined ? {} : { pattern }), ...(cacheDir === undefined ? {} : { cacheDir }) });
  parentPort?.postMessage({ ok: true, shared });
} catch (e) {
  if (e instanceof TablesUnsupported) parentPort?.postMessage({ ok: false, unsupported: e.message });
  else parentPort?.postMessage({ ok: false, error: toDeltatokError(e).toJSON() });
}
