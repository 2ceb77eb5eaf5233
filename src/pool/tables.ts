/**
 * How the workers of a pool get their tokenizer: the main thread shares its BPE tables once
 * (SharedArrayBuffers, src/load/shared-core.ts) and every worker attaches to them, instead of
 * each reading, parsing and building tokenizer.json itself (DESIGN.md, "Worker memory: shared
 * tables"). A model the tables cannot describe is loaded per worker as before, with a warning
 * (`DELTATOK_TABLES_UNSHARED`): never silently.
 */
import { DeltatokError, toDeltatokError } from "../errors.js";
import { BpeTablesUnsupported, bpeTablesBytes, shareTokenizer, type SharedTokenizer } from "../load/index.js";

/** What the pool's workers load from. */
export interface WorkerTables {
  /** The shared tables, or null: every worker loads its own tokenizer. */
  readonly shared: SharedTokenizer | null;
  /** Bytes of the shared buffers (0 when not shared). */
  readonly bytes: number;
  /** Why the tables are not shared ("option": `shareTables: false`), when they are not. */
  readonly unshared?: string;
}

/**
 * Shares the tokenizer `spec` names for the workers. Rejects DT_WORKER_STARTUP (cause: the load's
 * coded error) when it does not load, as a worker's own load would have.
 */
export async function tablesForWorkers(spec: string, share: boolean): Promise<WorkerTables> {
  if (!share) return { shared: null, bytes: 0, unshared: "option" };
  try {
    const shared = await shareTokenizer(spec);
    return { shared, bytes: bpeTablesBytes(shared.tables) };
  } catch (e) {
    if (e instanceof BpeTablesUnsupported) {
      process.emitWarning(`tokenizer ${spec}: each worker loads its own tables (${e.message})`, { code: "DELTATOK_TABLES_UNSHARED" });
      return { shared: null, bytes: 0, unshared: e.message };
    }
    const cause = toDeltatokError(e);
    throw new DeltatokError("DT_WORKER_STARTUP", `the workers' tokenizer failed to load: ${cause.code}: ${cause.message}`, {
      cause,
      ...(cause.path === undefined ? {} : { path: cause.path }),
    });
  }
}
