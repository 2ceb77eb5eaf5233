/**
 * Seeded CJK texts for the streaming tests and bench/stream-cjk.mjs: a run of ideographs with no
 * cut anywhere, and Japanese prose whose sentences end in a kana and 。. The ideographs to draw
 * from are the caller's (the bench keeps the alphabet its recorded figures were measured with).
 */

export const KANA = "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんアイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲンー";

/** A linear congruential generator: a number in [0, m) per call, the same sequence per seed. */
function seeded(seed: number): (m: number) => number {
  let x = seed;
  return (m) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return (x >>> 8) % m;
  };
}

/** n ideographs drawn from `alphabet`. */
export function ideographs(n: number, seed: number, alphabet: string): string {
  const next = seeded(seed);
  let s = "";
  for (let i = 0; i < n; i++) s += alphabet[next(alphabet.length)];
  return s;
}

/** Japanese sentences of 20–40 characters (kana, and ideographs from `alphabet`), each ending in a kana and 。. */
export function japaneseProse(n: number, seed: number, alphabet: string): string {
  const next = seeded(seed);
  const ENDS = ["です", "ました", "ない", "ます", "った"];
  let s = "";
  while (s.length < n) {
    const len = 20 + next(21);
    let sentence = "";
    while (sentence.length < len) sentence += next(3) === 0 ? alphabet[next(alphabet.length)] : KANA[next(KANA.length)];
    s += sentence + ENDS[next(ENDS.length)] + "。";
  }
  return s.slice(0, n);
}
