/**
 * Python string formatting: printf-style `%` (str.__mod__, the `format` filter) and
 * `str.format` with the format-spec mini-language. Floats are rounded half-to-even on their
 * exact binary value, as CPython does (JS toFixed rounds exact ties up).
 *
 * Layer: template/jinja.
 */
import { PyFloat } from "../../json/values.js";
import { floatRepr } from "../../json/floatrepr.js";
import { PyError, typeError, valueError } from "./pyerror.js";
import { PIECE_UNITS, dictGet, failUndefined, fval, isDict, isFloat, isInt, isStr, markupEscape, mkInt, pyRepr, pyStr, strOf, typeName } from "./ops.js";
import type { SizeGuard } from "./ops.js";
import { StrBuilder, cpLen, cpSlice } from "./pystr.js";
import { MISSING, Markup, PyRange, Undefined, isTuple } from "./values.js";

// ---- number formatting ----------------------------------------------------------------------

/** Round the decimal digit string of |x| (from toFixed(100)/toExponential) half-to-even. */
function fixedDigits(x: number, prec: number): string {
  const ax = Math.abs(x);
  let s = ax.toFixed(Math.min(100, prec));
  if (prec < 100) {
    // Detect exact ties, which toFixed rounds away from zero.
    const exact = ax.toFixed(Math.min(100, prec + 25));
    const dot = exact.indexOf(".");
    const tail = exact.slice(dot + 1 + prec);
    if (/^50*$/.test(tail)) {
      const truncated = prec === 0 ? exact.slice(0, dot) : exact.slice(0, dot + 1 + prec);
      const lastDigit = Number(truncated[truncated.length - 1]);
      if (lastDigit % 2 === 0) s = truncated; // round half to even: keep
    }
  }
  return s;
}

function expDigits(x: number, prec: number): { mant: string; exp: number } {
  const ax = Math.abs(x);
  if (ax === 0) return { mant: prec > 0 ? "0." + "0".repeat(prec) : "0", exp: 0 };
  let s = ax.toExponential(Math.min(100, prec));
  const full = ax.toExponential(Math.min(100, prec + 25));
  const [fm, fe] = full.split("e");
  const digits = (fm as string).replace(".", "");
  const tail = digits.slice(prec + 1);
  if (/^50*$/.test(tail)) {
    const keep = digits.slice(0, prec + 1);
    if (Number(keep[keep.length - 1]) % 2 === 0) {
      s = (prec > 0 ? keep[0] + "." + keep.slice(1) : keep) + "e" + fe;
    }
  }
  const [m, e] = s.split("e");
  return { mant: m as string, exp: Number(e) };
}

function expStr(e: number): string {
  const a = Math.abs(e);
  return (e < 0 ? "-" : "+") + (a < 10 ? "0" + a : String(a));
}

function nonFinite(x: number, upper: boolean): string | null {
  if (x !== x) return upper ? "NAN" : "nan";
  if (x === Infinity || x === -Infinity) return upper ? "INF" : "inf";
  return null;
}

/** %f body of |x| */
export function fmtF(x: number, prec: number, upper = false, alt = false): string {
  const nf = nonFinite(x, upper);
  if (nf !== null) return nf;
  const s = fixedDigits(x, prec);
  return alt && prec === 0 ? s + "." : s;
}

/** %e body of |x| */
export function fmtE(x: number, prec: number, upper = false, alt = false): string {
  const nf = nonFinite(x, upper);
  if (nf !== null) return nf;
  const { mant, exp } = expDigits(x, prec);
  const m = alt && prec === 0 ? mant + "." : mant;
  return m + (upper ? "E" : "e") + expStr(exp);
}

