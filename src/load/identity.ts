/**
 * Stable tokenizer identity: xxhash64 of the tokenizer files' bytes.
 *
 * Layer: load.
 */

import xxhash from "xxhash-wasm";

type Hasher = Awaited<ReturnType<typeof xxhash>>;

let hasherPromise: Promise<Hasher> | undefined;

function hasher(): Promise<Hasher> {
  hasherPromise ??= xxhash();
  return hasherPromise;
}

const SEPARATOR = new Uint8Array([0]);

/**
 * xxhash64 (seed 0) of `tokenizerJson` ‖ 0x00 ‖ `tokenizerConfig` (nothing when null), as 16
 * lowercase hex digits, then 0x00 ‖ `extra` when given. See `LoadedTokenizer.id`.
 */
export async function tokenizerIdentity(tokenizerJson: Uint8Array, tokenizerConfig: Uint8Array | null, extra: Uint8Array | null = null): Promise<string> {
  const { create64 } = await hasher();
  const h = create64(0n);
  h.update(tokenizerJson);
  h.update(SEPARATOR);
  if (tokenizerConfig !== null) h.update(tokenizerConfig);
  if (extra !== null) {
    h.update(SEPARATOR);
    h.update(extra);
  }
  return h.digest().toString(16).padStart(16, "0");
}
