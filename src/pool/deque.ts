/**
 * A growable ring buffer: O(1) push/shift at both ends, slots cleared when taken (so a drained
 * deque holds no references), capacity halved when it is mostly empty.
 */
export class Deque<T> {
  #buf: Array<T | undefined>;
  #head = 0;
  #size = 0;

  constructor(capacity = 16) {
    let c = 16;
    while (c < capacity) c *= 2;
    this.#buf = new Array<T | undefined>(c);
  }

  get length(): number {
    return this.#size;
  }

  push(v: T): void {
    if (this.#size === this.#buf.length) this.#resize(this.#buf.length * 2);
    this.#buf[(this.#head + this.#size) & (this.#buf.length - 1)] = v;
    this.#size++;
  }

  unshift(v: T): void {
    if (this.#size === this.#buf.length) this.#resize(this.#buf.length * 2);
    this.#head = (this.#head - 1) & (this.#buf.length - 1);
    this.#buf[this.#head] = v;
    this.#size++;
  }

  /** The first element without removing it. */
  peek(): T | undefined {
    return this.#size === 0 ? undefined : this.#buf[this.#head];
  }

  shift(): T | undefined {
    if (this.#size === 0) return undefined;
    const v = this.#buf[this.#head];
    this.#buf[this.#head] = undefined;
    this.#head = (this.#head + 1) & (this.#buf.length - 1);
    this.#size--;
    this.#maybeShrink();
    return v;
  }

  pop(): T | undefined {
    if (this.#size === 0) return undefined;
    const i = (this.#head + this.#size - 1) & (this.#buf.length - 1);
    const v = this.#buf[i];
    this.#buf[i] = undefined;
    this.#size--;
    this.#maybeShrink();
    return v;
  }

  /** Removes and returns everything, oldest first. */
  drainAll(): T[] {
    const out: T[] = [];
    for (let v = this.shift(); v !== undefined; v = this.shift()) out.push(v);
    return out;
  }

  #maybeShrink(): void {
    if (this.#buf.length > 1024 && this.#size < this.#buf.length / 8) this.#resize(this.#buf.length / 2);
  }

  #resize(cap: number): void {
    const next = new Array<T | undefined>(cap);
    const mask = this.#buf.length - 1;
    for (let i = 0; i < this.#size; i++) next[i] = this.#buf[(this.#head + i) & mask];
    this.#buf = next;
    this.#head = 0;
  }
}