/** %g body of |x| */
export function fmtG(x: number, precIn: number, upper = false, alt = false): string {
  const nf = nonFinite(x, upper);
  if (nf !== null) return nf;
  const p = precIn === 0 ? 1 : precIn;
  if (x === 0) {
    return alt ? "0." + "0".repeat(p - 1) : "0";
  }
  const { exp } = expDigits(x, p - 1);
  let s: string;
  if (exp >= -4 && exp < p) s = fixedDigits(x, p - 1 - exp);
  else s = fmtE(x, p - 1, upper, alt);
  if (!alt) {
    // strip trailing zeros of the fraction
    const ePos = s.search(/[eE]/);
    let m = ePos >= 0 ? s.slice(0, ePos) : s;
    const rest = ePos >= 0 ? s.slice(ePos) : "";
    if (m.includes(".")) m = m.replace(/0+$/, "").replace(/\.$/, "");
    s = m + rest;
  } else if (!s.includes(".") && !/[eE]/.test(s)) s += ".";
  return s;
}

/** Python repr-style shortest float without exponent rules of repr (format type ''/None). */
function fmtNone(x: number, prec: number | null): string {
  if (prec === null) return floatRepr(x).replace(/^-/, "");
  // like 'g' but at least one digit after the point when it would look like an int
  const s = fmtG(x, prec);
  if (/^[0-9]+$/.test(s)) return s + ".0";
  return s;
}

function groupDigits(int: string, sep: string, every = 3): string {
  // groups of `every` digits from the right (the first may be shorter)
  const head = int.length % every || every;
  const parts = [int.slice(0, head)];
  for (let i = head; i < int.length; i += every) parts.push(int.slice(i, i + every));
  return parts.join(sep);
}

// ---- printf-style -----------------------------------------------------------------------------

function toIntForFormat(v: unknown, conv: string): number | bigint {
  if (isInt(v)) return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (isFloat(v)) {
    const f = fval(v);
    if (!Number.isFinite(f)) throw new PyError("OverflowError", "cannot convert float infinity to integer");
    return mkInt(BigInt(Math.trunc(f)));
  }
  if (conv === "x" || conv === "X" || conv === "o" || conv === "c") {
    throw typeError(`%${conv} format: an integer is required, not ${typeName(v)}`);
  }
  throw typeError(`%${conv} format: a real number is required, not ${typeName(v)}`);
}

function toFloatForFormat(v: unknown, conv: string): number {
  if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean" || v instanceof PyFloat) return fval(v);
  throw typeError(`must be real number, not ${typeName(v)}`);
  void conv;
}

/** Widths and precisions beyond this are refused before building the string (budget). */
const MAX_FIELD = 100_000_000;

function checkField(n: number): void {
  if (n > MAX_FIELD) throw new PyError("BudgetExceeded", `format field too wide (${n} characters)`, "DT_TEMPLATE_BUDGET");
}

function pad(body: string, sign: string, width: number, left: boolean, zero: boolean, g: SizeGuard): string {
  checkField(width);
  const len = cpLen(body) + sign.length;
  if (width <= len) return sign + body;
  g.buildStr(width - len);
  if (left) return sign + body + " ".repeat(width - len);
  if (zero) return sign + "0".repeat(width - len) + body;
  return " ".repeat(width - len) + sign + body;
}

function asciiRepr(v: unknown, g: SizeGuard): string {
  const r = pyRepr(v, g);
  if (!/[^\x00-\x7f]/.test(r)) return r;
  let n = r.length;
  for (let i = 0; i < r.length; i++) {
    const cp = r.codePointAt(i) as number;
    if (cp < 0x80) continue;
    if (cp <= 0xff) n += 3;
    else if (cp <= 0xffff) n += 5;
    else {
      n += 8;
      i++;
    }
  }
  // (built in chunks, then joined)
  g.checkSize(n);
  g.charge(2 * n);
  const out = new StrBuilder();
  let start = 0;
  for (let i = 0; i < r.length; i++) {
    const cp = r.codePointAt(i) as number;
    if (cp < 0x80) continue;
    if (start < i) out.add(r.slice(start, i));
    if (cp <= 0xff) out.add("\\x" + cp.toString(16).padStart(2, "0"));
    else if (cp <= 0xffff) out.add("\\u" + cp.toString(16).padStart(4, "0"));
    else {
      out.add("\\U" + cp.toString(16).padStart(8, "0"));
      i++;
    }
    start = i + 1;
  }
  if (start < r.length) out.add(r.slice(start));
  return out.toString();
}

