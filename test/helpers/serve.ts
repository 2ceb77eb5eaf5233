/**
 * Helpers for the sidecar tests: a stdio exchange of request lines, raw HTTP over a TCP socket (full control of every byte, Host
 * included, and of how the connection ends), a response parser, and backends whose answers the
 * test releases (so "in flight" is a state the test reaches by an event, not by timing).
 */
import { connect, type Socket } from "node:net";
import { request } from "node:http";
import { DeltatokError, type ErrorRecord } from "../../src/errors.js";
import { PassThrough } from "node:stream";
import { createInterface } from "node:readline";
import { serve } from "../../src/serve/server.js";
import type { Backend, Method } from "../../src/serve/protocol.js";

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The parsed JSON body. */
  json: Record<string, unknown>;
}

/** What happened to a raw exchange: a response, or the socket error the client saw. */
export type RawOutcome = { response: RawResponse; error?: undefined } | { response?: undefined; error: string };

/** Parses the first HTTP response in `data` (null when incomplete). */
export function parseResponse(data: Buffer): RawResponse | null {
  const end = data.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const head = data.subarray(0, end).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? "")?.[1]);
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const i = line.indexOf(":");
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const length = Number(headers["content-length"] ?? 0);
  if (data.length < end + 4 + length) return null;
  const body = data.subarray(end + 4, end + 4 + length).toString("utf8");
  return { status, headers, body, json: body === "" ? {} : (JSON.parse(body) as Record<string, unknown>) };
}

/** Opens a socket to the server; resolves once connected. */
export function openSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, "127.0.0.1", () => resolve(s));
    s.once("error", reject);
  });
}

/**
 * Reads a socket until it closes or errors, or a full response arrived and `untilResponse`:
 * the first response, or the error code the client saw (e.g. ECONNRESET) when none arrived.
 */
export function outcome(s: Socket, untilResponse = false): Promise<RawOutcome> {
  return new Promise((resolve) => {
    let data = Buffer.alloc(0);
    let done = false;
    const finish = (error?: string) => {
      if (done) return;
      done = true;
      const r = parseResponse(data);
      resolve(r !== null ? { response: r } : { error: error ?? "EOF" });
    };
    s.on("data", (d: Buffer) => {
      data = Buffer.concat([data, d]);
      if (untilResponse && parseResponse(data) !== null) finish();
    });
    s.on("error", (e: NodeJS.ErrnoException) => finish(e.code ?? e.message));
    s.on("close", () => finish());
  });
}

/** Sends bytes on a fresh socket and returns what comes back (connection closed after). */
export async function raw(port: number, bytes: string | Buffer): Promise<RawOutcome> {
  const s = await openSocket(port);
  const o = outcome(s, true);
  s.write(bytes);
  const r = await o;
  s.destroy();
  return r;
}

/** A well-formed POST with the given headers (Host 127.0.0.1:port unless given). */
export function postText(port: number, path: string, body: string | Buffer, headers: Record<string, string> = {}): string {
  const h: Record<string, string> = { host: `127.0.0.1:${port}`, "content-type": "application/json", ...headers };
  const b = typeof body === "string" ? Buffer.from(body) : body;
  let text = `POST ${path} HTTP/1.1\r\n`;
  for (const [k, v] of Object.entries(h)) if (v !== "") text += `${k}: ${v}\r\n`;
  return text + `content-length: ${b.length}\r\nconnection: close\r\n\r\n`;
}

/** POSTs through node:http (any headers, Host included); the status and parsed body. */
export function post(port: number, path: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; json: Record<string, unknown> }> {
  return send(port, "POST", path, body, { "content-type": "application/json", ...headers });
}

/** A GET through node:http. */
export function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; json: Record<string, unknown> }> {
  return send(port, "GET", path, null, headers);
}

function send(port: number, method: string, path: string, body: string | null, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string> = { host: `127.0.0.1:${port}`, ...headers };
    for (const k of Object.keys(h)) if (h[k] === "") delete h[k];
    const req = request({ host: "127.0.0.1", port, method, path, headers: h, agent: false, setHost: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on("error", reject);
    req.end(body ?? undefined);
  });
}

/** The code of an error envelope. */
export function code(json: Record<string, unknown>): string | undefined {
  return (json.error as { code?: string } | undefined)?.code;
}

type Call = Exclude<Method, "batch">;

/**
 * A backend whose answers wait until the test releases them. Each call answers
 * `{method, params}`; `waitFor(n)` resolves once n calls are waiting.
 */
export class GatedBackend implements Backend {
  readonly waiting: Array<{ method: Call; params: Record<string, unknown>; release: () => void }> = [];
  #want: Array<{ n: number; resolve: () => void }> = [];
  closed = false;

  call(method: Call, params: Record<string, unknown>): Promise<unknown> {
    if (this.closed) return Promise.reject(new DeltatokError("DT_CLOSED", "closed"));
    return new Promise((resolve) => {
      this.waiting.push({ method, params, release: () => resolve({ method, params }) });
      for (const w of this.#want.filter((x) => this.waiting.length >= x.n)) {
        this.#want.splice(this.#want.indexOf(w), 1);
        w.resolve();
      }
    });
  }

  async callMany(calls: Array<{ method: Call; params: Record<string, unknown> }>): Promise<Array<{ result: unknown } | { error: ErrorRecord }>> {
    return Promise.all(calls.map(async (c) => ({ result: await this.call(c.method, c.params) })));
  }

  waitFor(n: number): Promise<void> {
    if (this.waiting.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.#want.push({ n, resolve }));
  }

  releaseAll(): void {
    for (const w of this.waiting.splice(0)) w.release();
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

/** Resolves once `cond()` holds (checked every few ms; the test runner's timeout bounds it). */
export async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 2));
}

/**
 * Writes `lines` (JSON values) to a server on stdio pipes answered by `backend`, ends its input and
 * waits for it to close; the answers by id.
 */
export async function stdioExchange(backend: Backend, lines: unknown[]): Promise<Map<unknown, Record<string, unknown>>> {
  const input = new PassThrough();
  const output = new PassThrough();
  const server = await serve({ backend, stdio: { input, output }, handleSignals: false });
  const answers = new Map<unknown, Record<string, unknown>>();
  createInterface({ input: output }).on("line", (l) => {
    const r = JSON.parse(l) as Record<string, unknown>;
    answers.set(r.id, r);
  });
  for (const l of lines) input.write(JSON.stringify(l) + "\n");
  input.end();
  await server.closed;
  return answers;
}
