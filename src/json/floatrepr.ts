/**
 * Python's `repr(float)`: the shortest digits that round-trip (what JS also computes), laid out
 * the Python way — fixed notation with at least one fractional digit for exponents -4..15,
 * otherwise `d.ddde+XX` with at least two exponent digits.
 *
 * Layer: json.
 */

/** Shortest round-trip decimal digits and the scientific exponent of a finite, non-zero number. */
export function shortestDigits(x: number): { neg: boolean; digits: string; exp: number } {
  const s = x.toExponential(); // e.g. "-1.2345e+2"; no argument = as many digits as needed
  let i = 0;
  const neg = s.charCodeAt(0) === 45;
  if (neg) i = 1;
  const ePos = s.indexOf("e", i);
  const mant = s.slice(i, ePos);
  const exp = Number(s.slice(ePos + 1));
  const digits = mant.length > 1 ? mant[0] + mant.slice(2) : mant;
  return { neg, digits, exp };
}

/** `repr(x)` for a Python float. */
export function floatRepr(x: number): string {
  if (x !== x) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  // Fast path: integral values of moderate size.
  if (Number.isInteger(x) && Math.abs(x) < 1e16) return String(x) + ".0";
  const { neg, digits, exp } = shortestDigits(x);
  let body: string;
  if (exp >= -5 + 1 && exp < 16) {
    if (exp >= 0) {
      if (digits.length <= exp + 1) {
        body = digits + "0".repeat(exp + 1 - digits.length) + ".0";
      } else {
        body = digits.slice(0, exp + 1) + "." + digits.slice(exp + 1);
      }
    } else {
      body = "0." + "0".repeat(-exp - 1) + digits;
    }
  } else {
    const m = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
    const ae = Math.abs(exp);
    body = m + "e" + (exp < 0 ? "-" : "+") + (ae < 10 ? "0" + ae : String(ae));
  }
  return neg ? "-" + body : body;
}
