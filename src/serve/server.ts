/**
 * `deltatok serve`: JSON lines over stdio and/or HTTP, answering through a Backend (in-process
 * Deltatok or worker pool). This file validates the options, starts the transports (stdio.ts,
 * http.ts), counts what is in flight and runs the shutdown; the protocol is in protocol.ts, who
 * may connect in guard.ts, and the threat model in DESIGN.md.
 *
 * Shutdown (close(), SIGTERM, SIGINT, or stdin ending in stdio mode), bounded by
 * `shutdownTimeoutMs`:
 *   1. stdio stops reading; HTTP stops accepting and ends idle keep-alive sockets;
 *   2. every request that reached the backend is answered (HTTP with `Connection: close`);
 *      requests that had not (new requests on open sockets, bodies still arriving) get 503
 *      DT_CLOSED once fully received;
 *   3. at the bound (or on a second signal) every socket still open is destroyed;
 *   4. the backend closes (a pool's drain is bounded by what is left of the same bound) and
 *      `closed` resolves.
 * When stdin ends, that is the end of the harness's input, not a request to stop: every line
 * read is answered however long it takes (HTTP still drains within the bound); a signal then
 * cuts the wait short.
 */
import { DeltatokError } from "../errors.js";
import { METHODS, MAX_REQUEST_BYTES, handleLine, type Backend, type Response } from "./protocol.js";
import { serveStdio, type StdioTransport } from "./stdio.js";
import { startHttp, type HttpFaults, type HttpTransport } from "./http.js";
import { checkAllowHost, checkToken, isLoopbackHost } from "./guard.js";
import type { Readable, Writable } from "node:stream";

export interface ServeOptions {
  backend: Backend;
  /** Serve JSON lines on these streams. @defaultValue none */
  stdio?: { input: Readable; output: Writable } | undefined;
  /** Serve HTTP on this port (0 = any free port). @defaultValue no HTTP */
  port?: number | undefined;
  /**
   * Address HTTP binds to. A non-loopback address (anything but 127.x.x.x, ::1, localhost)
   * requires `token`. @defaultValue "127.0.0.1"
   */
  host?: string | undefined;
  /**
   * Bearer token every HTTP request must carry (`Authorization: Bearer <token>`), else 401
   * DT_UNAUTHORIZED. Visible ASCII, no spaces. @defaultValue none (loopback only)
   */
  token?: string | undefined;
  /**
   * Host header values accepted besides the server's own addresses (for a proxy that passes
   * its public name through): `name` accepts that name with any port, `name:port` only that.
   * @defaultValue []
   */
  allowHosts?: readonly string[] | undefined;
  /** Largest request line (stdio) or body (HTTP), bytes. @defaultValue 268435456 (256 MiB) */
  maxRequestBytes?: number | undefined;
  /** HTTP: the request headers must arrive within this, ms. @defaultValue 10000 */
  headersTimeoutMs?: number | undefined;
  /** HTTP: the whole request (headers and body) must arrive within this, ms. @defaultValue 60000 */
  requestTimeoutMs?: number | undefined;
  /** HTTP: an idle keep-alive socket is closed after this, ms. @defaultValue 5000 */
  keepAliveTimeoutMs?: number | undefined;
  /** Shutdown bound: sockets still open this long after shutdown began are destroyed, ms. @defaultValue 10000 */
  shutdownTimeoutMs?: number | undefined;
  /** Stop on SIGTERM/SIGINT (a second one cuts the shutdown short). @defaultValue true */
  handleSignals?: boolean | undefined;
}

/** serve()'s defaults (DESIGN.md, "Threat model", lists them with the reasons). */
export const SERVE_DEFAULTS = Object.freeze({
  host: "127.0.0.1",
  maxRequestBytes: MAX_REQUEST_BYTES,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  shutdownTimeoutMs: 10_000,
});

export interface ServeStats {
  /** Answers written (stdio lines and HTTP responses). */
  answered: number;
  /** Requests being answered by the backend now. */
  inFlight: number;
  /** HTTP faults, counted (null without HTTP). */
  http: HttpFaults | null;
}

export interface RunningServer {
  /** The HTTP port actually bound, if HTTP is served. */
  readonly port: number | null;
  /** The HTTP address actually bound, if HTTP is served. */
  readonly address: string | null;
  /** Answers written so far. */
  readonly answered: () => number;
  /** Counters of answers and faults. */
  stats(): ServeStats;
  /** Stops accepting, answers what is in flight, closes the backend. Idempotent. */
  close(): Promise<void>;
  /** Resolves once the server has shut down (by close(), a signal, or stdin closing). */
  readonly closed: Promise<void>;
}

interface Resolved {
  host: string;
  token: string | null;
  allowHosts: readonly string[];
  maxRequestBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  shutdownTimeoutMs: number;
}

function positiveInt(name: string, v: unknown, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v <= 0) {
    throw new DeltatokError("DT_INVALID_OPTION", `${name} must be a positive integer, got ${String(v)}`, { path: name });
  }
  return v;
}

