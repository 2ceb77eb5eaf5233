/**
 * SIGTERM and SIGINT for the whole life of a corpus command (replay, render, verify, tokenize).
 *
 * The contract (DESIGN.md, "Worker pool, batch queue, sidecar"):
 * - The handlers are installed when the command starts and never removed: there is no moment,
 *   while loading, working or closing, when the default action could kill the process.
 * - The first signal while the command works stops it: no new corpus line is started (in
 *   process: between conversations; on workers: reading stops and the drain is aborted), the
 *   output written so far is a prefix of the full run's, the summary (with --summary) describes
 *   that prefix and says it was stopped, one notice line goes to stderr, and the exit code is
 *   128 + the signal's number (SIGTERM 143, SIGINT 130).
 * - A first signal after the work is done is ignored: the command is only closing, and its exit
 *   code stays what the work decided (0, or 1 for --strict / verify differences). One notice line
 *   on stderr says so (also when the signal came as the last line finished and stopped nothing) (so an operator knows the signal was seen). Node restores the default action
 *   while the process tears down its handles at the very end, so a signal in that last moment
 *   (after everything is written and closed) still kills the process: nothing is lost then, but
 *   the exit status says "killed"; there is no way to ignore a signal from JavaScript past it.
 * - Any second signal kills the process as the default action would.
 */

const EXIT: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };

/** What a stopped command reports, in its summary (`stopped`) and on stderr. */
export interface StopReport {
  signal: NodeJS.Signals;
  /** Non-blank corpus lines whose output was written (the prefix). */
  lines_done: number;
  /** Lines read whose output was not written (begun on workers, or cut off). */
  lines_not_done: number;
  /** Bytes of the corpus not read, or null when its size is unknown (a FIFO, stdin). */
  bytes_unread: number | null;
}

export class RunControl {
  readonly #ac = new AbortController();
  #stoppedBy: NodeJS.Signals | null = null;
  #finished = false;
  #seen = 0;
  #installed = false;
  readonly #onSignal = (sig: NodeJS.Signals): void => {
    this.#seen++;
    if (this.#seen > 1) {
      // a second signal: the default action, as if no handler were installed
      this.#uninstall();
      process.kill(process.pid, sig);
      return;
    }
    if (this.#finished) {
      process.stderr.write(`deltatok: ${sig} ignored: the work is done, closing\n`);
      return;
    }
    this.#stoppedBy = sig;
    this.#ac.abort(sig); // the reason is the signal's name (see stopReport)
  };

  /** Installs the handlers for the rest of the process's life. */
  install(): this {
    if (!this.#installed) {
      this.#installed = true;
      process.on("SIGTERM", this.#onSignal);
      process.on("SIGINT", this.#onSignal);
    }
    return this;
  }

  #uninstall(): void {
    process.off("SIGTERM", this.#onSignal);
    process.off("SIGINT", this.#onSignal);
    this.#installed = false;
  }

  /** Aborted by the first signal that arrives while the command works. */
  get signal(): AbortSignal {
    return this.#ac.signal;
  }

  /** The signal that stopped the command, or null. */
  get stoppedBy(): NodeJS.Signals | null {
    return this.#stoppedBy;
  }

  /**
   * The work is done (every line's output is written): from now on a first signal is ignored,
   * so closing cannot turn a finished run into a stopped or killed one.
   */
  finish(): void {
    // a signal that came as the last line finished stopped nothing (stopReport): say it was seen
    if (!this.#finished && this.#stoppedBy !== null) process.stderr.write(`deltatok: ${this.#stoppedBy} ignored: the work is done, closing\n`);
    this.#finished = true;
  }

  /** The exit code of a command stopped by `sig`: 128 + its number (SIGTERM 143, SIGINT 130). */
  static exitCode(sig: NodeJS.Signals): number {
    return EXIT[sig] ?? 143;
  }

  /** The one notice line of a stopped command. */
  static notice(command: string, r: StopReport): string {
    const unread = r.bytes_unread === null ? "the rest of the corpus (size unknown) not read" : r.bytes_unread === 0 ? "nothing left unread" : `${r.bytes_unread} bytes of the corpus not read`;
    return `deltatok: ${command} stopped by ${r.signal}: ${r.lines_done} corpus lines done (their output is written: a prefix of the full run's), ${r.lines_not_done} read and not done, ${unread}\n`;
  }
}

/**
 * The stop report of a corpus command whose `signal` aborted, or undefined when nothing was cut
 * short: every line read had its output written and the whole file was read (a signal that came
 * as the last line finished stopped nothing). A corpus of unknown size (`size` 0: a FIFO,
 * stdin) that was being read when the signal came counts as cut short.
 */
export function stopReport(signal: AbortSignal | undefined, done: number, notDone: number, bytesRead: number, size: number): StopReport | undefined {
  if (signal?.aborted !== true) return undefined;
  const unread = size > 0 ? Math.max(0, size - bytesRead) : null;
  if (notDone === 0 && unread === 0) return undefined;
  const name = typeof signal.reason === "string" ? (signal.reason as NodeJS.Signals) : ("SIGTERM" as NodeJS.Signals);
  return { signal: name, lines_done: done, lines_not_done: notDone, bytes_unread: unread };
}

/** Lets the event loop run once (so a signal that came during synchronous work is seen). */
export function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Iterates `source` until `signal` aborts, even when the source is waiting for input (a FIFO,
 * stdin): the pending read is abandoned and the source is closed once it settles.
 */
export async function* untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal | undefined): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  if (signal === undefined) {
    for (let r = await it.next(); r.done !== true; r = await it.next()) yield r.value;
    return;
  }
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<"aborted">((resolve) => {
    onAbort = () => resolve("aborted");
    if (signal.aborted) resolve("aborted");
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  let pending: Promise<IteratorResult<T>> | null = null;
  let started = false;
  try {
    for (;;) {
      // The first read is always started, even when already aborted: a generator that never
      // started cannot run its `finally`, and that is what closes the source (the file).
      if (signal.aborted && started) return;
      started = true;
      pending = it.next();
      const r = await Promise.race([pending, aborted]);
      if (r === "aborted") return;
      pending = null;
      if (r.done === true) return;
      yield r.value;
    }
  } finally {
    if (onAbort !== undefined) signal.removeEventListener("abort", onAbort);
    if (pending !== null) {
      // the source's own `finally` (closing the file) runs once its read settles
      pending.then(() => it.return?.()).catch(() => undefined);
    } else {
      await it.return?.();
    }
  }
}
