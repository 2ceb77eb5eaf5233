/**
 * Corpus files: JSONL, one conversation per line, `{"id", "messages", "tools"?,
 * "chat_template_kwargs"?}` in OpenAI chat format. A line that cannot be used becomes a coded
 * error record for that line; reading goes on. The id is a string or a JSON number, kept as the
 * line spelt it (src/corpus/id.ts).
 *
 * Reading: `openCorpus` opens the file (or FIFO, or /dev/stdin) and fails with
 * DT_CORPUS_UNREADABLE when it cannot (missing, a directory, no permission); `checkCorpus` only
 * checks, without opening. `corpusLines` cuts the bytes into lines — at LF, CR or CRLF, as
 * Python's universal newlines and Node's readline do — and decodes each line on its own with a
 * fatal UTF-8 decoder: a line that is not valid UTF-8 is DT_INVALID_UTF8 for that line only
 * (never U+FFFD), a UTF-8 byte order mark at the start of the file is dropped, and a line longer
 * than `maxLineBytes` is skipped to its end, never buffered whole (DT_INPUT_TOO_LARGE). Every
 * command reads through `corpusLines`, in process and on workers alike, so a line is the same
 * line (and the same error) whatever the mode. A FIFO or socket is read as a non-blocking
 * stream, so a read waiting for its writer holds no libuv thread and a stopped command exits.
 */
import { open, stat, access, type FileHandle } from "node:fs/promises";
import { constants, open as openFd } from "node:fs";
import { Socket } from "node:net";
import { isUtf8 } from "node:buffer";
import { DeltatokError, toDeltatokError } from "../errors.js";
import { describe, type JsonParser } from "../render/messages.js";
import { PyFloat } from "../json/values.js";
import { idOfText, isNumberId, type CorpusId } from "./id.js";

export interface Conversation {
  /** 1-based line number in the corpus file. */
  line: number;
  /** The line's id as it spelt it: a string, or a JSON number's exact text (src/corpus/id.ts). */
  id: CorpusId;
  messages: unknown[];
  tools: unknown[] | null;
  chat_template_kwargs: Record<string, unknown> | null;
}

export interface LineError {
  line: number;
  /** The line's id when it could be read. */
  id: CorpusId | null;
  error: DeltatokError;
}

export type CorpusItem = { ok: true; conversation: Conversation; bytes: number } | { ok: false; failure: LineError; bytes: number };

/**
 * A line's id: a string, or a JSON number as the line spelt it (its text: `7`, `1e3`, `-0`);
 * else null (another type, or NaN / Infinity, which are not JSON numbers).
 */
function lineId(v: unknown, text: string): CorpusId | null {
  if (typeof v === "string") return v;
  if (typeof v !== "number" && typeof v !== "bigint" && !(v instanceof PyFloat)) return null;
  const id = idOfText(text);
  return isNumberId(id) ? id : null;
}

/** Parses one corpus line into a conversation, or a coded error. */
export function parseCorpusLine(text: string, line: number, parse: JsonParser): Conversation | LineError {
  let v: unknown;
  try {
    v = parse(text);
  } catch (e) {
    return { line, id: null, error: new DeltatokError("DT_INVALID_JSON", `line ${line} is not valid JSON: ${(e as Error)?.message ?? e}`, { cause: e }) };
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    return { line, id: null, error: new DeltatokError("DT_INVALID_REQUEST", `line ${line} is not a JSON object`) };
  }
  const r = v as Record<string, unknown>;
  const id = lineId(r.id, text);
  if (id === null) {
    return { line, id: null, error: new DeltatokError("DT_INVALID_REQUEST", `line ${line}: "id" must be a string or a JSON number, got ${describe(r.id)}`, { path: "id" }) };
  }
  const messages = r.messages;
  if (messages === undefined || messages === null) {
    return { line, id, error: new DeltatokError("DT_INVALID_MESSAGES", `line ${line}: "messages" is missing`, { path: "messages" }) };
  }
  if (!Array.isArray(messages)) {
    return { line, id, error: new DeltatokError("DT_INVALID_MESSAGES", `line ${line}: "messages" must be an array`, { path: "messages" }) };
  }
  if (messages.length === 0) {
    return { line, id, error: new DeltatokError("DT_INVALID_MESSAGES", `line ${line}: "messages" is empty`, { path: "messages" }) };
  }
  const tools = r.tools ?? null;
  if (tools !== null && !Array.isArray(tools)) {
    return { line, id, error: new DeltatokError("DT_INVALID_TOOLS", `line ${line}: "tools" must be a list`, { path: "tools" }) };
  }
  const kw = r.chat_template_kwargs ?? null;
  if (kw !== null && (typeof kw !== "object" || Array.isArray(kw) || kw instanceof PyFloat)) {
    return { line, id, error: new DeltatokError("DT_INVALID_KWARGS", `line ${line}: "chat_template_kwargs" must be an object`, { path: "chat_template_kwargs" }) };
  }
  return { line, id, messages, tools: tools as unknown[] | null, chat_template_kwargs: kw as Record<string, unknown> | null };
}