/** Python `fmt % args`, built under the render's budget `g`. */
export function percentFormat(fmtIn: string | Markup, args: unknown, g: SizeGuard): string | Markup {
  const isMarkup = fmtIn instanceof Markup;
  const fmt = strOf(fmtIn);
  const esc = (s: string, v: unknown): string => {
    if (!isMarkup || v instanceof Markup) return s;
    return s.replace(/[&<>"']/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&#34;" : "&#39;"));
  };
  let list: unknown[];
  let dict: object | null = null;
  // CPython: an argument with __getitem__ (dict, list, range, Undefined) is also the mapping, and
  // then leftover arguments are not an error.
  let mappingLike = false;
  if (isTuple(args)) list = args as unknown[];
  else {
    list = [args];
    if (isDict(args)) dict = args as object;
    mappingLike = dict !== null || Array.isArray(args) || args instanceof Undefined || args instanceof PyRange;
  }
  let argi = 0;
  const nextArg = (): unknown => {
    if (argi >= list.length) throw typeError("not enough arguments for format string");
    return list[argi++];
  };
  let out = "";
  // each piece is charged (its length and its rope node); the result is capped as one value
  const put = (t: string): void => {
    g.charge(t.length + PIECE_UNITS);
    out += t;
    if (out.length > g.maxChars) g.checkSize(out.length);
  };
  let i = 0;
  const n = fmt.length;
  let usedDict = false;
  while (i < n) {
    const p = fmt.indexOf("%", i);
    if (p < 0) {
      put(fmt.slice(i));
      break;
    }
    if (p > i) put(fmt.slice(i, p));
    i = p + 1;
    if (i >= n) throw valueError("incomplete format");
    let key: string | null = null;
    if (fmt[i] === "(") {
      if (dict === null) {
        if (args instanceof Undefined) failUndefined(args);
        if (!mappingLike) throw typeError("format requires a mapping");
      }
      let depth = 1;
      let j = i + 1;
      while (j < n && depth > 0) {
        if (fmt[j] === "(") depth++;
        else if (fmt[j] === ")") depth--;
        j++;
      }
      if (depth > 0) throw valueError("incomplete format key");
      key = fmt.slice(i + 1, j - 1);
      i = j;
      usedDict = true;
    }
    let left = false;
    let plus = false;
    let space = false;
    let alt = false;
    let zero = false;
    for (; i < n; i++) {
      const c = fmt[i];
      if (c === "-") left = true;
      else if (c === "+") plus = true;
      else if (c === " ") space = true;
      else if (c === "#") alt = true;
      else if (c === "0") zero = true;
      else break;
    }
    let width = 0;
    if (fmt[i] === "*") {
      const w = nextArg();
      if (!isInt(w)) throw typeError("* wants int");
      width = Number(w);
      if (width < 0) {
        left = true;
        width = -width;
      }
      i++;
    } else {
      while (i < n && (fmt[i] as string) >= "0" && (fmt[i] as string) <= "9") width = width * 10 + (fmt.charCodeAt(i++) - 48);
    }
    let prec: number | null = null;
    if (fmt[i] === ".") {
      i++;
      prec = 0;
      if (fmt[i] === "*") {
        const pv = nextArg();
        if (!isInt(pv)) throw typeError("* wants int");
        prec = Math.max(0, Number(pv));
        i++;
      } else {
        while (i < n && (fmt[i] as string) >= "0" && (fmt[i] as string) <= "9") prec = prec * 10 + (fmt.charCodeAt(i++) - 48);
      }
    }
    while (i < n && (fmt[i] === "h" || fmt[i] === "l" || fmt[i] === "L")) i++;
    if (i >= n) throw valueError("incomplete format");
    const conv = fmt[i++] as string;
    if (conv === "%") {
      put("%");
      continue;
    }
    let v: unknown;
    if (key !== null) {
      if (dict === null) throw typeError(`${typeName(args)} indices must be integers or slices, not str`);
      const got = dictGet(dict as object, key);
      if (got === MISSING) throw new PyError("KeyError", pyRepr(key));
      v = got;
    } else v = nextArg();
    let body: string;
    let sign = "";
    switch (conv) {
      case "s":
      case "r":
      case "a": {
        body = conv === "s" ? pyStr(v, g) : conv === "r" ? pyRepr(v, g) : asciiRepr(v, g);
        if (prec !== null) body = cpSlice(body, 0, prec);
        put(esc(pad(body, "", width, left, false, g), v));
        continue;
      }
      case "d":
      case "i":
      case "u":
      case "x":
      case "X":
      case "o": {
        const iv = toIntForFormat(v, conv);
        const neg = typeof iv === "bigint" ? iv < 0n : iv < 0;
        const abs = typeof iv === "bigint" ? (neg ? -iv : iv) : Math.abs(iv);
        const radix = conv === "x" || conv === "X" ? 16 : conv === "o" ? 8 : 10;
        body = abs.toString(radix);
        if (conv === "X") body = body.toUpperCase();
        if (prec !== null) checkField(prec);
        if (prec !== null && body.length < prec) {
          g.buildStr(prec);
          body = "0".repeat(prec - body.length) + body;
        }
        if (alt && radix !== 10) body = (conv === "x" ? "0x" : conv === "X" ? "0X" : "0o") + body;
        sign = neg ? "-" : plus ? "+" : space ? " " : "";
        if (alt && radix !== 10 && zero && !left && width > body.length + sign.length) {
          checkField(width);
          g.buildStr(width);
          const pre = body.slice(0, 2);
          body = pre + "0".repeat(width - body.length - sign.length) + body.slice(2);
        }
        break;
      }
      case "e":
      case "E":
      case "f":
      case "F":
      case "g":
      case "G": {
        const x = toFloatForFormat(v, conv);
        const p = prec === null ? 6 : prec;
        const lower = conv.toLowerCase();
        const upper = conv !== lower;
        body = lower === "f" ? fmtF(x, p, upper, alt) : lower === "e" ? fmtE(x, p, upper, alt) : fmtG(x, p, upper, alt);
        const neg = x < 0 || Object.is(x, -0);
        sign = neg && x === x ? "-" : plus ? "+" : space ? " " : "";
        if (!Number.isFinite(x)) zero = false;
        break;
      }
      case "c": {
        if (isStr(v)) {
          const s = strOf(v);
          if (cpLen(s) !== 1) throw typeError("%c requires int or char");
          body = s;
        } else if (isInt(v)) {
          const cp = Number(v);
          if (cp < 0 || cp > 0x10ffff) throw new PyError("OverflowError", "%c arg not in range(0x110000)");
          body = String.fromCodePoint(cp);
        } else throw typeError("%c requires int or char");
        put(esc(pad(body, "", width, left, false, g), v));
        continue;
      }
      default:
        throw valueError(`unsupported format character '${conv}' (0x${conv.charCodeAt(0).toString(16)}) at index ${i - 1}`);
    }
    put(pad(body, sign, width, left, zero, g));
  }
  if (!usedDict && !mappingLike && argi < list.length) {
    throw typeError("not all arguments converted during string formatting");
  }
  return isMarkup ? new Markup(out) : out;
}

