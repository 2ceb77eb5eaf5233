/**
 * xxhash64 over strings, for cache keys and message-chain lookup. Hashes only ever select a
 * cached candidate: reuse is decided by comparing the actual rendered text, so a collision can
 * cost a miss, never a wrong answer (DESIGN.md, "The reuse invariant").
 */
import xxhash, { type XXHashAPI } from "xxhash-wasm";

let api: XXHashAPI | null = null;
let pending: Promise<XXHashAPI> | null = null;

/** Loads the WebAssembly hasher once per thread. */
export async function initHasher(): Promise<XXHashAPI> {
  if (api !== null) return api;
  pending ??= xxhash().then((a) => (api = a));
  return pending;
}

/** The hasher; initHasher() must have resolved first. */
export function hasher(): XXHashAPI {
  if (api === null) throw new Error("deltatok: initHasher() was not awaited");
  return api;
}

/** JSON with bigint support and a stable shape, used only as hash input. */
export function hashableJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? `${x}n` : x)) ?? "undefined";
}