/** Longest corpus line read, in bytes (longer ones are DT_INPUT_TOO_LARGE for that line). */
export const MAX_LINE_BYTES = 128 * 1024 * 1024;

/** What failed about opening a corpus, for its message. */
function unreadable(path: string, why: string, cause?: unknown): DeltatokError {
  return new DeltatokError("DT_CORPUS_UNREADABLE", `cannot read corpus ${path}: ${why}`, cause === undefined ? {} : { cause });
}

function osReason(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  switch (code) {
    case "ENOENT":
      return "no such file";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EISDIR":
      return "it is a directory";
    case "ENOTDIR":
      return "a part of the path is not a directory";
    case "ELOOP":
      return "too many symbolic links";
    default:
      return typeof code === "string" ? `${code}: ${(e as Error).message}` : String((e as Error)?.message ?? e);
  }
}

/**
 * Checks that `path` can be read as a corpus, without opening it (so a FIFO is not consumed):
 * it exists, is not a directory, and is readable. Returns its size in bytes (0 for a FIFO or a
 * device). Throws DT_CORPUS_UNREADABLE.
 */
export async function checkCorpus(path: string): Promise<{ size: number }> {
  if (typeof path !== "string" || path === "") throw unreadable(String(path), "no path given");
  let s;
  try {
    s = await stat(path);
  } catch (e) {
    throw unreadable(path, osReason(e), e);
  }
  if (s.isDirectory()) throw unreadable(path, "it is a directory");
  try {
    await access(path, constants.R_OK);
  } catch (e) {
    throw unreadable(path, osReason(e), e);
  }
  return { size: s.isFile() ? s.size : 0 };
}

/** An open corpus file. */
export interface CorpusFile {
  readonly path: string;
  /** Size in bytes (0 when unknown: a FIFO, a device). */
  readonly size: number;
  /** @internal A file or device, read through its handle. */
  readonly handle: FileHandle | null;
  /**
   * @internal A FIFO or socket, read as a non-blocking stream: a read waiting for its writer
   * then holds no libuv thread, so a command stopped by a signal can exit at once (a thread
   * blocked in read(2) would hold process exit until the writer wrote or closed).
   */
  readonly pipe: Socket | null;
}

/** Opens a corpus. Throws DT_CORPUS_UNREADABLE (missing, a directory, no permission, ...). */
export async function openCorpus(path: string): Promise<CorpusFile> {
  await checkCorpus(path);
  const kind = await stat(path).catch(() => null);
  if (kind !== null && (kind.isFIFO() || kind.isSocket())) {
    let fd: number;
    try {
      fd = await new Promise<number>((resolve, reject) => openFd(path, "r", (e, n) => (e === null ? resolve(n) : reject(e))));
    } catch (e) {
      throw unreadable(path, osReason(e), e);
    }
    return { path, size: 0, handle: null, pipe: new Socket({ fd, readable: true, writable: false }) };
  }
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (e) {
    throw unreadable(path, osReason(e), e);
  }
  try {
    const s = await handle.stat();
    if (s.isDirectory()) throw unreadable(path, "it is a directory");
    return { path, size: s.isFile() ? s.size : 0, handle, pipe: null };
  } catch (e) {
    await handle.close().catch(() => undefined);
    throw e;
  }
}

