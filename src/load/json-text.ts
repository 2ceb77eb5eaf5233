/**
 * Reading JSON and text files the way the reference does, with errors that say where.
 *
 * `JSON.parse` in Node 20 often reports a syntax error without its position ("Unexpected token
 * '}', ... is not valid JSON"), so on failure a small scanner walks the text again to find the
 * offset of the first error and reports it as line and column.
 *
 * Layer: load. Imports only `errors`.
 */

import { constants } from "node:fs";
import { open, stat } from "node:fs/promises";

import { DeltatokError, type ErrorCode } from "../errors.js";

/** Where and why a JSON text is not valid. `offset` counts UTF-16 code units from 0. */
export interface JsonErrorLocation {
  readonly offset: number;
  readonly line: number;
  readonly column: number;
  readonly reason: string;
}

const WS_SPACE = 0x20;
const WS_TAB = 0x09;
const WS_LF = 0x0a;
const WS_CR = 0x0d;

/**
 * Finds the first JSON syntax error in `text` (RFC 8259 grammar, as `JSON.parse` accepts it).
 * Returns null when the text is valid JSON.
 */
export function locateJsonError(text: string): JsonErrorLocation | null {
  const n = text.length;
  let i = 0;
  // Open containers: true = object, false = array.
  const stack: boolean[] = [];

  const skipWs = (): void => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === WS_SPACE || c === WS_LF || c === WS_CR || c === WS_TAB) i++;
      else break;
    }
  };
  const fail = (reason: string, at: number = i): JsonErrorLocation => located(text, at, reason);
  const describe = (at: number): string => (at >= n ? "end of input" : `${JSON.stringify(text[at])}`);

  /** Scans a string starting at the opening quote; returns an error or null (i after the closing quote). */
  const scanString = (): JsonErrorLocation | null => {
    i++; // opening quote
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return null;
      }
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === undefined) return fail("unterminated string", i + 1);
        if (e === "u") {
          for (let k = 2; k < 6; k++) {
            const h = text[i + k];
            if (h === undefined || !/[0-9a-fA-F]/.test(h)) return fail("bad \\u escape in string", i + k);
          }
          i += 6;
          continue;
        }
        if ('"\\/bfnrt'.includes(e)) {
          i += 2;
          continue;
        }
        return fail(`bad escape \\${e} in string`, i + 1);
      }
      if (c < 0x20) return fail("control character in string (must be escaped)");
      i++;
    }
    return fail("unterminated string");
  };

  const scanNumber = (): JsonErrorLocation | null => {
    const digits = (): number => {
      const s = i;
      while (i < n && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++;
      return i - s;
    };
    if (text[i] === "-") i++;
    if (text[i] === "0") i++;
    else if (digits() === 0) return fail(`expected a digit, found ${describe(i)}`);
    if (text[i] === ".") {
      i++;
      if (digits() === 0) return fail(`expected a digit after '.', found ${describe(i)}`);
    }
    if (text[i] === "e" || text[i] === "E") {
      i++;
      if (text[i] === "+" || text[i] === "-") i++;
      if (digits() === 0) return fail(`expected a digit in the exponent, found ${describe(i)}`);
    }
    return null;
  };

  /** Scans `"key" ws :` at i (after whitespace); error or null. */
  const scanKey = (): JsonErrorLocation | null => {
    if (text[i] !== '"') return fail(`expected a property name in double quotes, found ${describe(i)}`);
    const err = scanString();
    if (err !== null) return err;
    skipWs();
    if (text[i] !== ":") return fail(`expected ':' after property name, found ${describe(i)}`);
    i++;
    return null;
  };

  // Main loop: expect a value, then what may follow it.
  for (;;) {
    skipWs();
    const c = text[i];
    let err: JsonErrorLocation | null = null;
    let opened = false;
    if (c === "{") {
      i++;
      skipWs();
      if (text[i] === "}") i++;
      else {
        err = scanKey();
        if (err !== null) return err;
        stack.push(true);
        opened = true;
      }
    } else if (c === "[") {
      i++;
      skipWs();
      if (text[i] === "]") i++;
      else {
        stack.push(false);
        opened = true;
      }
    } else if (c === '"') err = scanString();
    else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) err = scanNumber();
    else if (c === "t" || c === "f" || c === "n") {
      const word = c === "t" ? "true" : c === "f" ? "false" : "null";
      if (text.startsWith(word, i)) i += word.length;
      else err = fail(`unexpected ${describe(i)} (not ${word})`);
    } else err = fail(c === undefined ? "unexpected end of input, expected a value" : `unexpected ${describe(i)}, expected a value`);
    if (err !== null) return err;
    if (opened) continue;

    // After a complete value: close containers or move to the next element.
    for (;;) {
      skipWs();
      const top = stack[stack.length - 1];
      if (top === undefined) {
        if (i < n) return fail(`unexpected ${describe(i)} after the end of the JSON value`);
        return null;
      }
      const ch = text[i];
      if (ch === ",") {
        i++;
        skipWs();
        if (top) {
          err = scanKey();
          if (err !== null) return err;
        }
        break; // expect the next value
      }
      if ((top && ch === "}") || (!top && ch === "]")) {
        i++;
        stack.pop();
        continue;
      }
      return fail(
        top
          ? `expected ',' or '}' after a property value, found ${describe(i)}`
          : `expected ',' or ']' after an array element, found ${describe(i)}`,
      );
    }
  }
}

