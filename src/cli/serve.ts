/**
 * `deltatok serve`: the sidecar for harnesses in other languages (see src/serve/protocol.ts for
 * the protocol, clients/python for a client). JSON lines on stdio by default; `--port N` adds
 * HTTP on 127.0.0.1; `--no-stdio` serves HTTP only (until SIGTERM).
 */
import { Deltatok } from "../api/deltatok.js";
import type { DeltatokOptions } from "../api/options.js";
import { InProcessBackend } from "../serve/in-process.js";
import { serve } from "../serve/server.js";
import type { Backend } from "../serve/protocol.js";

export interface ServeCliOptions {
  engine: DeltatokOptions;
  stdio: boolean;
  port: number | undefined;
  /** Builds a pool backend when --workers N > 0 (injected by the CLI). */
  poolBackend?: (() => Promise<Backend>) | undefined;
}

export async function runServe(o: ServeCliOptions): Promise<number> {
  if (!o.stdio && o.port === undefined) throw new Error("serve: nothing to serve (--no-stdio without --port)");
  const backend = o.poolBackend !== undefined ? await o.poolBackend() : new InProcessBackend(await Deltatok.create(o.engine));
  const server = await serve({
    backend,
    stdio: o.stdio ? { input: process.stdin, output: process.stdout } : undefined,
    port: o.port,
  });
  if (server.port !== null) process.stderr.write(JSON.stringify({ listening: `http://127.0.0.1:${server.port}` }) + "\n");
  await server.closed;
  return 0;
}
