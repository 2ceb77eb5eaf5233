/**
 * Length of the longest common prefix of two strings, in UTF-16 units. Compares 1 KiB blocks
 * with native string equality (memcmp speed) and only walks characters inside the first block
 * that differs.
 */
const BLOCK = 1024;

export function commonPrefixLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i + BLOCK <= n && a.substring(i, i + BLOCK) === b.substring(i, i + BLOCK)) i += BLOCK;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}