// ---- str.format ---------------------------------------------------------------------------

interface Spec {
  fill: string;
  align: string;
  sign: string;
  alt: boolean;
  zero: boolean;
  width: number;
  grouping: string;
  precision: number | null;
  type: string;
}

function parseSpec(spec: string, v: unknown): Spec {
  const cps = Array.from(spec);
  let i = 0;
  let fill = " ";
  let align = "";
  const isAlign = (c: string | undefined): boolean => c === "<" || c === ">" || c === "=" || c === "^";
  if (cps.length >= 2 && isAlign(cps[1])) {
    fill = cps[0] as string;
    align = cps[1] as string;
    i = 2;
  } else if (isAlign(cps[0])) {
    align = cps[0] as string;
    i = 1;
  }
  let sign = "";
  if (cps[i] === "+" || cps[i] === "-" || cps[i] === " ") sign = cps[i++] as string;
  let alt = false;
  if (cps[i] === "#") {
    alt = true;
    i++;
  }
  let zero = false;
  if (cps[i] === "0") {
    zero = true;
    i++;
  }
  let width = 0;
  while (i < cps.length && /[0-9]/.test(cps[i] as string)) width = width * 10 + Number(cps[i++]);
  let grouping = "";
  if (cps[i] === "," || cps[i] === "_") grouping = cps[i++] as string;
  let precision: number | null = null;
  if (cps[i] === ".") {
    i++;
    if (!/[0-9]/.test(cps[i] ?? "")) throw valueError("Format specifier missing precision");
    precision = 0;
    while (i < cps.length && /[0-9]/.test(cps[i] as string)) precision = precision * 10 + Number(cps[i++]);
  }
  let type = "";
  if (i < cps.length) type = cps[i++] as string;
  if (i < cps.length) throw valueError(`Invalid format specifier '${spec}' for object of type '${typeName(v)}'`);
  return { fill, align, sign, alt, zero, width, grouping, precision, type };
}