/** One line of a corpus: its text, or why it has none. */
export type CorpusLine =
  | { readonly line: number; readonly bytes: number; readonly text: string; readonly error?: undefined }
  | { readonly line: number; readonly bytes: number; readonly text?: undefined; readonly error: DeltatokError };

/** Offset of the first byte that breaks UTF-8 in `b` (only called when it is not valid). */
function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  const n = b.length;
  while (i < n) {
    const c = b[i] as number;
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (c >= 0xc2 && c <= 0xdf) (need = 1), (min = 0x80);
    else if (c >= 0xe0 && c <= 0xef) (need = 2), (min = 0x800);
    else if (c >= 0xf0 && c <= 0xf4) (need = 3), (min = 0x10000);
    else return i;
    if (i + need >= n) return i;
    let cp = c & (need === 1 ? 0x1f : need === 2 ? 0x0f : 0x07);
    for (let k = 1; k <= need; k++) {
      const d = b[i + k];
      if (d === undefined || (d & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (d & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return n;
}

const BOM = [0xef, 0xbb, 0xbf];

/** Decodes one line's bytes (its end of line removed) strictly. */
function decodeLine(b: Buffer, line: number, bytes: number): CorpusLine {
  let body = b;
  if (line === 1 && b.length >= 3 && b[0] === BOM[0] && b[1] === BOM[1] && b[2] === BOM[2]) body = b.subarray(3);
  if (isUtf8(body)) return { line, bytes, text: body.toString("utf8") };
  if (line === 1 && b.length >= 2 && ((b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff))) {
    return { line, bytes, error: new DeltatokError("DT_INVALID_UTF8", `line 1 starts with a UTF-16 byte order mark: a corpus must be UTF-8`) };
  }
  const at = firstInvalidUtf8(body);
  const shown = Array.from(body.subarray(at, at + 4), (x) => x.toString(16).padStart(2, "0")).join(" ");
  return {
    line,
    bytes,
    error: new DeltatokError("DT_INVALID_UTF8", `line ${line} is not valid UTF-8: bytes ${shown} at byte ${at} of the line`),
  };
}

/**
 * The lines of an open corpus, in order, with 1-based numbers (blank lines included: callers
 * skip them). Closes the file when done (or when the consumer stops early). A read error
 * mid-file throws DT_CORPUS_UNREADABLE.
 */
/** The bytes of an open corpus, in chunks (a file's chunk buffer is reused: copy what you keep). */
async function* chunksOf(file: CorpusFile): AsyncGenerator<Buffer> {
  if (file.pipe !== null) {
    try {
      for await (const b of file.pipe) yield b as Buffer;
    } catch (e) {
      throw unreadable(file.path, osReason(e), e);
    }
    return;
  }
  const handle = file.handle as FileHandle;
  const chunk = Buffer.allocUnsafe(1 << 20);
  for (;;) {
    let n: number;
    try {
      n = (await handle.read(chunk, 0, chunk.length, null)).bytesRead;
    } catch (e) {
      throw unreadable(file.path, osReason(e), e);
    }
    if (n === 0) return;
    yield chunk.subarray(0, n);
  }
}

export async function* corpusLines(file: CorpusFile, maxLineBytes = MAX_LINE_BYTES): AsyncGenerator<CorpusLine> {
  let parts: Buffer[] = [];
  let held = 0;
  /** bytes of the current line beyond what is held (an oversize line being skipped) */
  let skipped = 0;
  let line = 0;
  /** the previous chunk ended with CR: a LF first in this one belongs to it */
  let afterCR = false;
  const finish = (piece: Buffer, eol: number): CorpusLine => {
    line++;
    const bytes = held + skipped + piece.length + eol;
    let out: CorpusLine;
    if (skipped > 0 || held + piece.length > maxLineBytes) {
      out = {
        line,
        bytes,
        error: new DeltatokError("DT_INPUT_TOO_LARGE", `line ${line} is ${held + skipped + piece.length} bytes, over the limit of ${maxLineBytes}`),
      };
    } else {
      const whole = parts.length === 0 ? piece : Buffer.concat([...parts, piece]);
      out = decodeLine(whole, line, bytes);
    }
    parts = [];
    held = 0;
    skipped = 0;
    return out;
  };
  try {
    for await (const chunk of chunksOf(file)) {
      const n = chunk.length;
      if (n === 0) continue;
      let start = 0;
      if (afterCR) {
        afterCR = false;
        if (chunk[0] === 10) start = 1; // the LF of a CRLF split across two reads
      }
      let lf = chunk.indexOf(10, start);
      let cr = chunk.indexOf(13, start);
      for (;;) {
        if (lf >= n) lf = -1;
        if (cr >= n) cr = -1;
        const at = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
        if (at < 0) {
          const tail = chunk.subarray(start, n);
          if (skipped > 0 || held + tail.length > maxLineBytes) {
            skipped += held + tail.length;
            parts = [];
            held = 0;
          } else if (tail.length > 0) {
            parts.push(Buffer.from(tail));
            held += tail.length;
          }
          break;
        }
        let eol = 1;
        if (chunk[at] === 13) {
          if (at + 1 < n && chunk[at + 1] === 10) eol = 2;
          else if (at + 1 === n) afterCR = true;
        }
        yield finish(chunk.subarray(start, at), eol);
        start = at + eol;
        if (lf >= 0 && lf < start) lf = chunk.indexOf(10, start);
        if (cr >= 0 && cr < start) cr = chunk.indexOf(13, start);
      }
    }
    if (held > 0 || skipped > 0) yield finish(Buffer.alloc(0), 0);
  } finally {
    file.pipe?.destroy();
    await file.handle?.close().catch(() => undefined);
  }
}

/**
 * Reads a corpus file line by line (blank lines skipped). Opening fails with
 * DT_CORPUS_UNREADABLE (thrown from the first `next()`).
 */
export async function* readCorpus(path: string, parse: JsonParser): AsyncGenerator<CorpusItem> {
  yield* readOpenCorpus(await openCorpus(path), parse);
}

/**
 * `readCorpus` over an open corpus. `keep` (given the line's text, or undefined for a line that
 * has none, and its number) skips the non-blank lines it rejects, unparsed: `--shard`.
 */
export async function* readOpenCorpus(file: CorpusFile, parse: JsonParser, keep?: (text: string | undefined, line: number) => boolean): AsyncGenerator<CorpusItem> {
  let blank = 0;
  for await (const l of corpusLines(file)) {
    // an item's bytes include the blank (and skipped) lines before it, so progress and "bytes unread" add up
    const bytes = blank + l.bytes;
    blank = 0;
    if (l.text?.trim() === "" || (keep !== undefined && !keep(l.text, l.line))) {
      blank = bytes;
      continue;
    }
    if (l.error !== undefined) {
      yield { ok: false, failure: { line: l.line, id: null, error: l.error }, bytes };
      continue;
    }
    const text = l.text;
    let parsed: Conversation | LineError;
    try {
      parsed = parseCorpusLine(text, l.line, parse);
    } catch (e) {
      parsed = { line: l.line, id: null, error: toDeltatokError(e) };
    }
    if ("error" in parsed) yield { ok: false, failure: parsed, bytes };
    else yield { ok: true, conversation: parsed, bytes };
  }
}

/** Indices k of assistant messages: request k is messages[:k] + generation prompt. */
export function assistantIndices(messages: readonly unknown[]): number[] {
  const out: number[] = [];
  for (let k = 0; k < messages.length; k++) {
    const m = messages[k];
    if (typeof m === "object" && m !== null && (m as { role?: unknown }).role === "assistant") out.push(k);
  }
  return out;
}

/** chat_template_kwargs of a request: the command's, with the line's own on top. */
export function mergeKwargs(
  base: Readonly<Record<string, unknown>> | null,
  line: Readonly<Record<string, unknown>> | null,
): Record<string, unknown> | null {
  if (base === null) return line as Record<string, unknown> | null;
  if (line === null) return base as Record<string, unknown>;
  return { ...base, ...line };
}
