/**
 * How the workers of a pool get their tokenizer: the BPE tables are built once, in a short-lived
 * thread (tables-builder.ts: the parse's garbage leaves with it), as SharedArrayBuffers
 * (src/load/shared-core.ts), and every worker attaches to them, instead of each reading,
 * parsing and building tokenizer.json itself (src/pool/README.md, "Shared tokenizer
 * tables"). A model the tables cannot describe is loaded per worker as before, with a warning
 * (`DELTATOK_TABLES_UNSHARED`): never silently.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { DeltatokError, toDeltatokError, type ErrorCode, type ErrorRecord } from "../errors.js";
import { sharedTokenizerBytes, type SharedTokenizer } from "../load/index.js";

/** What the pool's workers load from. */
export interface WorkerTables {
  /** The shared tables, or null: every worker loads its own tokenizer. */
  readonly shared: SharedTokenizer | null;
  /** Bytes of the shared buffers (0 when not shared). */
  readonly bytes: number;
  /** Why the tables are not shared ("option": `shareTables: false`), when they are not. */
  readonly unshared?: string;
}

type BuilderReply = { ok: true; shared: SharedTokenizer } | { ok: false; unsupported: string } | { ok: false; error: ErrorRecord };

/** The builder module: compiled JS next to this file, or the TypeScript source under tsx. */
function builderModule(): { filename: string; execArgv: string[] | undefined } {
  const js = fileURLToPath(new URL("./tables-builder.js", import.meta.url));
  if (existsSync(js)) return { filename: js, execArgv: undefined };
  const ts = fileURLToPath(new URL("./tables-builder.ts", import.meta.url));
  const hasTsx = process.execArgv.some((a) => a.includes("tsx"));
  return { filename: ts, execArgv: hasTsx ? undefined : [...process.execArgv, "--import", "tsx"] };
}

/** Builds the tables in a thread of their own, which exits once it has posted them. */
function buildInThread(spec: string, pattern: string | undefined, cacheDir: string | undefined): Promise<BuilderReply> {
  const { filename, execArgv } = builderModule();
  return new Promise<BuilderReply>((resolve, reject) => {
    let reply: BuilderReply | undefined;
    const w = new Worker(filename, { workerData: { spec, pattern, cacheDir }, ...(execArgv === undefined ? {} : { execArgv }) });
    w.once("message", (m: BuilderReply) => {
      reply = m;
      resolve(m);
    });
    w.once("error", (e) => reject(e));
    w.once("exit", (code) => {
      if (reply === undefined) reject(new Error(`the table builder thread exited (code ${code}) without an answer`));
    });
  });
}

/**
 * Shares the tokenizer `spec` names (with the Deltatok's `pattern` option, for a tiktoken rank
 * file, and its `tokenizerCacheDir`) for the workers. Rejects DT_WORKER_STARTUP (cause: the load's
 * coded error) when it does not load, as a worker's own load would have.
 */
export async function tablesForWorkers(spec: string, share: boolean, pattern?: string, cacheDir?: string): Promise<WorkerTables> {
  if (!share) return { shared: null, bytes: 0, unshared: "option" };
  let reply: BuilderReply;
  try {
    reply = await buildInThread(spec, pattern, cacheDir);
  } catch (e) {
    reply = { ok: false, error: toDeltatokError(e, "DT_INTERNAL").toJSON() };
  }
  if (reply.ok) return { shared: reply.shared, bytes: sharedTokenizerBytes(reply.shared) };
  if ("unsupported" in reply) {
    process.emitWarning(`tokenizer ${spec}: each worker loads its own tables (${reply.unsupported})`, { code: "DELTATOK_TABLES_UNSHARED" });
    return { shared: null, bytes: 0, unshared: reply.unsupported };
  }
  const r = reply.error;
  const cause = new DeltatokError(r.code as ErrorCode, r.message, r.path === undefined ? {} : { path: r.path });
  throw new DeltatokError("DT_WORKER_STARTUP", `the workers' tokenizer failed to load: ${cause.code}: ${cause.message}`, {
    cause,
    ...(cause.path === undefined ? {} : { path: cause.path }),
  });
}