function alignBody(g: SizeGuard, body: string, sign: string, sp: Spec, defaultAlign: string): string {
  checkField(sp.width);
  let align = sp.align || defaultAlign;
  let fill = sp.fill;
  if (sp.zero && !sp.align) {
    fill = "0";
    align = "=";
  }
  const len = cpLen(body) + sign.length;
  if (sp.width <= len) return sign + body;
  const padn = sp.width - len;
  g.buildStr(sp.width);
  switch (align) {
    case "<":
      return sign + body + fill.repeat(padn);
    case ">":
      return fill.repeat(padn) + sign + body;
    case "^": {
      const l = Math.floor(padn / 2);
      return fill.repeat(l) + sign + body + fill.repeat(padn - l);
    }
    default:
      return sign + fill.repeat(padn) + body;
  }
}

/** Python format(value, spec) for str, int, float, bool, None, Markup; padding is charged to `g`. */
export function formatValue(v: unknown, spec: string, g: SizeGuard): string {
  if (spec === "") return pyStr(v, g);
  g.buildItems(spec.length);
  const sp = parseSpec(spec, v);
  if (isStr(v)) {
    if (sp.type !== "" && sp.type !== "s") throw valueError(`Unknown format code '${sp.type}' for object of type 'str'`);
    if (sp.sign) throw valueError("Sign not allowed in string format specifier");
    let s = strOf(v);
    if (sp.precision !== null) s = cpSlice(s, 0, sp.precision);
    return alignBody(g, s, "", sp, "<");
  }
  if (typeof v === "boolean" && (sp.type === "" || sp.type === "s")) return alignBody(g, v ? "True" : "False", "", sp, "<");
  if (isInt(v) || typeof v === "boolean") {
    const iv = typeof v === "boolean" ? (v ? 1 : 0) : v;
    if ("eEfFgG%".includes(sp.type) && sp.type !== "") return formatValue(mkFloatish(Number(iv)), spec, g);
    const neg = typeof iv === "bigint" ? iv < 0n : iv < 0;
    const abs = typeof iv === "bigint" ? (neg ? -iv : iv) : Math.abs(iv);
    let body: string;
    let prefix = "";
    switch (sp.type) {
      case "":
      case "d":
      case "n":
        body = abs.toString(10);
        break;
      case "x":
      case "X":
        body = abs.toString(16);
        if (sp.type === "X") body = body.toUpperCase();
        if (sp.alt) prefix = sp.type === "x" ? "0x" : "0X";
        break;
      case "o":
        body = abs.toString(8);
        if (sp.alt) prefix = "0o";
        break;
      case "b":
        body = abs.toString(2);
        if (sp.alt) prefix = "0b";
        break;
      case "c":
        body = String.fromCodePoint(Number(abs));
        break;
      default:
        throw valueError(`Unknown format code '${sp.type}' for object of type 'int'`);
    }
    if (sp.precision !== null) throw valueError("Precision not allowed in integer format specifier");
    if (sp.grouping) body = groupDigits(body, sp.grouping, sp.type === "" || sp.type === "d" ? 3 : 4);
    const sign = neg ? "-" : sp.sign === "+" ? "+" : sp.sign === " " ? " " : "";
    return alignBody(g, body, sign + prefix, sp, ">");
  }
  if (isFloat(v)) {
    const x = fval(v);
    let body: string;
    const p = sp.precision;
    switch (sp.type) {
      case "f":
      case "F":
        body = fmtF(x, p ?? 6, sp.type === "F", sp.alt);
        break;
      case "e":
      case "E":
        body = fmtE(x, p ?? 6, sp.type === "E", sp.alt);
        break;
      case "g":
      case "G":
      case "n":
        body = fmtG(x, p ?? 6, sp.type === "G", sp.alt);
        break;
      case "%":
        body = fmtF(x * 100, p ?? 6, false, sp.alt) + "%";
        break;
      case "":
        body = fmtNone(x, p);
        break;
      default:
        throw valueError(`Unknown format code '${sp.type}' for object of type 'float'`);
    }
    if (sp.grouping) {
      const m = /^(\d+)(.*)$/.exec(body);
      if (m) body = groupDigits(m[1] as string, sp.grouping) + m[2];
    }
    const neg = x < 0 || Object.is(x, -0);
    const sign = neg && x === x ? "-" : sp.sign === "+" ? "+" : sp.sign === " " ? " " : "";
    return alignBody(g, body, sign, sp, ">");
  }
  if (v === null) {
    if (sp.type !== "" && sp.type !== "s") throw typeError("unsupported format string passed to NoneType.__format__");
    return alignBody(g, "None", "", sp, "<");
  }
  throw typeError(`unsupported format string passed to ${typeName(v)}.__format__`);
}

