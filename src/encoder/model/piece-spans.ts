/**
 * What a SentencePiece model produces for a normalized text: pieces as `[start, end)` byte spans
 * of that text with their ids, in order. A growable typed buffer reused across calls.
 *
 * Layer: encoder. Imports nothing.
 */

export class PieceSpans {
  /** Number of pieces. */
  length = 0;
  #data = new Int32Array(3 * 64);

  clear(): void {
    this.length = 0;
  }

  push(start: number, end: number, id: number): void {
    const at = 3 * this.length;
    if (at + 3 > this.#data.length) {
      const next = new Int32Array(this.#data.length * 2);
      next.set(this.#data);
      this.#data = next;
    }
    this.#data[at] = start;
    this.#data[at + 1] = end;
    this.#data[at + 2] = id;
    this.length++;
  }

  start(i: number): number {
    return this.#data[3 * i] as number;
  }

  end(i: number): number {
    return this.#data[3 * i + 1] as number;
  }

  id(i: number): number {
    return this.#data[3 * i + 2] as number;
  }

  /** Reverses the pieces in place (models that backtrack collect them last to first). */
  reverse(): void {
    const d = this.#data;
    for (let i = 0, j = this.length - 1; i < j; i++, j--) {
      for (let k = 0; k < 3; k++) {
        const t = d[3 * i + k] as number;
        d[3 * i + k] = d[3 * j + k] as number;
        d[3 * j + k] = t;
      }
    }
  }
}
