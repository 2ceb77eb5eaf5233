/**
 * Python arithmetic on template values (+ - * / // % ** and unary signs, big ints bounded as
 * CPython's int/str conversion limit is, float // and % as CPython) and int()/float() parsing.
 *
 * Layer: template/jinja.
 */
import { PyFloat } from "../../json/values.js";
import { PyError, typeError } from "./pyerror.js";
import { isPySpace } from "./pystr.js";
import { Markup, Undefined, isTuple, mkTuple } from "./values.js";
import { ITEM_UNITS, isStr, strOf, isFloat, mkFloat, mkInt, fval, typeName, failUndefined, markupEscape, numLike } from "./ops.js";
import type { SizeGuard } from "./ops.js";

// ---- arithmetic ---------------------------------------------------------------------------

function binTypeError(op: string, a: unknown, b: unknown): PyError {
  return typeError(`unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`);
}

function checkUndef(a: unknown, b: unknown): void {
  if (a instanceof Undefined) failUndefined(a);
  if (b instanceof Undefined) failUndefined(b);
}

function asIntOrNull(v: unknown): number | bigint | null {
  if (typeof v === "number") return Number.isInteger(v) ? v : null;
  if (typeof v === "bigint") return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  return null;
}

function big(v: number | bigint): bigint {
  return typeof v === "bigint" ? v : BigInt(v);
}

/** Result-size guard for huge integers (Python would spend minutes or memory on them). */
const MAX_INT_BITS = 1 << 20;

/** Bits of |x| (for results that are big ints). */
export function bigBits(x: bigint): number {
  const a = x < 0n ? -x : x;
  if (a < 0x100000000n) return a === 0n ? 0 : Number(a).toString(2).length;
  const h = a.toString(16);
  return (h.length - 1) * 4 + parseInt(h[0] as string, 16).toString(2).length;
}

/** Refuses a big-int result beyond MAX_INT_BITS bits, before it is computed. */
function bigLimit(bits: number): void {
  if (bits > MAX_INT_BITS) throw new PyError("BudgetExceeded", "integer result too large", "DT_TEMPLATE_BUDGET");
}

/** Charges an integer result that is a big int (its digits, 2 bytes per unit) and returns it. */
export function bigOut(g: SizeGuard, r: number | bigint): number | bigint {
  if (typeof r === "bigint") g.charge(ITEM_UNITS + Math.ceil(bigBits(r) / 16));
  return r;
}

export function pyAdd(a: unknown, b: unknown, g: SizeGuard): unknown {
  if (typeof a === "string" && typeof b === "string") {
    g.buildStr(a.length + b.length);
    return a + b;
  }
  if (typeof a === "number" && typeof b === "number") {
    const r = a + b;
    if (Number.isInteger(a) && Number.isInteger(b)) return Number.isSafeInteger(r) ? r : mkInt(BigInt(a) + BigInt(b));
    return mkFloat(r);
  }
  checkUndef(a, b);
  if (a instanceof Markup || b instanceof Markup) {
    if (isStr(a) && isStr(b)) {
      const x = markupEscape(a).s;
      const y = markupEscape(b).s;
      g.buildStr(x.length + y.length);
      return new Markup(x + y);
    }
  }
  if (numLike(a) && numLike(b)) {
    const x = asIntOrNull(a);
    const y = asIntOrNull(b);
    if (x !== null && y !== null) return bigOut(g, mkInt(big(x) + big(y)));
    return mkFloat(fval(a) + fval(b));
  }
  if (typeof a === "string") throw typeError(`can only concatenate str (not "${typeName(b)}") to str`);
  if (Array.isArray(a) && Array.isArray(b) && isTuple(a) === isTuple(b)) {
    g.buildItems(a.length + b.length);
    g.addSteps((a.length + b.length) >> 4);
    const r = a.concat(b);
    return isTuple(a) ? mkTuple(r) : r;
  }
  if (Array.isArray(a)) {
    throw typeError(`can only concatenate ${isTuple(a) ? "tuple" : "list"} (not "${typeName(b)}") to ${isTuple(a) ? "tuple" : "list"}`);
  }
  throw binTypeError("+", a, b);
}

