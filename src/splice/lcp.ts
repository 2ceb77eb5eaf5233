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

/**
 * Length of the longest common prefix of `a[ai, ai + n)` and `b[bi, bi + n)` (both ranges inside
 * their strings), in UTF-16 units; the same block comparison without slicing whole rests.
 */
export function commonPrefixLengthAt(a: string, ai: number, b: string, bi: number, n: number): number {
  let i = 0;
  if (ai === 0 && bi === 0 && n === a.length && n === b.length && a === b) return n;
  while (i + BLOCK <= n && a.substring(ai + i, ai + i + BLOCK) === b.substring(bi + i, bi + i + BLOCK)) i += BLOCK;
  while (i < n && a.charCodeAt(ai + i) === b.charCodeAt(bi + i)) i++;
  return i;
}
