/**
 * Every failure deltatok reports carries a stable, documented `code`. Callers and tests match
 * the code, never the message text. Messages say what was wrong and where (`path` names the
 * offending field, e.g. `messages[3].content`).
 *
 * Layer: bottom. Imports nothing from the project.
 */

/** Every error code, with the one-line meaning documented in README "Error codes". */
export const ERROR_CODES = {
  // ---- loading -------------------------------------------------------------------------
  DT_TOKENIZER_UNKNOWN: "no bundled tokenizer with that name is installed",
  DT_TOKENIZER_NOT_FOUND: "the tokenizer directory, file or hub-cache entry does not exist",
  DT_TOKENIZER_INVALID: "a tokenizer file (tokenizer.json, tokenizer_config.json, a tiktoken rank file, tekken.json, a SentencePiece model) is unreadable, not a regular file (a FIFO, a device), or malformed — a tokenizer.json is refused wherever the Rust tokenizers crate refuses it",
  DT_TOKENIZER_TOO_LARGE: "a tokenizer file is larger than its reader's size limit (checked before it is read)",
  DT_TOKENIZER_AMBIGUOUS: "a tokenizer directory holds several candidate files of one kind and nothing says which one to use",
  DT_TOKENIZER_UNSUPPORTED: "a tokenizer file uses a format or feature deltatok does not implement (a SentencePiece WORD or CHAR model; a tokenizer.json component deltatok's encoder lacks when its fallback library, the optional dependency @huggingface/tokenizers, is not installed)",
  DT_TOKENIZER_PATTERN_MISSING: "a tiktoken rank file has no pre-tokenizer pattern: none in tokenizer_config.json, none in a tokenization_*.py, no known family (pass --pattern)",
  DT_TEMPLATE_NOT_FOUND: "no chat template: none in the tokenizer files and none given, or the named one is missing",
  DT_TEMPLATE_FILE_INVALID: "a chat template file is unreadable or malformed",
  // ---- options and input validation ------------------------------------------------------
  DT_INVALID_OPTION: "an option has the wrong type or an out-of-range value",
  DT_CORPUS_UNREADABLE: "an input file cannot be read (missing, a directory, not a regular file, no permission): the corpus, or a binary output given to the Python client's read_tokens / read_rollouts",
  DT_OUTPUT_UNWRITABLE: "an output file (--out, --summary) cannot be created or written",
  DT_INVALID_JSON: "a corpus or request line is not valid JSON",
  DT_INVALID_UTF8: "a corpus or request line is not valid UTF-8",
  DT_INVALID_REQUEST: "a request or corpus record has the wrong shape (e.g. id or messages missing)",
  DT_INVALID_MESSAGES: "messages is missing, not an array, or empty",
  DT_INVALID_MESSAGE: "a message is not an object of JSON data: role missing or not a string, or a value in it unreadable, cyclic, too deep or not data",
  DT_INVALID_CONTENT: "a message content is not a string, null, or a list of content parts",
  DT_INVALID_TOOL_CALLS: "tool_calls is not a list of tool-call objects",
  DT_INVALID_TOOL_ARGUMENTS: "tool-call arguments are not valid JSON (with parse_tool_arguments)",
  DT_INVALID_TOOLS: "tools is not a list of JSON data",
  DT_INVALID_KWARGS: "chat_template_kwargs is not an object of JSON data",
  DT_INVALID_DATE: "a date is not a valid YYYY-MM-DD calendar date",
  DT_LONE_SURROGATE: "a string contains a lone UTF-16 surrogate, which has no UTF-8 encoding",
  DT_INVALID_SAMPLED_IDS: "an assistant message's sampled_ids / sampled_logprobs are not token ids of the tokenizer, not numbers, or of unequal lengths",
  DT_INPUT_TOO_LARGE: "a prompt, message, text or corpus line is larger than the configured limit",
  DT_CONTEXT_TOO_SMALL: "trimToFit: the messages it must keep (system prompt, last user turn) alone exceed the limit",
  // ---- template ----------------------------------------------------------------------------
  DT_TEMPLATE_SYNTAX: "the chat template does not parse",
  DT_TEMPLATE_RAISED: "the chat template called raise_exception",
  DT_TEMPLATE_RUNTIME: "the chat template failed while rendering (a Python TypeError, UndefinedError, ...)",
  DT_TEMPLATE_SANDBOX: "the chat template tried something the sandbox forbids",
  DT_TEMPLATE_BUDGET: "the chat template exceeded a budget: steps, size of what it builds, or depth",
  DT_CONTINUE_FINAL_MESSAGE: "continue_final_message: the final message has no text to continue, or the chat template does not render it whole",
  // ---- tokenization / encoder --------------------------------------------------------------
  DT_TOKENIZE_FAILED: "the tokenizer failed on the rendered text (e.g. a Unigram model without unk_id met a character it has no piece for, as the Rust crate fails)",
  DT_STREAM_FINISHED: "a streaming counter was given text after finish() (reset it, or open another)",
  DT_STREAM_LOOKBACK: "a streamed text has no safe cut in more than maxLookBack characters (count it whole with countText)",
  // ---- pool and queue ----------------------------------------------------------------------
  DT_WORKER_STARTUP: "a worker failed to load the tokenizer/template or missed its warm-up budget",
  DT_WORKER_CRASHED: "a worker died while holding the item, and the one retry failed too",
  DT_WORKER_OUT_OF_MEMORY: "a worker ran out of its memory limit while holding the item, and the one retry did too",
  DT_QUEUE_FULL: "the batch queue is at its item limit",
  DT_CLOSED: "the pool, queue or server is closed",
  DT_DRAIN_TIMEOUT: "a drain ended at its timeout before the item was processed",
  // ---- serve -------------------------------------------------------------------------------
  DT_UNKNOWN_METHOD: "a sidecar request names an unknown method",
  DT_UNAUTHORIZED: "an HTTP request lacks the bearer token the server requires, or carries a wrong one",
  DT_FORBIDDEN: "an HTTP request names a Host the server does not answer to (its listening address, or an --allow-host name), or comes from another origin",
  DT_UNSUPPORTED_MEDIA_TYPE: "an HTTP request body is not declared as application/json",
  DT_REQUEST_TIMEOUT: "an HTTP request's headers or body did not arrive within the server's timeout; or (Python client) no answer within the client's timeout",
  DT_PREFIX_UNKNOWN: "a request refers to a conversation prefix the server no longer holds (resend all messages)",
  DT_COUNTER_UNKNOWN: "a request names a streaming counter the server does not hold (never opened, finished, evicted, or opened on another connection)",
  // ---- the Python client ----------------------------------------------------------------
  DT_COMMAND_NOT_FOUND: "the Python client cannot run the deltatok command line: none found (DELTATOK_CMD, node_modules/.bin, PATH), or DELTATOK_CMD does not parse or run",
  DT_BAD_RESPONSE: "the Python client got an answer it cannot read (not JSON, not a response envelope, an error without a code, or a result of the wrong shape: the path names the field)",
  DT_BINARY_INVALID: "a binary output read by the Python client's read_tokens / read_rollouts is not a complete deltatok file (wrong magic, killed before its index was written, an index that does not parse, or one whose arrays are not where the writer puts them: past the end, misaligned, overlapping, a forged count; a mask byte not 0/1)",
  DT_UNSUPPORTED_CALL: "a transformers tokenizer method or option the Python client does not implement (text pairs, offsets, adding tokens, ...)",
  // ---- merging shard outputs -----------------------------------------------------------
  DT_SHARD_INVALID: "a file given to merge is not a complete shard output (not a regular file, no shard header or trailer, malformed, its run was stopped, its records not those its trailer counts and digests, or a binary index that does not match its file)",
  DT_SHARD_MISMATCH: "shard outputs disagree: command, shard count, key rule, corpus content or settings (tokenizer, template, date, ...)",
  DT_SHARD_MISSING: "a shard of the set is not among the files given to merge",
  DT_SHARD_OVERLAP: "two files given to merge are the same shard, or hold the same corpus line",
  // ---- framework adapters ----------------------------------------------------------------
  DT_ADAPTER_UNSUPPORTED: "a framework message holds something the OpenAI chat format (or the framework, converting back) has no place for: an image or file part, a provider-executed tool, ...",
  DT_INTERNAL: "an unexpected internal failure (a bug: please report it)",
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface DeltatokErrorOptions {
  /** The underlying error, if any. */
  cause?: unknown;
  /** Path of the offending field, e.g. `messages[3].tool_calls[0].function.arguments`. */
  path?: string;
}

/** The one error class deltatok throws (or rejects with). */
export class DeltatokError extends Error {
  readonly code: ErrorCode;
  readonly path: string | undefined;

  constructor(code: ErrorCode, message: string, options: DeltatokErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "DeltatokError";
    this.code = code;
    this.path = options.path;
  }

  /** The `{code, message, path?}` object written into JSONL output and sidecar responses. */
  toJSON(): ErrorRecord {
    const out: ErrorRecord = { code: this.code, message: this.message };
    if (this.path !== undefined) out.path = this.path;
    return out;
  }
}

/** Serialized form of an error in outputs. */
export interface ErrorRecord {
  code: ErrorCode;
  message: string;
  path?: string;
}

export function isDeltatokError(e: unknown): e is DeltatokError {
  return e instanceof DeltatokError;
}

/**
 * Turns anything thrown into a DeltatokError. Errors that are not ours are wrapped as
 * `fallbackCode` (default DT_INTERNAL) with the original as `cause`, so nothing escapes uncoded.
 */
export function toDeltatokError(e: unknown, fallbackCode: ErrorCode = "DT_INTERNAL"): DeltatokError {
  if (e instanceof DeltatokError) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new DeltatokError(fallbackCode, message, { cause: e });
}
