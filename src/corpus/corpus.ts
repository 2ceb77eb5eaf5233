/**
 * Corpus files: JSONL, one conversation per line, `{"id", "messages", "tools"?,
 * "chat_template_kwargs"?}` in OpenAI chat format. A line that cannot be used becomes a coded
 * error record for that line; reading goes on.
 *
 * Reading: `openCorpus` opens the file, `corpusLines` yields its lines (the one line reader of
 * every command and mode: in-process and pooled replay see the same lines), `readCorpus` parses
 * them into conversations.
 */
import { open as openFd } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";
import { Socket } from "node:net";
import { createInterface } from "node:readline";
import { DeltatokError, toDeltatokError } from "../errors.js";
import type { JsonParser } from "../render/messages.js";

export interface Conversation {
  /** 1-based line number in the corpus file. */
  line: number;
  id: string;
  messages: unknown[];
  tools: unknown[] | null;
  chat_template_kwargs: Record<string, unknown> | null;
}

export interface LineError {
  line: number;
  /** The line's id when it could be read. */
  id: string | null;
  error: DeltatokError;
}

export type CorpusItem = { ok: true; conversation: Conversation; bytes: number } | { ok: false; failure: LineError; bytes: number };

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
  const id = typeof r.id === "string" ? r.id : typeof r.id === "number" ? String(r.id) : null;
  if (id === null) {
    return { line, id: null, error: new DeltatokError("DT_INVALID_REQUEST", `line ${line}: "id" must be a string or number`, { path: "id" }) };
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
  if (kw !== null && (typeof kw !== "object" || Array.isArray(kw))) {
    return { line, id, error: new DeltatokError("DT_INVALID_KWARGS", `line ${line}: "chat_template_kwargs" must be an object`, { path: "chat_template_kwargs" }) };
  }
  return { line, id, messages, tools: tools as unknown[] | null, chat_template_kwargs: kw as Record<string, unknown> | null };
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

/** Opens a corpus for `corpusLines` (one reader for every mode of every command). */
export async function openCorpus(path: string): Promise<CorpusFile> {
  try {
    const s = await stat(path);
    if (s.isFIFO() || s.isSocket()) {
      const fd = await new Promise<number>((resolve, reject) => openFd(path, "r", (e, fd) => (e === null ? resolve(fd) : reject(e))));
      return { path, size: 0, handle: null, pipe: new Socket({ fd, readable: true, writable: false }) };
    }
    const handle = await open(path, "r");
    return { path, size: s.isFile() ? s.size : 0, handle, pipe: null };
  } catch (e) {
    throw new DeltatokError("DT_INVALID_REQUEST", `cannot read corpus ${path}: ${(e as Error).message}`, { cause: e });
  }
}

/** One line of a corpus: its text, or why it has none. */
export type CorpusLine =
  | { readonly line: number; readonly bytes: number; readonly text: string; readonly error?: undefined }
  | { readonly line: number; readonly bytes: number; readonly text?: undefined; readonly error: DeltatokError };

/**
 * The lines of an open corpus, in order, with 1-based numbers (blank lines included: callers
 * skip them). Closes the file when done (or when the consumer stops early).
 */
export async function* corpusLines(file: CorpusFile): AsyncGenerator<CorpusLine> {
  const input = file.pipe ?? (file.handle as FileHandle).createReadStream({ encoding: "utf8", autoClose: false });
  const rl = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of rl) {
      line++;
      yield { line, bytes: Buffer.byteLength(text, "utf8") + 1, text };
    }
  } finally {
    rl.close();
    file.pipe?.destroy();
    await file.handle?.close().catch(() => undefined);
  }
}

/** Reads a corpus file line by line (blank lines skipped). */
export async function* readCorpus(path: string, parse: JsonParser): AsyncGenerator<CorpusItem> {
  yield* readOpenCorpus(await openCorpus(path), parse);
}

/** `readCorpus` over an open corpus. */
export async function* readOpenCorpus(file: CorpusFile, parse: JsonParser): AsyncGenerator<CorpusItem> {
  let blank = 0;
  for await (const l of corpusLines(file)) {
    // an item's bytes include the blank lines before it, so progress and "bytes unread" add up
    const bytes = blank + l.bytes;
    blank = 0;
    if (l.error !== undefined) {
      yield { ok: false, failure: { line: l.line, id: null, error: l.error }, bytes };
      continue;
    }
    const text = l.text;
    if (text.trim() === "") {
      blank = bytes;
      continue;
    }
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