function mkFloatish(x: number): unknown {
  return Number.isInteger(x) ? new PyFloat(x) : x;
}

export interface FormatLookups {
  getattr(obj: unknown, name: string): unknown;
  getitem(obj: unknown, key: unknown): unknown;
}

/**
 * One replacement field of Markup.format / format_map (markupsafe's EscapeFormatter): a Markup
 * value is inserted as is (and takes no format spec), any other is formatted, then escaped.
 */
function escapedField(v: unknown, spec: string, g: SizeGuard): string {
  if (v instanceof Markup) {
    if (spec !== "") throw valueError("Unsupported format specification for Markup.");
    return v.s;
  }
  return markupEscape(formatValue(v, spec, g)).s;
}

/**
 * Python str.format(*args, **kwargs) through the sandboxed formatter, built under the render's
 * budget `g`; `escape`: the format string is a Markup, whose fields (nested specs included) are
 * escaped as markupsafe's EscapeFormatter does.
 */
export function strFormat(fmt: string, args: unknown[], kwargs: Map<string, unknown>, look: FormatLookups, g: SizeGuard, depth = 0, escape = false): string {
  if (depth > 2) throw valueError("Max string recursion exceeded");
  let out = "";
  // each piece is charged (its length and its rope node); the result is capped as one value
  const put = (t: string): void => {
    g.charge(t.length + PIECE_UNITS);
    out += t;
    if (out.length > g.maxChars) g.checkSize(out.length);
  };
  let auto = 0;
  let mode: "none" | "auto" | "manual" = "none";
  const n = fmt.length;
  let i = 0;
  while (i < n) {
    const c = fmt[i] as string;
    if (c === "}") {
      if (fmt[i + 1] === "}") {
        put("}");
        i += 2;
        continue;
      }
      throw valueError("Single '}' encountered in format string");
    }
    if (c !== "{") {
      // a run of literal text, up to the next brace
      let j = i + 1;
      while (j < n && fmt.charCodeAt(j) !== 123 && fmt.charCodeAt(j) !== 125) j++;
      put(fmt.slice(i, j));
      i = j;
      continue;
    }
    if (fmt[i + 1] === "{") {
      put("{");
      i += 2;
      continue;
    }
    // parse field until matching }
    let j = i + 1;
    let depthB = 1;
    while (j < n) {
      if (fmt[j] === "{") depthB++;
      else if (fmt[j] === "}") {
        depthB--;
        if (depthB === 0) break;
      }
      j++;
    }
    if (j >= n) throw valueError(i + 1 >= n ? "Single '{' encountered in format string" : "expected '}' before end of string");
    const field = fmt.slice(i + 1, j);
    i = j + 1;
    // split field_name[!conv][:spec]
    let k = 0;
    while (k < field.length && field[k] !== "!" && field[k] !== ":") {
      if (field[k] === "[") {
        while (k < field.length && field[k] !== "]") k++;
      }
      k++;
    }
    const name = field.slice(0, k);
    let conv = "";
    let spec = "";
    if (field[k] === "!") {
      conv = field[k + 1] ?? "";
      if (field.length > k + 2 && field[k + 2] !== ":") throw valueError("expected ':' after conversion specifier");
      k += 2;
    }
    if (field[k] === ":") spec = field.slice(k + 1);
    // resolve field name
    const m = /^([^.[]*)(.*)$/s.exec(name) as RegExpExecArray;
    const first = m[1] as string;
    let rest = m[2] as string;
    let obj: unknown;
    if (first === "") {
      if (mode === "manual") throw valueError("cannot switch from manual field specification to automatic field numbering");
      mode = "auto";
      const idx = auto++;
      if (idx >= args.length) throw new PyError("IndexError", "tuple index out of range");
      obj = args[idx];
    } else if (/^[0-9]+$/.test(first)) {
      if (mode === "auto") throw valueError("cannot switch from automatic field numbering to manual field specification");
      mode = "manual";
      const idx = Number(first);
      if (idx >= args.length) throw new PyError("IndexError", "tuple index out of range");
      obj = args[idx];
    } else {
      if (!kwargs.has(first)) throw new PyError("KeyError", pyRepr(first));
      obj = kwargs.get(first);
    }
    while (rest.length > 0) {
      if (rest[0] === ".") {
        const mm = /^\.([^.[]*)/.exec(rest) as RegExpExecArray;
        if ((mm[1] as string).length === 0) throw valueError("Empty attribute in format string");
        obj = look.getattr(obj, mm[1] as string);
        rest = rest.slice(mm[0].length);
      } else if (rest[0] === "[") {
        const close = rest.indexOf("]");
        if (close < 0) throw valueError("Missing ']' in format string");
        const key = rest.slice(1, close);
        obj = look.getitem(obj, /^[0-9]+$/.test(key) ? Number(key) : key);
        rest = rest.slice(close + 1);
      } else throw valueError("Only '.' or '[' may follow ']' in format field specifier");
    }
    if (conv === "r") obj = pyRepr(obj, g);
    else if (conv === "s") obj = pyStr(obj, g);
    else if (conv === "a") obj = asciiRepr(obj, g);
    else if (conv !== "") throw valueError(`Unknown conversion specifier ${conv}`);
    if (spec.includes("{")) spec = strFormat(spec, args, kwargs, look, g, depth + 1, escape);
    put(escape ? escapedField(obj, spec, g) : formatValue(obj, spec, g));
  }
  return out;
}
