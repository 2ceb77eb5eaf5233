/**
 * The sidecar's JSON-lines transport over a pair of streams (stdin/stdout): bounded lines in,
 * one answer line per non-blank request line out, with backpressure — reading pauses while the
 * output is full. A line that is too long, not UTF-8, or arrives while the server is closing is
 * answered with its coded error (and the id skimmed from its start, when it has one there).
 */
import type { Readable, Writable } from "node:stream";
import { DeltatokError, type ErrorCode } from "../errors.js";
import type { Response } from "./protocol.js";
import { LineSplitter, decodeUtf8, isBlank, skimId, type LineEvent } from "./lines.js";
import { responseText } from "./wire-id.js";

export interface StdioTransportOptions {
  input: Readable;
  output: Writable;
  /** Largest request line, bytes. */
  maxLineBytes: number;
  /** Answers one request line (never rejects). */
  answer: (line: string) => Promise<Response>;
  /** True once the server is shutting down: lines still read are answered DT_CLOSED. */
  closing: () => boolean;
  /** Called once when the input ends or fails, or the output fails. */
  onEnd: () => void;
  /** Counts an answer written. */
  onAnswered: () => void;
}

export interface StdioTransport {
  /** Stops reading input; answers still to come are written. */
  stop(): void;
  /** Resolves once every answer given so far has been handed to the output (or it failed). */
  flushed(): Promise<void>;
}

export function serveStdio(o: StdioTransportOptions): StdioTransport {
  const { input, output } = o;
  const splitter = new LineSplitter(o.maxLineBytes);
  let pending = "";
  let blocked = false;
  let dead = false;
  let stopped = false;
  let ended = false;
  const waiters: Array<() => void> = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };

  const end = () => {
    if (ended) return;
    ended = true;
    o.onEnd();
  };

  const flush = () => {
    if (blocked || pending === "" || dead) {
      if (pending === "" || dead) wake();
      return;
    }
    const chunk = pending;
    pending = "";
    if (output.write(chunk)) {
      wake();
      return;
    }
    blocked = true;
    input.pause();
    output.once("drain", () => {
      blocked = false;
      if (!stopped) input.resume();
      flush();
    });
  };

  const write = (r: Response) => {
    o.onAnswered();
    if (dead) return;
    if (pending === "") queueMicrotask(flush);
    pending += responseText(r) + "\n";
  };

  const fail = (id: unknown, code: ErrorCode, message: string) => write({ id, error: new DeltatokError(code, message).toJSON() });

  const onEvent = (e: LineEvent) => {
    if (e.kind === "oversize") {
      fail(skimId(e.head), "DT_INPUT_TOO_LARGE", `a request line is larger than ${o.maxLineBytes} bytes (${e.length})`);
      return;
    }
    const bytes = e.bytes;
    if (bytes.length === 0 || ((bytes[0] === 0x20 || bytes[0] === 0x09 || bytes[0] === 0x0d) && isBlank(bytes))) return;
    if (o.closing()) {
      fail(skimId(bytes.subarray(0, 1024)), "DT_CLOSED", "the server is shutting down");
      return;
    }
    const line = decodeUtf8(bytes);
    if (line === null) {
      fail(skimId(bytes.subarray(0, 1024)), "DT_INVALID_UTF8", "the request line is not valid UTF-8");
      return;
    }
    void o.answer(line).then(write);
  };

  const onData = (chunk: Buffer | string) => {
    if (stopped) return;
    splitter.push(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk, onEvent);
  };
  const onInputEnd = () => {
    if (!stopped) splitter.end(onEvent);
    end();
  };
  input.on("data", onData);
  input.on("end", onInputEnd);
  input.on("error", end);
  // a reader that went away (EPIPE) must not take the process down: stop writing, shut down
  output.on("error", () => {
    dead = true;
    pending = "";
    wake();
    end();
  });

  return {
    stop() {
      if (stopped) return;
      stopped = true;
      input.off("data", onData);
      input.pause();
    },
    flushed() {
      if ((pending === "" && !blocked) || dead) return Promise.resolve();
      return new Promise<void>((r) => {
        waiters.push(r);
        queueMicrotask(flush);
      });
    },
  };
}
