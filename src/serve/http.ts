/**
 * The sidecar's HTTP transport (Node's own http module: one route table, JSON bodies, no
 * middleware), built so that no client can take it down or stall its shutdown:
 *
 * - every socket and request error is handled: a client that drops its connection mid-body, or
 *   resets it, costs only its own request; answers to a socket that went away are dropped;
 * - timeouts: headers must arrive within `headersTimeoutMs`, the whole request (headers and
 *   body) within `requestTimeoutMs`; else 408 DT_REQUEST_TIMEOUT where an answer can still be
 *   written, and the socket is closed;
 * - the guard (guard.ts) runs on the headers before any body is read;
 * - graceful drain (see `drain`): stop accepting, answer what is in flight, 503 the rest once its
 *   request has fully arrived, close idle keep-alive sockets, destroy what is left at the bound.
 *
 * Routes and status codes are documented in protocol.ts.
 */
import { STATUS_CODES, createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Server as NetServer, type AddressInfo, type Socket } from "node:net";
import { DeltatokError, type ErrorCode } from "../errors.js";
import { parseRequestLine } from "./request-json.js";
import { dispatch, parseEnvelope, EnvelopeError, type Backend, type Response } from "./protocol.js";
import { buildGuard, checkHeaders, type Guard } from "./guard.js";
import { decodeUtf8, skimId } from "./lines.js";
import { keepIdText, responseText } from "./wire-id.js";

export interface HttpTransportOptions {
  backend: Backend;
  host: string;
  port: number;
  token: string | null;
  allowHosts: readonly string[];
  maxBodyBytes: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** Counts a request as in flight while the backend answers it. */
  track: (p: Promise<Response>) => Promise<Response>;
  /** True once the server is shutting down. */
  closing: () => boolean;
  onAnswered: () => void;
}

/** HTTP counters: what arrived, and what went wrong (none of it stops the server). */
export interface HttpFaults {
  /** Connections accepted. */
  connections: number;
  /** Requests whose headers arrived. */
  requests: number;
  /** Requests whose client went away before the body was complete. */
  aborted: number;
  /** Requests or connections that timed out (headers or body too slow). */
  timeouts: number;
  /** Malformed HTTP (answered 400/431 where possible). */
  parseErrors: number;
  /** Socket errors (resets, broken pipes). */
  socketErrors: number;
  /** Answers that could not be written because the client had gone. */
  unanswerable: number;
  /** Sockets still open at the shutdown bound, destroyed. */
  destroyedAtShutdown: number;
  /** Requests refused by the guard or the limits, by code. */
  rejected: Record<string, number>;
}

export interface HttpTransport {
  readonly port: number;
  readonly address: string;
  readonly faults: HttpFaults;
  /**
   * Shuts the transport down: stops accepting (after one turn of the event loop, so connections
   * the kernel already queued are accepted rather than reset), ends idle keep-alive sockets,
   * lets every request finish — answered if it reached the backend, 503 DT_CLOSED once fully
   * received otherwise — and destroys whatever is still open at `deadline` (ms, performance.now
   * clock) or when `force` resolves.
   */
  drain(deadline: number, force: Promise<void>): Promise<void>;
}

interface Conn {
  /** Requests being handled on this socket. */
  active: number;
  /** Responses finished on this socket. */
  served: number;
  /** socket.bytesRead when the last response finished: more means a new request has begun. */
  idleBytes: number;
  /** The response being written, if any. */
  res: ServerResponse | null;
}

const nextTurn = () => new Promise<void>((r) => setImmediate(r));

function errorBody(code: ErrorCode, message: string, id: unknown = null): Response {
  return { id, error: new DeltatokError(code, message).toJSON() };
}

