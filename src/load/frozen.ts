/**
 * Immutability helpers for loaded tokenizers, which the cache shares between callers.
 *
 * Layer: load.
 */

const sealed = new WeakSet<object>();

/** A Map that throws on every mutation once constructed (`set`, `delete`, `clear`). */
export class FrozenMap<K, V> extends Map<K, V> {
  constructor(entries?: Iterable<readonly [K, V]>) {
    super(entries);
    sealed.add(this);
    Object.freeze(this);
  }

  override set(key: K, value: V): this {
    if (sealed.has(this)) throw new TypeError("this map is read-only");
    return super.set(key, value);
  }

  override delete(_key: K): boolean {
    throw new TypeError("this map is read-only");
  }

  override clear(): void {
    throw new TypeError("this map is read-only");
  }
}

/** Freezes `value` and everything reachable from it (plain objects and arrays). Returns `value`. */
export function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== "object" || Object.isFrozen(v)) continue;
    Object.freeze(v);
    for (const child of Object.values(v)) {
      if (child !== null && typeof child === "object") stack.push(child);
    }
  }
  return value;
}
