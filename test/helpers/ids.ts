/** sha256 of token ids as little-endian uint32 (the golden files' `ids_sha256`). */
import { createHash } from "node:crypto";

export function idsSha256(ids: Uint32Array): string {
  const le = new Uint8Array(ids.length * 4);
  const view = new DataView(le.buffer);
  for (let i = 0; i < ids.length; i++) view.setUint32(i * 4, ids[i] as number, true);
  return createHash("sha256").update(le).digest("hex");
}
