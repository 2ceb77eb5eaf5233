/** Progress lines on stderr, at most one per interval, only when stderr is a TTY (or forced). */
export class Progress {
  readonly #enabled: boolean;
  readonly #intervalMs: number;
  /** when the last line was shown (never yet: the first tick always shows) */
  #last = Number.NEGATIVE_INFINITY;
  #shown = false;

  constructor(enabled: boolean | undefined, intervalMs = 1000) {
    this.#enabled = enabled ?? process.stderr.isTTY === true;
    this.#intervalMs = intervalMs;
  }

  /** Shows `text()` if the interval has passed. */
  tick(text: () => string): void {
    if (!this.#enabled) return;
    const now = performance.now();
    if (now - this.#last < this.#intervalMs) return;
    this.#last = now;
    this.#shown = true;
    const line = text();
    if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${line}`);
    else process.stderr.write(line + "\n");
  }

  /** Shows `text` now (no throttling): a one-off event such as a worker becoming ready. */
  line(text: string): void {
    if (!this.#enabled) return;
    if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${text}\n`);
    else process.stderr.write(text + "\n");
  }

  done(text?: string): void {
    if (!this.#enabled) return;
    if (this.#shown && process.stderr.isTTY) process.stderr.write("\r\x1b[K");
    if (text !== undefined) process.stderr.write(text + "\n");
  }
}