/** A complete HTTP response for a socket that has no ServerResponse to write with. */
function rawResponse(status: number, body: Response): string {
  const text = responseText(body);
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\ncontent-type: application/json; charset=utf-8\r\n` +
    `content-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`
  );
}

type Body = { kind: "ok"; bytes: Buffer } | { kind: "too-large" } | { kind: "aborted" };

/** Reads a body up to `max` bytes; past it the rest is read and discarded. Never rejects. */
function readBody(req: IncomingMessage, max: number): Promise<Body> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on("data", (c: Buffer) => {
      if (over) return;
      size += c.length;
      if (size > max) {
        over = true;
        chunks.length = 0;
        resolve({ kind: "too-large" });
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(over ? { kind: "too-large" } : { kind: "ok", bytes: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size) }));
    req.on("error", () => resolve({ kind: "aborted" }));
    req.on("close", () => {
      if (!req.complete) resolve({ kind: "aborted" });
    });
  });
}

export async function startHttp(o: HttpTransportOptions): Promise<HttpTransport> {
  const faults: HttpFaults = { connections: 0, requests: 0, aborted: 0, timeouts: 0, parseErrors: 0, socketErrors: 0, unanswerable: 0, destroyedAtShutdown: 0, rejected: {} };
  const conns = new Map<Socket, Conn>();
  let draining = false;
  let allClosed: (() => void) | null = null;
  let guard: Guard | null = null;

  const server: Server = createServer(
    {
      headersTimeout: o.headersTimeoutMs,
      requestTimeout: o.requestTimeoutMs,
      keepAliveTimeout: o.keepAliveTimeoutMs,
      // how often Node checks those two timeouts (its default, 30 s, would make them coarse)
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(Math.min(o.headersTimeoutMs, o.requestTimeoutMs) / 4))),
      // a missing Host is the guard's to answer (403, JSON), not Node's bare 400
      requireHostHeader: false,
    },
    (req, res) => void onRequest(req, res),
  );

  server.on("connection", (s: Socket) => {
    faults.connections++;
    conns.set(s, { active: 0, served: 0, idleBytes: 0, res: null });
    s.on("close", () => {
      conns.delete(s);
      if (draining && conns.size === 0) allClosed?.();
    });
  });

  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => {
    const code = err.code ?? "";
    let answer: { status: number; body: Response } | null = null;
    if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
      faults.timeouts++;
      answer = { status: 408, body: errorBody("DT_REQUEST_TIMEOUT", `the request did not arrive in time (headers within ${o.headersTimeoutMs} ms, all of it within ${o.requestTimeoutMs} ms)`) };
    } else if (code.startsWith("HPE_")) {
      faults.parseErrors++;
      answer =
        code === "HPE_HEADER_OVERFLOW"
          ? { status: 431, body: errorBody("DT_INPUT_TOO_LARGE", "request headers are too large") }
          : code === "HPE_CHUNK_EXTENSIONS_OVERFLOW"
            ? { status: 413, body: errorBody("DT_INPUT_TOO_LARGE", "chunk extensions are too large") }
            : { status: 400, body: errorBody("DT_INVALID_REQUEST", `malformed HTTP request (${code})`) };
    } else {
      faults.socketErrors++;
    }
    const res = conns.get(socket)?.res;
    if (answer !== null && socket.writable && (res === null || res === undefined || !res.headersSent)) {
      // Node's own default, with a JSON body: write the answer, then close
      socket.write(rawResponse(answer.status, answer.body));
    }
    socket.destroy();
  });

  // e.g. EMFILE on accept: counted, the server goes on
  server.on("error", () => faults.socketErrors++);

  function write(req: IncomingMessage, res: ServerResponse, status: number, body: Response, headers?: Record<string, string>): void {
    if (res.headersSent || res.destroyed || req.socket.destroyed) {
      faults.unanswerable++;
      return;
    }
    const text = responseText(body);
    const h: Record<string, string | number> = {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(text),
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      ...headers,
    };
    if (o.closing()) h.connection = "close";
    res.writeHead(status, h);
    res.end(text);
    o.onAnswered();
  }

  /**
   * Answers a request. While closing, a request still arriving is first read to its end (and
   * discarded): closing a socket with unread bytes makes the kernel reset it, and the client
   * would lose the answer.
   */
  function respond(req: IncomingMessage, res: ServerResponse, status: number, body: Response, headers?: Record<string, string>): void {
    if (o.closing() && !req.complete && !req.destroyed) {
      let done = false;
      const go = () => {
        if (done) return;
        done = true;
        write(req, res, status, body, headers);
      };
      req.once("end", go);
      req.once("close", go);
      req.resume();
      return;
    }
    write(req, res, status, body, headers);
  }

  function refuse(req: IncomingMessage, res: ServerResponse, status: number, code: ErrorCode, message: string, id: unknown = null, headers?: Record<string, string>): void {
    faults.rejected[code] = (faults.rejected[code] ?? 0) + 1;
    respond(req, res, status, errorBody(code, message, id), headers);
  }

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    faults.requests++;
    const conn = conns.get(req.socket);
    if (conn !== undefined) {
      conn.active++;
      conn.res = res;
    }
    res.on("close", () => {
      if (conn === undefined) return;
      conn.active--;
      conn.served++;
      conn.idleBytes = req.socket.bytesRead;
      if (conn.res === res) conn.res = null;
      if (draining) endIfIdle(req.socket, conn);
    });
    res.on("error", () => faults.unanswerable++);
    req.on("error", () => {}); // an abort is seen by readBody and the 'close' event
    try {
      await route(req, res);
    } catch (e) {
      if (!res.headersSent) refuse(req, res, 500, "DT_INTERNAL", `unexpected failure: ${String(e)}`);
      else res.destroy();
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rejected = checkHeaders(guard as Guard, req.method, req.headers);
    if (rejected !== null) {
      return refuse(req, res, rejected.status, rejected.code, rejected.message, null, rejected.status === 401 ? { "www-authenticate": 'Bearer realm="deltatok"' } : undefined);
    }
    const q = (req.url ?? "/").indexOf("?");
    const path = q < 0 ? (req.url ?? "/") : (req.url ?? "/").slice(0, q);
    if (req.method === "GET" && (path === "/health" || path === "/stats")) {
      if (o.closing()) return refuse(req, res, 503, "DT_CLOSED", "the server is shutting down");
      return respond(req, res, 200, await o.track(dispatch(o.backend, { id: null, method: path.slice(1) as "health" | "stats", params: {} })));
    }
    const v1 = /^\/v1\/([a-z_]+)$/.exec(path);
    if (path !== "/rpc" && v1 === null) return refuse(req, res, 404, "DT_INVALID_REQUEST", `no route ${path.slice(0, 200)}`);
    if (req.method !== "POST") return refuse(req, res, 405, "DT_INVALID_REQUEST", `${path} takes POST`, null, { allow: "POST" });
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > o.maxBodyBytes) return refuse(req, res, 413, "DT_INPUT_TOO_LARGE", `request body over ${o.maxBodyBytes} bytes`);
    const body = await readBody(req, o.maxBodyBytes);
    if (body.kind === "aborted") {
      faults.aborted++;
      return;
    }
    if (body.kind === "too-large") return refuse(req, res, 413, "DT_INPUT_TOO_LARGE", `request body over ${o.maxBodyBytes} bytes`);
    if (o.closing()) return refuse(req, res, 503, "DT_CLOSED", "the server is shutting down", skimId(body.bytes.subarray(0, 1024)));
    const text = decodeUtf8(body.bytes);
    if (text === null) return refuse(req, res, 400, "DT_INVALID_UTF8", "the body is not valid UTF-8", skimId(body.bytes.subarray(0, 1024)));
    let v: unknown;
    try {
      v = parseRequestLine(text);
    } catch (e) {
      return refuse(req, res, 400, "DT_INVALID_JSON", `body is not valid JSON: ${(e as Error).message}`);
    }
    if (v1 === null) keepIdText(text, v);
    let env;
    try {
      env = v1 !== null ? parseEnvelope({ id: null, method: v1[1], params: v }) : parseEnvelope(v);
    } catch (e) {
      const err = e instanceof EnvelopeError ? e : new EnvelopeError(null, new DeltatokError("DT_INTERNAL", String(e)));
      return refuse(req, res, err.error.code === "DT_UNKNOWN_METHOD" && v1 !== null ? 404 : 400, err.error.code, err.error.message, err.id);
    }
    respond(req, res, 200, await o.track(dispatch(o.backend, env)));
  }

  /** Ends a keep-alive socket that sits between requests (a FIN: its client opens a new one). */
  function endIfIdle(s: Socket, c: Conn): void {
    if (c.active === 0 && c.served > 0 && s.bytesRead === c.idleBytes && !s.writableEnded) s.end();
  }

  server.listen({ port: o.port, host: o.host, backlog: 4096 });
  await new Promise<void>((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException) => {
      reject(new DeltatokError("DT_INVALID_OPTION", `cannot listen on ${o.host}:${o.port}: ${e.code ?? e.message}`, { path: e.code === "EADDRINUSE" ? "port" : "host", cause: e }));
    };
    server.once("error", onError);
    server.once("listening", () => {
      server.off("error", onError);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  try {
    guard = buildGuard({ bindHost: o.host, boundAddress: addr.address, port: addr.port, allowHosts: o.allowHosts, token: o.token });
  } catch (e) {
    server.close();
    throw e;
  }

  return {
    port: addr.port,
    address: addr.address,
    faults,
    async drain(deadline, force) {
      if (draining) return;
      draining = true;
      // Connections the kernel already queued have sent their requests: accept them (they are
      // answered 503) rather than reset them by closing the listener. libuv accepts one
      // connection per loop iteration, so turn the loop until two turns in a row accept none
      // (the first turn may end in this iteration, before any poll), for at most half the bound.
      const until = performance.now() + Math.max(0, deadline - performance.now()) / 2;
      await nextTurn();
      for (let quiet = 0; quiet < 2 && performance.now() < until; ) {
        const before = faults.connections;
        await nextTurn();
        quiet = faults.connections === before ? quiet + 1 : 0;
      }
      // stop accepting, without Node's closeIdleConnections: it also destroys sockets whose
      // request has not been parsed yet, which resets them
      NetServer.prototype.close.call(server);
      for (const [s, c] of conns) endIfIdle(s, c);
      if (conns.size > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise<void>((r) => (allClosed = r)),
          new Promise<void>((r) => (timer = setTimeout(r, Math.max(0, deadline - performance.now())))),
          force,
        ]);
        clearTimeout(timer);
      }
      if (conns.size > 0) {
        faults.destroyedAtShutdown += conns.size;
        for (const s of conns.keys()) s.destroy();
      }
      server.close(); // clears Node's timeout-checking interval
    },
  };
}