/** Validates serve()'s options into a frozen, fully resolved object. */
export function resolveServeOptions(o: ServeOptions): Readonly<Resolved> {
  if (o.port !== undefined && (typeof o.port !== "number" || !Number.isSafeInteger(o.port) || o.port < 0 || o.port > 65535)) {
    throw new DeltatokError("DT_INVALID_OPTION", `port must be 0..65535, got ${String(o.port)}`, { path: "port" });
  }
  const host = o.host ?? SERVE_DEFAULTS.host;
  if (typeof host !== "string" || host === "") throw new DeltatokError("DT_INVALID_OPTION", "host must be a non-empty string", { path: "host" });
  const token = o.token ?? null;
  if (token !== null) checkToken(token);
  if (!isLoopbackHost(host) && token === null) {
    throw new DeltatokError("DT_INVALID_OPTION", `host ${host} is reachable from other machines: a token is required (--token or DELTATOK_TOKEN)`, { path: "token" });
  }
  const allowHosts = o.allowHosts ?? [];
  if (!Array.isArray(allowHosts)) throw new DeltatokError("DT_INVALID_OPTION", "allowHosts must be a list of host names", { path: "allowHosts" });
  for (const h of allowHosts) checkAllowHost(h);
  const r: Resolved = {
    host,
    token,
    allowHosts: Object.freeze([...allowHosts]),
    maxRequestBytes: positiveInt("maxRequestBytes", o.maxRequestBytes, SERVE_DEFAULTS.maxRequestBytes),
    headersTimeoutMs: positiveInt("headersTimeoutMs", o.headersTimeoutMs, SERVE_DEFAULTS.headersTimeoutMs),
    requestTimeoutMs: positiveInt("requestTimeoutMs", o.requestTimeoutMs, SERVE_DEFAULTS.requestTimeoutMs),
    keepAliveTimeoutMs: positiveInt("keepAliveTimeoutMs", o.keepAliveTimeoutMs, SERVE_DEFAULTS.keepAliveTimeoutMs),
    shutdownTimeoutMs: positiveInt("shutdownTimeoutMs", o.shutdownTimeoutMs, SERVE_DEFAULTS.shutdownTimeoutMs),
  };
  if (r.requestTimeoutMs < r.headersTimeoutMs) {
    throw new DeltatokError("DT_INVALID_OPTION", `requestTimeoutMs (${r.requestTimeoutMs}) must be at least headersTimeoutMs (${r.headersTimeoutMs})`, { path: "requestTimeoutMs" });
  }
  return Object.freeze(r);
}

export async function serve(o: ServeOptions): Promise<RunningServer> {
  const backend = o.backend;
  let opts: Readonly<Resolved>;
  try {
    opts = resolveServeOptions(o);
  } catch (e) {
    await backend.close(); // serve() owns the backend: a failed start closes it
    throw e;
  }
  let inFlight = 0;
  let answered = 0;
  let closing = false;
  let idle: (() => void) | null = null;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  let resolveForced!: () => void;
  const forced = new Promise<void>((r) => (resolveForced = r));
  let wasForced = false;
  const force = () => {
    wasForced = true;
    resolveForced();
  };

  const track = async (p: Promise<Response>): Promise<Response> => {
    inFlight++;
    try {
      return await p;
    } finally {
      inFlight--;
      if (inFlight === 0 && idle !== null) idle();
    }
  };
  const onAnswered = () => void answered++;

  let http: HttpTransport | null = null;
  if (o.port !== undefined) {
    http = await startHttp({
      backend,
      host: opts.host,
      port: o.port,
      token: opts.token,
      allowHosts: opts.allowHosts,
      maxBodyBytes: opts.maxRequestBytes,
      headersTimeoutMs: opts.headersTimeoutMs,
      requestTimeoutMs: opts.requestTimeoutMs,
      keepAliveTimeoutMs: opts.keepAliveTimeoutMs,
      track,
      closing: () => closing,
      onAnswered,
    }).catch(async (e: unknown) => {
      await backend.close(); // serve() owns the backend: a failed start closes it
      throw e;
    });
  }

  let stdio: StdioTransport | null = null;
  if (o.stdio !== undefined) {
    stdio = serveStdio({
      input: o.stdio.input,
      output: o.stdio.output,
      maxLineBytes: opts.maxRequestBytes,
      answer: (line) => track(handleLine(backend, line)),
      closing: () => closing,
      onEnd: () => void shutdown(true),
      onAnswered,
    });
  }

  // ---- shutdown ----
  const withDeadline = async (p: Promise<void>, deadline: number): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const bound = Number.isFinite(deadline) ? [new Promise<void>((r) => (timer = setTimeout(r, Math.max(0, deadline - performance.now()))))] : [];
    await Promise.race([p, ...bound, forced]);
    clearTimeout(timer);
  };
  let shutdownPromise: Promise<void> | null = null;
  /** @param inputEnded stdin ended: answer every line read, with no bound on the backend. */
  function shutdown(inputEnded = false): Promise<void> {
    shutdownPromise ??= (async () => {
      closing = true;
      const deadline = performance.now() + opts.shutdownTimeoutMs;
      const workDeadline = inputEnded ? Infinity : deadline;
      stdio?.stop();
      await http?.drain(deadline, forced);
      if (inFlight > 0) await withDeadline(new Promise<void>((r) => (idle = r)), workDeadline);
      if (stdio !== null) await withDeadline(stdio.flushed(), workDeadline);
      await backend.close(inputEnded && !wasForced ? {} : { timeoutMs: Math.max(0, deadline - performance.now()) });
      if (o.handleSignals !== false) {
        process.off("SIGTERM", onSignal);
        process.off("SIGINT", onSignal);
      }
      resolveClosed();
    })();
    return shutdownPromise;
  }
  const onSignal = () => {
    if (shutdownPromise !== null) force(); // a second signal: stop waiting
    void shutdown();
  };
  if (o.handleSignals !== false) {
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  }

  return {
    port: http?.port ?? null,
    address: http?.address ?? null,
    answered: () => answered,
    stats: () => ({ answered, inFlight, http: http === null ? null : { ...http.faults, rejected: { ...http.faults.rejected } } }),
    close: () => shutdown(),
    closed,
  };
}

export { METHODS };
