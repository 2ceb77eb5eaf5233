/**
 * A read-only trie over byte strings with an integer value per key, built once from a key list.
 * SentencePiece models use it for their pieces (Unigram's lattice, BPE's pair lookup) and for
 * the user-defined symbols that normalization must leave alone.
 *
 * Layout: node 0 is the root; each node's children sit in one run of `labels`/`targets`
 * (sorted by label) starting at `first[node]`, `count[node]` long; the root also has a direct
 * 256-entry table. Memory is about 9 bytes per node (a node per distinct key prefix).
 *
 * Layer: encoder. Imports nothing.
 */

const NONE = -1;

export class ByteTrie {
  readonly #first: Int32Array;
  readonly #count: Uint16Array;
  readonly #labels: Uint8Array;
  readonly #targets: Int32Array;
  readonly #values: Int32Array;
  readonly #root: Int32Array;
  /** Number of keys. */
  readonly size: number;
  /** Length in bytes of the longest key. */
  readonly maxKeyLength: number;

  /**
   * Builds the trie. Keys are byte strings; an empty key is ignored; when a key repeats, the
   * first value given for it is kept.
   */
  constructor(keys: readonly Uint8Array[], values: ArrayLike<number>) {
    // Build with plain maps, then flatten breadth-first.
    const children: Array<Map<number, number>> = [new Map()];
    const nodeValue: number[] = [NONE];
    let size = 0;
    let maxKeyLength = 0;
    for (let k = 0; k < keys.length; k++) {
      const key = keys[k] as Uint8Array;
      if (key.length === 0) continue;
      let node = 0;
      for (let i = 0; i < key.length; i++) {
        const b = key[i] as number;
        const map = children[node] as Map<number, number>;
        let next = map.get(b);
        if (next === undefined) {
          next = children.length;
          children.push(new Map());
          nodeValue.push(NONE);
          map.set(b, next);
        }
        node = next;
      }
      if (nodeValue[node] === NONE) {
        nodeValue[node] = values[k] as number;
        size++;
        if (key.length > maxKeyLength) maxKeyLength = key.length;
      }
    }
    const n = children.length;
    this.#first = new Int32Array(n);
    this.#count = new Uint16Array(n);
    this.#values = new Int32Array(n);
    this.#labels = new Uint8Array(Math.max(0, n - 1));
    this.#targets = new Int32Array(Math.max(0, n - 1));
    // Renumber breadth-first so a node's children are contiguous.
    const order = [0];
    const newId = new Int32Array(n).fill(NONE);
    newId[0] = 0;
    let edge = 0;
    for (let q = 0; q < order.length; q++) {
      const old = order[q] as number;
      const id = newId[old] as number;
      this.#values[id] = nodeValue[old] as number;
      const kids = [...(children[old] as Map<number, number>).entries()].sort((a, b) => a[0] - b[0]);
      this.#first[id] = edge;
      this.#count[id] = kids.length;
      for (const [label, child] of kids) {
        newId[child] = order.length;
        order.push(child);
        this.#labels[edge] = label;
        this.#targets[edge] = newId[child] as number;
        edge++;
      }
    }
    this.#root = new Int32Array(256).fill(NONE);
    for (let e = 0; e < (this.#count[0] as number); e++) {
      this.#root[this.#labels[e] as number] = this.#targets[e] as number;
    }
    this.size = size;
    this.maxKeyLength = maxKeyLength;
  }

  /** The child of `node` along byte `b`, or -1. */
  child(node: number, b: number): number {
    if (node === 0) return this.#root[b] as number;
    const first = this.#first[node] as number;
    const count = this.#count[node] as number;
    const labels = this.#labels;
    if (count <= 8) {
      for (let e = first, end = first + count; e < end; e++) {
        if (labels[e] === b) return this.#targets[e] as number;
      }
      return NONE;
    }
    let lo = first;
    let hi = first + count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const l = labels[mid] as number;
      if (l === b) return this.#targets[mid] as number;
      if (l < b) lo = mid + 1;
      else hi = mid - 1;
    }
    return NONE;
  }

  /** The value stored at `node` (a key ends there), or -1. */
  value(node: number): number {
    return this.#values[node] as number;
  }

  /** The value of the key `bytes[start, end)`, or -1 when it is not a key. */
  get(bytes: Uint8Array, start: number, end: number): number {
    let node = 0;
    for (let i = start; i < end; i++) {
      node = this.child(node, bytes[i] as number);
      if (node < 0) return NONE;
    }
    return end > start ? (this.#values[node] as number) : NONE;
  }

  /** Length of the longest key that is a prefix of `bytes[start, end)`, or 0 when none is. */
  longestPrefix(bytes: Uint8Array, start: number, end: number): number {
    let node = 0;
    let best = 0;
    for (let i = start; i < end; i++) {
      node = this.child(node, bytes[i] as number);
      if (node < 0) break;
      if ((this.#values[node] as number) !== NONE) best = i + 1 - start;
    }
    return best;
  }
}

/** Byte length of the UTF-8 character whose lead byte is `b`, as sentencepiece's OneCharLen reads it (1 for stray continuation bytes). */
export function oneCharLen(b: number): number {
  const hi = b >>> 4;
  return hi < 12 ? 1 : hi < 14 ? 2 : hi === 14 ? 3 : 4;
}
