/**
 * `deltatok serve`: the sidecar for harnesses in other languages (see src/serve/protocol.ts for
 * the protocol, clients/python for a client). JSON lines on stdio by default; `--port N` adds
 * HTTP (on 127.0.0.1 unless `--host`); `--no-stdio` serves HTTP only (until SIGTERM).
 */
import { isIP } from "node:net";
import { snakeKeys } from "../json/index.js";
import { Deltatok } from "../api/deltatok.js";
import type { DeltatokOptions } from "../api/options.js";
import { InProcessBackend } from "../serve/in-process.js";
import { resolveServeOptions, serve, type ServeOptions } from "../serve/server.js";
import type { Backend } from "../serve/protocol.js";

export interface ServeCliOptions {
  /** The options of the Deltatok that answers (each worker's, with a pool). */
  deltatok: DeltatokOptions;
  stdio: boolean;
  port: number | undefined;
  /** --host (default 127.0.0.1). */
  host?: string | undefined;
  /** --token, else DELTATOK_TOKEN. */
  token?: string | undefined;
  /** --allow-host, repeated. */
  allowHosts?: readonly string[] | undefined;
  /** Builds a pool backend when --workers N > 0 (injected by the CLI). */
  poolBackend?: (() => Promise<Backend>) | undefined;
}

export async function runServe(o: ServeCliOptions): Promise<number> {
  const http: Omit<ServeOptions, "backend"> = { port: o.port, host: o.host, token: o.token, allowHosts: o.allowHosts };
  resolveServeOptions({ backend: null as unknown as Backend, ...http }); // a bad flag fails before the Deltatok loads
  const backend = o.poolBackend !== undefined ? await o.poolBackend() : new InProcessBackend(await Deltatok.create(o.deltatok));
  const server = await serve({ backend, stdio: o.stdio ? { input: process.stdin, output: process.stdout } : undefined, ...http });
  if (server.port !== null) {
    const a = server.address ?? "127.0.0.1";
    process.stderr.write(JSON.stringify({ listening: `http://${isIP(a) === 6 ? `[${a}]` : a}:${server.port}` }) + "\n");
  }
  await server.closed;
  // with HTTP, what clients did (faults included) is worth a line; a stdio harness sees its answers
  const s = server.stats();
  if (s.http !== null) process.stderr.write(JSON.stringify(snakeKeys({ stopped: { answered: s.answered, http: s.http } })) + "\n");
  return 0;
}