export function pySub(a: unknown, b: unknown, g: SizeGuard): unknown {
  if (typeof a === "number" && typeof b === "number") {
    const r = a - b;
    if (Number.isInteger(a) && Number.isInteger(b)) return Number.isSafeInteger(r) ? r : mkInt(BigInt(a) - BigInt(b));
    return mkFloat(r);
  }
  checkUndef(a, b);
  if (numLike(a) && numLike(b)) {
    const x = asIntOrNull(a);
    const y = asIntOrNull(b);
    if (x !== null && y !== null) return bigOut(g, mkInt(big(x) - big(y)));
    return mkFloat(fval(a) - fval(b));
  }
  throw binTypeError("-", a, b);
}

function repeatCount(n: unknown): number | null {
  const x = asIntOrNull(n);
  if (x === null) return null;
  if (typeof x === "bigint") {
    if (x > 9223372036854775807n || x < -9223372036854775808n) throw new PyError("OverflowError", "cannot fit 'int' into an index-sized integer");
    return x > 0n ? Number.MAX_SAFE_INTEGER : 0;
  }
  return x;
}

function isSeq(v: unknown): boolean {
  return typeof v === "string" || v instanceof Markup || Array.isArray(v);
}

export function pyMul(a: unknown, b: unknown, g: SizeGuard): unknown {
  if (typeof a === "number" && typeof b === "number") {
    const r = a * b;
    if (Number.isInteger(a) && Number.isInteger(b)) return Number.isSafeInteger(r) ? r : mkInt(BigInt(a) * BigInt(b));
    return mkFloat(r);
  }
  checkUndef(a, b);
  if (numLike(a) && numLike(b)) {
    const x = asIntOrNull(a);
    const y = asIntOrNull(b);
    if (x !== null && y !== null) {
      if (typeof x === "bigint" || typeof y === "bigint") bigLimit(bigBits(big(x)) + bigBits(big(y)));
      return bigOut(g, mkInt(big(x) * big(y)));
    }
    return mkFloat(fval(a) * fval(b));
  }
  let seq: unknown = null;
  let n: unknown = null;
  if (isSeq(a)) {
    seq = a;
    n = b;
  } else if (isSeq(b)) {
    seq = b;
    n = a;
  }
  if (seq !== null) {
    const k = repeatCount(n);
    if (k === null) {
      // Markup's __mul__/__rmul__ call str.__mul__ directly, which asks for an index
      if (a instanceof Markup || b instanceof Markup) throw typeError(`'${typeName(a instanceof Markup ? b : a)}' object cannot be interpreted as an integer`);
      throw typeError(`can't multiply sequence by non-int of type '${typeName(n)}'`);
    }
    if (k <= 0) return typeof seq === "string" ? "" : seq instanceof Markup ? new Markup("") : isTuple(seq) ? mkTuple([]) : [];
    if (typeof seq === "string" || seq instanceof Markup) {
      const s = strOf(seq);
      g.buildStr(s.length * k);
      const r = s.repeat(k);
      return seq instanceof Markup ? new Markup(r) : r;
    }
    const arr = seq as unknown[];
    g.buildItems(arr.length * k);
    g.addSteps((arr.length * k) >> 4);
    const out = new Array<unknown>(arr.length * k);
    for (let i = 0, j = 0; i < k; i++) for (let t = 0; t < arr.length; t++) out[j++] = arr[t];
    return isTuple(arr) ? mkTuple(out) : out;
  }
  throw binTypeError("*", a, b);
}

export function pyTrueDiv(a: unknown, b: unknown): unknown {
  checkUndef(a, b);
  if (!numLike(a) || !numLike(b)) throw binTypeError("/", a, b);
  const y = fval(b);
  if (y === 0) {
    throw new PyError("ZeroDivisionError", isFloat(a) || isFloat(b) ? "float division by zero" : "division by zero");
  }
  const x = asIntOrNull(a);
  const yi = asIntOrNull(b);
  if (x !== null && yi !== null && (typeof x === "bigint" || typeof yi === "bigint")) {
    return mkFloat(Number(big(x)) / Number(big(yi)));
  }
  return mkFloat(fval(a) / y);
}

