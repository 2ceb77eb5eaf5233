/**
 * A growable list of 32-bit unsigned values over one Uint32Array: token ids and offsets, written
 * without a JavaScript array per piece. `data` may be replaced when the list grows; read it after
 * writing.
 *
 * Layer: encoder.
 */
export class U32List {
  data: Uint32Array;
  length = 0;
  constructor(capacity = 256) {
    this.data = new Uint32Array(Math.max(16, capacity));
  }
  push(v: number): void {
    if (this.length === this.data.length) this.#grow(this.length + 1);
    this.data[this.length++] = v;
  }
  pushAll(src: ArrayLike<number>, from = 0, to = src.length): void {
    const n = to - from;
    if (n <= 0) return;
    if (this.length + n > this.data.length) this.#grow(this.length + n);
    if (src instanceof Uint32Array) this.data.set(src.subarray(from, to), this.length);
    else for (let i = from; i < to; i++) this.data[this.length + i - from] = src[i] as number;
    this.length += n;
  }
  /** Makes room for `n` more values without changing the length. */
  reserve(n: number): void {
    if (this.length + n > this.data.length) this.#grow(this.length + n);
  }
  /** Drops every value (the capacity stays). */
  clear(): void {
    this.length = 0;
  }
  /** An exact-size copy. */
  toArray(): Uint32Array {
    return this.data.slice(0, this.length);
  }
  /** The values as a plain array. */
  toList(): number[] {
    const out = new Array<number>(this.length);
    for (let i = 0; i < this.length; i++) out[i] = this.data[i] as number;
    return out;
  }
  #grow(min: number): void {
    let cap = this.data.length * 2;
    while (cap < min) cap *= 2;
    const d = new Uint32Array(cap);
    d.set(this.data.subarray(0, this.length));
    this.data = d;
  }
}
