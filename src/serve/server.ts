/**
 * `deltatok serve`: JSON lines over stdio and/or HTTP on a loopback port, answering through a
 * Backend (in-process engine or worker pool). Node's own http module is enough: one route
 * table, JSON bodies, no middleware.
 *
 * HTTP routes (127.0.0.1 only):
 *   POST /rpc              body = a request envelope {id, method, params}; answer = response envelope
 *   POST /v1/<method>      body = params; answer = {id: null, result} or {id: null, error}
 *   GET  /health, /stats   answer = response envelope
 * Status: 200 when the request was processed (its result or its coded error is in the body),
 * 400 when the body is not JSON or not an envelope, 404 unknown path, 405 wrong verb, 413 body
 * too large, 503 while shutting down.
 *
 * Shutdown (SIGTERM, SIGINT, or stdin closing in stdio mode): stop accepting, answer everything
 * in flight, close the backend, resolve `closed`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createInterface } from "node:readline";
import type { AddressInfo } from "node:net";
import type { Readable, Writable } from "node:stream";
import { once } from "node:events";
import { DeltatokError } from "../errors.js";
import { pythonJsonParser } from "../api/json.js";
import { METHODS, MAX_REQUEST_BYTES, dispatch, handleLine, parseEnvelope, EnvelopeError, type Backend, type Response } from "./protocol.js";

export interface ServeOptions {
  backend: Backend;
  /** Serve JSON lines on these streams (default: none). */
  stdio?: { input: Readable; output: Writable } | undefined;
  /** Serve HTTP on 127.0.0.1:port (0 = any free port). */
  port?: number | undefined;
  /** Stop on SIGTERM/SIGINT. @defaultValue true */
  handleSignals?: boolean;
}

export interface RunningServer {
  /** The HTTP port actually bound, if HTTP is served. */
  readonly port: number | null;
  /** Requests answered so far. */
  readonly answered: () => number;
  /** Stops accepting, answers what is in flight, closes the backend. Idempotent. */
  close(): Promise<void>;
  /** Resolves once the server has shut down (by close(), a signal, or stdin closing). */
  readonly closed: Promise<void>;
}

export async function serve(o: ServeOptions): Promise<RunningServer> {
  const backend = o.backend;
  let inFlight = 0;
  let answered = 0;
  let closing = false;
  let idle: (() => void) | null = null;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));

  const track = async (p: Promise<Response>): Promise<Response> => {
    inFlight++;
    try {
      return await p;
    } finally {
      inFlight--;
      answered++;
      if (inFlight === 0 && idle !== null) idle();
    }
  };

  // ---- stdio ----
  let stopStdio: (() => void) | null = null;
  if (o.stdio !== undefined) {
    const { input, output } = o.stdio;
    const rl = createInterface({ input, crlfDelay: Infinity });
    let pending = "";
    let flushing = false;
    const flush = () => {
      if (flushing || pending === "") return;
      const chunk = pending;
      pending = "";
      if (!output.write(chunk)) {
        flushing = true;
        rl.pause();
        output.once("drain", () => {
          flushing = false;
          rl.resume();
          flush();
        });
      }
    };
    const write = (r: Response) => {
      pending += JSON.stringify(r) + "\n";
      queueMicrotask(flush);
    };
    rl.on("line", (line) => {
      if (line.trim() === "") return;
      if (closing) {
        write({ id: null, error: new DeltatokError("DT_CLOSED", "the server is shutting down").toJSON() });
        return;
      }
      if (line.length > MAX_REQUEST_BYTES) {
        write({ id: null, error: new DeltatokError("DT_INPUT_TOO_LARGE", `a request line is larger than ${MAX_REQUEST_BYTES} bytes`).toJSON() });
        return;
      }
      void track(handleLine(backend, line)).then(write);
    });
    rl.on("close", () => void shutdown());
    stopStdio = () => rl.close();
  }

  // ---- HTTP ----
  let http: Server | null = null;
  let port: number | null = null;
  if (o.port !== undefined) {
    http = createServer((req, res) => void route(req, res));
    http.listen(o.port, "127.0.0.1");
    await once(http, "listening");
    port = (http.address() as AddressInfo).port;
  }

  function send(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) });
    res.end(text);
  }

  async function readBody(req: IncomingMessage): Promise<string | null> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > MAX_REQUEST_BYTES) return null;
      chunks.push(c as Buffer);
    }
    return Buffer.concat(chunks).toString("utf8");
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const path = url.pathname;
    if (closing) return send(res, 503, { id: null, error: new DeltatokError("DT_CLOSED", "the server is shutting down").toJSON() });
    if (req.method === "GET" && (path === "/health" || path === "/stats")) {
      return send(res, 200, await track(dispatch(backend, { id: null, method: path.slice(1) as "health" | "stats", params: {} })));
    }
    const v1 = /^\/v1\/([a-z_]+)$/.exec(path);
    if (path !== "/rpc" && v1 === null) return send(res, 404, { id: null, error: new DeltatokError("DT_INVALID_REQUEST", `no route ${path}`).toJSON() });
    if (req.method !== "POST") return send(res, 405, { id: null, error: new DeltatokError("DT_INVALID_REQUEST", `${path} takes POST`).toJSON() });
    const body = await readBody(req);
    if (body === null) return send(res, 413, { id: null, error: new DeltatokError("DT_INPUT_TOO_LARGE", `request body over ${MAX_REQUEST_BYTES} bytes`).toJSON() });
    let v: unknown;
    try {
      v = pythonJsonParser(body);
    } catch (e) {
      return send(res, 400, { id: null, error: new DeltatokError("DT_INVALID_JSON", `body is not valid JSON: ${(e as Error).message}`).toJSON() });
    }
    try {
      const env = v1 !== null ? parseEnvelope({ id: null, method: v1[1], params: v }) : parseEnvelope(v);
      send(res, 200, await track(dispatch(backend, env)));
    } catch (e) {
      const err = e instanceof EnvelopeError ? e : new EnvelopeError(null, new DeltatokError("DT_INTERNAL", String(e)));
      send(res, err.error.code === "DT_UNKNOWN_METHOD" && v1 !== null ? 404 : 400, { id: err.id, error: err.error.toJSON() });
    }
  }

  // ---- shutdown ----
  let shutdownPromise: Promise<void> | null = null;
  function shutdown(): Promise<void> {
    shutdownPromise ??= (async () => {
      closing = true;
      stopStdio?.();
      if (http !== null) {
        http.closeIdleConnections?.();
        await new Promise<void>((r) => http?.close(() => r()));
      }
      if (inFlight > 0) await new Promise<void>((r) => (idle = r));
      await backend.close();
      if (o.handleSignals !== false) {
        process.off("SIGTERM", onSignal);
        process.off("SIGINT", onSignal);
      }
      resolveClosed();
    })();
    return shutdownPromise;
  }
  const onSignal = () => void shutdown();
  if (o.handleSignals !== false) {
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  }

  return { port, answered: () => answered, close: shutdown, closed };
}

export { METHODS };