/** CPython float divmod. */
function floatDivmod(vx: number, wx: number): [number, number] {
  let mod = vx % wx;
  let div = (vx - mod) / wx;
  if (mod) {
    if (wx < 0 !== mod < 0) {
      mod += wx;
      div -= 1.0;
    }
  } else {
    mod = wx < 0 || Object.is(wx, -0) ? -0.0 : 0.0; // copysign(0.0, wx)
  }
  let floordiv: number;
  if (div) {
    floordiv = Math.floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    const q = vx / wx;
    floordiv = q < 0 || Object.is(q, -0) ? -0.0 : 0.0; // copysign(0.0, vx / wx)
  }
  return [floordiv, mod];
}

export function pyFloorDiv(a: unknown, b: unknown, g: SizeGuard): unknown {
  checkUndef(a, b);
  if (!numLike(a) || !numLike(b)) throw binTypeError("//", a, b);
  const x = asIntOrNull(a);
  const y = asIntOrNull(b);
  if (x !== null && y !== null) {
    if (y === 0 || y === 0n) throw new PyError("ZeroDivisionError", "integer division or modulo by zero");
    if (typeof x === "number" && typeof y === "number" && Math.abs(x) < 2 ** 31 && Math.abs(y) < 2 ** 31) return Math.floor(x / y) || 0;
    const bx = big(x);
    const by = big(y);
    let q = bx / by;
    if ((bx % by !== 0n) && (bx < 0n) !== (by < 0n)) q -= 1n;
    return bigOut(g, mkInt(q));
  }
  const wx = fval(b);
  if (wx === 0) throw new PyError("ZeroDivisionError", "float floor division by zero");
  return mkFloat(floatDivmod(fval(a), wx)[0]);
}

export function pyMod(a: unknown, b: unknown, g: SizeGuard, format: (s: unknown, args: unknown) => unknown): unknown {
  if (isStr(a)) return format(a, b);
  checkUndef(a, b);
  if (!numLike(a) || !numLike(b)) throw binTypeError("%", a, b);
  const x = asIntOrNull(a);
  const y = asIntOrNull(b);
  if (x !== null && y !== null) {
    if (y === 0 || y === 0n) throw new PyError("ZeroDivisionError", "integer modulo by zero");
    if (typeof x === "number" && typeof y === "number") {
      const r = x % y;
      return (r !== 0 && r < 0 !== y < 0 ? r + y : r) || 0;
    }
    const bx = big(x);
    const by = big(y);
    const r = bx % by;
    return bigOut(g, mkInt(r !== 0n && r < 0n !== by < 0n ? r + by : r));
  }
  const wx = fval(b);
  if (wx === 0) throw new PyError("ZeroDivisionError", "float modulo");
  return mkFloat(floatDivmod(fval(a), wx)[1]);
}

export function pyPow(a: unknown, b: unknown, g: SizeGuard): unknown {
  checkUndef(a, b);
  if (!numLike(a) || !numLike(b)) throw typeError(`unsupported operand type(s) for ** or pow(): '${typeName(a)}' and '${typeName(b)}'`);
  const x = asIntOrNull(a);
  const y = asIntOrNull(b);
  if (x !== null && y !== null) {
    const by = big(y);
    if (by >= 0n) {
      const bx = big(x);
      if (bx === 0n || bx === 1n) return by === 0n ? 1 : mkInt(bx);
      if (bx === -1n) return by % 2n === 0n ? 1 : -1;
      const bits = Math.log2(Math.abs(Number(bx))) * Number(by);
      bigLimit(bits);
      return bigOut(g, mkInt(bx ** by));
    }
    if (Number(x) === 0) throw new PyError("ZeroDivisionError", "0.0 cannot be raised to a negative power");
    return mkFloat(Math.pow(Number(x), Number(y)));
  }
  const fx = fval(a);
  const fy = fval(b);
  if (fx === 0 && fy < 0) throw new PyError("ZeroDivisionError", "0.0 cannot be raised to a negative power");
  if (fx < 0 && !Number.isInteger(fy) && Number.isFinite(fy)) {
    throw new PyError("TypeError", "complex results are not supported");
  }
  const r = Math.pow(fx, fy);
  if (!Number.isFinite(r) && Number.isFinite(fx) && Number.isFinite(fy)) throw new PyError("OverflowError", "(34, 'Numerical result out of range')");
  return mkFloat(r);
}