function located(text: string, offset: number, reason: string): JsonErrorLocation {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let k = 0; k < end; k++) {
    if (text.charCodeAt(k) === WS_LF) {
      line++;
      lineStart = k + 1;
    }
  }
  return { offset, line, column: offset - lineStart + 1, reason };
}

/** Parses JSON text; on failure throws `code` naming the file, line, column and offset. */
export function parseJsonText(text: string, file: string, code: ErrorCode): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    const where = locateJsonError(text);
    const detail =
      where === null
        ? (e instanceof Error ? e.message : String(e))
        : `${where.reason} at line ${where.line}, column ${where.column} (offset ${where.offset})`;
    throw new DeltatokError(code, `${file} is not valid JSON: ${detail}`, { cause: e });
  }
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Decodes UTF-8 strictly (like Python's `encoding="utf-8"`), keeping a BOM as U+FEFF. */
export function decodeUtf8(bytes: Uint8Array, file: string, code: ErrorCode): string {
  try {
    return strictUtf8.decode(bytes);
  } catch (e) {
    throw new DeltatokError(code, `${file} is not valid UTF-8 text`, { cause: e });
  }
}

/** Decodes and parses a JSON file's bytes. A BOM is rejected, as Python's json and serde_json do. */
export function parseJsonBytes(bytes: Uint8Array, file: string, code: ErrorCode): unknown {
  const text = decodeUtf8(bytes, file, code);
  if (text.charCodeAt(0) === 0xfeff) {
    throw new DeltatokError(
      code,
      `${file} starts with a UTF-8 byte order mark, which Python's json module and the Rust tokenizers reject`,
    );
  }
  return parseJsonText(text, file, code);
}

/**
 * Python's universal-newlines reading (`open(path).read()`): `\r\n` and lone `\r` become `\n`.
 * transformers reads chat_template.jinja and additional_chat_templates/*.jinja this way.
 */
export function universalNewlines(text: string): string {
  return text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text;
}

/** What kind of file-system entry a path is; "missing" when it does not exist. */
export async function pathKind(path: string): Promise<"file" | "directory" | "other" | "missing"> {
  try {
    const s = await stat(path);
    return s.isFile() ? "file" : s.isDirectory() ? "directory" : "other";
  } catch (e) {
    if (isNotFound(e)) return "missing";
    throw e;
  }
}

/** ENOENT / ENOTDIR: the path does not exist (or a parent is not a directory). */
export function isNotFound(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/** Largest tokenizer.json read (checked before reading; the largest published ones are ~35 MB). */
export const MAX_TOKENIZER_JSON_BYTES = 256 * 1024 * 1024;
/** Largest tokenizer_config.json, special_tokens_map.json, chat template file read. */
export const MAX_TEXT_FILE_BYTES = 16 * 1024 * 1024;

/**
 * Reads a file's bytes, bounded: the file is opened without blocking (a FIFO with no writer
 * would block `open` itself, uninterruptibly), must be a regular file (a FIFO, a device such as
 * /dev/zero, a socket: `unreadableCode`), and is refused over `maxBytes` before any byte is read
 * (`tooLargeCode`) — the read itself stops past the bound too, in case the file grows meanwhile.
 * A missing file gives `null` when `optional`, else throws `missingCode`; any other failure
 * (permissions, a directory in its place) throws `unreadableCode`.
 */
export async function readBytes(
  file: string,
  opts: { optional: boolean; missingCode: ErrorCode; unreadableCode: ErrorCode; tooLargeCode: ErrorCode; maxBytes: number; what: string },
): Promise<Buffer | null> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    if (isNotFound(e)) {
      if (opts.optional) return null;
      throw new DeltatokError(opts.missingCode, `${opts.what} not found: ${file}`, { cause: e });
    }
    throw unreadable(e, file, opts);
  }
  try {
    const info = await handle.stat();
    if (info.isDirectory()) throw new DeltatokError(opts.unreadableCode, `${opts.what} ${file} is unreadable: it is a directory`);
    if (!info.isFile()) throw new DeltatokError(opts.unreadableCode, `${opts.what} ${file} is not a regular file (a FIFO, device or socket is never read)`);
    if (info.size > opts.maxBytes) {
      throw new DeltatokError(opts.tooLargeCode, `${opts.what} ${file} is ${info.size} bytes; the limit is ${opts.maxBytes}`);
    }
    const buffer = Buffer.allocUnsafe(info.size + 1);
    let total = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, total, buffer.length - total, total);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total === buffer.length) {
        throw new DeltatokError(opts.tooLargeCode, `${opts.what} ${file} grew while being read (past its ${info.size} bytes)`);
      }
    }
    return buffer.subarray(0, total);
  } catch (e) {
    if (e instanceof DeltatokError) throw e;
    throw unreadable(e, file, opts);
  } finally {
    await handle.close();
  }
}

function unreadable(e: unknown, file: string, opts: { unreadableCode: ErrorCode; what: string }): DeltatokError {
  const code = (e as { code?: unknown } | null)?.code;
  const why = code === "EISDIR" ? "it is a directory" : e instanceof Error ? e.message : String(e);
  return new DeltatokError(opts.unreadableCode, `${opts.what} ${file} is unreadable: ${why}`, { cause: e });
}
