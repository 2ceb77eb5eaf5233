/**
 * The f64 the Rust crate holds for a JSON number: serde_json's default float parser (without its
 * `float_roundtrip` feature) reads the decimal significand into a u64, converts it to f64, then
 * multiplies or divides once by the f64 nearest a power of ten. That is not always the nearest
 * f64 to the text (about one Unigram score in ten of float32 values lands one ULP away, measured
 * through the binding's `to_str`), and Unigram's best path compares sums of scores, so the
 * encoder reads scores as the crate does.
 *
 * `JSON.parse` gives the nearest f64; the digits serde saw are recovered as the shortest decimal
 * that reads back to it, spelled as Python's `repr` and the crate's own serializer spell it
 * (every tokenizer.json written by `tokenizers` or transformers). A file spelling a score with
 * more digits than needed is read from these digits, not its own.
 *
 * Layer: encoder. Imports nothing.
 */

/** serde_json's POW10 table: the f64 nearest 10^k, k = 0…308. */
const POW10: readonly number[] = Array.from({ length: 309 }, (_, k) => Number(`1e${k}`));

/** The f64 serde_json reads from the shortest round-trip spelling of `x`. */
export function serdeJsonF64(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const negative = x < 0;
  // shortest digits D and decimal point position: x = 0.D × 10^point
  const [mant, expPart] = Math.abs(x).toExponential().split("e") as [string, string];
  const digits = mant.replace(".", "");
  const point = Number(expPart) + 1;
  // the significand and exponent serde accumulates from Python's repr spelling of those digits:
  // exponent form below 1e-4 and from 1e16 ("1.5e-05", "1e+16"), else positional with at least
  // one fraction digit ("100.0", "0.001", "12.5")
  let sigDigits = digits;
  let exponent: number;
  if (point > 16 || point < -3) exponent = point - digits.length;
  else if (point >= digits.length) {
    sigDigits = digits + "0".repeat(point - digits.length) + "0";
    exponent = -1;
  } else exponent = point - digits.length;
  // u64 → f64 rounds to nearest even, as Number(BigInt) does (≤ 18 digits here: no u64 overflow)
  let f = Number(BigInt(sigDigits));
  for (;;) {
    const k = Math.abs(exponent);
    if (k <= 308) {
      f = exponent >= 0 ? f * (POW10[k] as number) : f / (POW10[k] as number);
      break;
    }
    if (f === 0) break;
    if (exponent >= 0) return negative ? -Infinity : Infinity;
    f /= 1e308;
    exponent += 308;
  }
  return negative ? -f : f;
}