export function pyNeg(a: unknown, g: SizeGuard): unknown {
  if (typeof a === "number") return Number.isInteger(a) ? (a === 0 ? 0 : -a) : -a;
  if (a instanceof Undefined) failUndefined(a);
  if (a instanceof PyFloat) return mkFloat(-a.value);
  if (typeof a === "bigint") return bigOut(g, mkInt(-a));
  if (typeof a === "boolean") return a ? -1 : 0;
  throw typeError(`bad operand type for unary -: '${typeName(a)}'`);
}

export function pyPos(a: unknown): unknown {
  if (typeof a === "number" || typeof a === "bigint" || a instanceof PyFloat) return a;
  if (a instanceof Undefined) failUndefined(a);
  if (typeof a === "boolean") return a ? 1 : 0;
  throw typeError(`bad operand type for unary +: '${typeName(a)}'`);
}


// ---- misc -----------------------------------------------------------------------------------

const ND = /\p{Nd}/u;

/**
 * What Python's int() and float() parse of a str (CPython's
 * _PyUnicode_TransformDecimalAndSpaceToASCII): ASCII stays, every other character str.isspace
 * accepts becomes a space, every Unicode decimal digit (category Nd) its ASCII digit, anything
 * else "?" (which no number holds). Nd digits come in runs of ten from 0, so a digit's value is its
 * distance from the start of its run, mod 10.
 */
export function pyNumberText(s: string): string {
  if (/^[\x00-\x7e]*$/.test(s)) return s;
  let out = "";
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (cp < 0x7f) out += ch; // ASCII stays (int() strips only " \t\n\v\f\r": "\x1c" is not a number's)
    else if (isPySpace(cp)) out += " ";
    else if (ND.test(ch)) {
      let start = cp;
      while (start > 0 && ND.test(String.fromCodePoint(start - 1))) start--;
      out += String((cp - start) % 10);
    } else out += "?";
  }
  return out;
}

/** Python int() of a str (base 10 semantics: optional sign, underscores between digits, spaces). */
export function parsePyInt(s: string, base: number): number | bigint | null {
  let t = pyNumberText(s).trim();
  let neg = false;
  if (t[0] === "+" || t[0] === "-") {
    neg = t[0] === "-";
    t = t.slice(1);
  }
  let b = base;
  if (b === 0 || b === 16 || b === 8 || b === 2) {
    const p = t.slice(0, 2).toLowerCase();
    if ((p === "0x" && (b === 0 || b === 16)) || (p === "0o" && (b === 0 || b === 8)) || (p === "0b" && (b === 0 || b === 2))) {
      b = p === "0x" ? 16 : p === "0o" ? 8 : 2;
      t = t.slice(2);
      if (t.startsWith("_")) t = t.slice(1);
    } else if (b === 0) {
      if (/^0+(_?0)*$/.test(t)) return 0;
      if (t.startsWith("0")) return null;
      b = 10;
    }
  }
  if (t.length === 0 || t.startsWith("_") || t.endsWith("_") || t.includes("__")) return null;
  t = t.replace(/_/g, "");
  const digits = "0123456789abcdefghijklmnopqrstuvwxyz".slice(0, b);
  if (t.length * Math.log2(b) > MAX_INT_BITS) {
    // a valid number this long is refused (before its quadratic conversion); an invalid one is not a number
    for (const ch of t.toLowerCase()) if (digits.indexOf(ch) < 0) return null;
    bigLimit(t.length * Math.log2(b));
  }
  let acc = 0n;
  const bb = BigInt(b);
  for (const ch of t.toLowerCase()) {
    const d = digits.indexOf(ch);
    if (d < 0) return null;
    acc = acc * bb + BigInt(d);
  }
  return mkInt(neg ? -acc : acc);
}

/** Python float() of a str. */
export function parsePyFloat(s: string): number | null {
  const t = pyNumberText(s).trim().toLowerCase().replace(/(?<=\d)_(?=\d)/g, "");
  if (/^[+-]?(inf|infinity)$/.test(t)) return t.startsWith("-") ? -Infinity : Infinity;
  if (/^[+-]?nan$/.test(t)) return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) return null;
  return Number(t);
}
