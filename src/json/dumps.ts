/**
 * `dumps`: Python `json.dumps` on the value model of values.ts, byte for byte:
 * default separators `", "`/`": "` (`","`/`": "` with an indent), floats as Python `repr`
 * (`1.0`, `1e-07`, `1e+16`, `NaN`, `Infinity`), `ensure_ascii` escaping with lowercase hex and
 * surrogate pairs, `sort_keys` in code-point order, lone surrogates kept raw when
 * `ensure_ascii` is false (as Python does).
 *
 * Accepts: null, booleans, numbers (integral = int), bigint, PyFloat, strings, arrays, plain
 * objects (key order from `keysOf`) and Maps (any Python-valid key type). Anything else goes
 * through `options.default` (which returns a replacement or throws), else raises
 * `JsonDumpsError` (a Python TypeError), as Python does.
 *
 * Layer: json.
 */
import { floatRepr } from "./floatrepr.js";
import { PyFloat, keysOf } from "./values.js";

export interface DumpsOptions {
  /** Python `indent`: null (default) = one line; an int = that many spaces; a string = itself. */
  indent?: number | string | null;
  /** Python `separators` `[item, key]`; default `[", ", ": "]`, or `[",", ": "]` with an indent. */
  separators?: readonly [string, string] | null;
  /** Sort dict keys (code-point order for strings). Default false. */
  sort_keys?: boolean;
  /** Escape every non-ASCII character as `\uXXXX`. Default true, as in Python. */
  ensure_ascii?: boolean;
  /** Called for values dumps does not know: return a JSON-able replacement or throw. */
  default?: (value: unknown) => unknown;
  /** Python type name of a value, for error messages (default: constructor name). */
  typeName?: (value: unknown) => string;
  /**
   * Largest output accepted, in UTF-16 units: past it dumps throws DumpsTooLarge before building
   * more (a nested or shared structure cannot expand into memory). Default: no limit.
   */
  maxLength?: number;
}

/** The output would be longer than `maxLength` (at least `size` units). */
export class DumpsTooLarge extends Error {
  readonly size: number;
  constructor(size: number) {
    super(`json.dumps output too large (${size} units)`);
    this.name = "DumpsTooLarge";
    this.size = size;
  }
}

/** Length of a string's JSON encoding, without building it (for strings too long to encode blindly). */
function encodedLength(s: string, ascii: boolean): number {
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 34 || c === 92 || c === 8 || c === 9 || c === 10 || c === 12 || c === 13) n += 2;
    else if (c < 0x20) n += 6;
    else if (ascii && c > 0x7e) n += 6;
    else n += 1;
  }
  return n;
}

/** A failure Python's json.dumps would raise (`pyType` is `TypeError` or `ValueError`). */
export class JsonDumpsError extends Error {
  readonly pyType: string;
  constructor(pyType: string, message: string) {
    super(message);
    this.name = "JsonDumpsError";
    this.pyType = pyType;
  }
}

const hasWellFormed = typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === "function";

function hex4(c: number): string {
  return "\\u" + c.toString(16).padStart(4, "0");
}

/** Characters json.dumps(ensure_ascii=False) escapes, plus surrogates (which need a closer look). */
const NEEDS_ESCAPE = /["\\\x00-\x1f\ud800-\udfff]/;

/** Python json string encoding, ensure_ascii=False. */
export function encodeStringUnicode(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return '"' + s + '"';
  if (hasWellFormed ? (s as unknown as { isWellFormed(): boolean }).isWellFormed() : true) {
    const r = JSON.stringify(s);
    if (hasWellFormed) return r;
    // Without isWellFormed, check for escaped lone surrogates the slow way.
    if (r.indexOf("\\ud") < 0 && r.indexOf("\\uD") < 0) return r;
  }
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 34) out += '\\"';
    else if (c === 92) out += "\\\\";
    else if (c < 0x20) out += controlEscape(c);
    else out += s[i];
  }
  return out + '"';
}

function controlEscape(c: number): string {
  switch (c) {
    case 8:
      return "\\b";
    case 9:
      return "\\t";
    case 10:
      return "\\n";
    case 12:
      return "\\f";
    case 13:
      return "\\r";
    default:
      return hex4(c);
  }
}

/** Python json string encoding, ensure_ascii=True. */
export function encodeStringAscii(s: string): string {
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c <= 0x7e && c !== 34 && c !== 92) continue;
    out += s.slice(start, i);
    start = i + 1;
    if (c === 34) out += '\\"';
    else if (c === 92) out += "\\\\";
    else if (c < 0x20) out += controlEscape(c);
    else out += hex4(c); // non-ASCII (surrogate pairs come out as two escapes, as in Python)
  }
  return out + s.slice(start) + '"';
}

function defaultTypeName(v: unknown): string {
  if (v === undefined) return "undefined";
  if (typeof v === "function") return "function";
  if (typeof v === "symbol") return "symbol";
  if (typeof v === "object" && v !== null) return (v as object).constructor?.name ?? "object";
  return typeof v;
}

function floatJson(x: number): string {
  if (x !== x) return "NaN";
  if (x === Infinity) return "Infinity";
  if (x === -Infinity) return "-Infinity";
  return floatRepr(x);
}

/** Python ordering of dict keys for sort_keys (str/number/bool/None mixes raise like Python). */
function compareKeys(a: unknown, b: unknown, typeName: (v: unknown) => string): number {
  if (typeof a === "string" && typeof b === "string") return compareCodePoints(a, b);
  const na = numKey(a);
  const nb = numKey(b);
  if (na !== undefined && nb !== undefined) return na < nb ? -1 : na > nb ? 1 : 0;
  throw new JsonDumpsError("TypeError", `'<' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
}

function numKey(v: unknown): number | bigint | undefined {
  if (typeof v === "number" || typeof v === "bigint") return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (v instanceof PyFloat) return v.value;
  return undefined;
}

/** Compare strings by code point (JS `<` compares UTF-16 units). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800) x = x <= 0xdfff ? x + 0x2000 : x - 0x800;
    if (y >= 0xd800) y = y <= 0xdfff ? y + 0x2000 : y - 0x800;
    return x - y;
  }
  return a.length - b.length;
}

/** Python `json.dumps(value, ...)`. */
export function dumps(value: unknown, options: DumpsOptions = {}): string {
  const ensureAscii = options.ensure_ascii ?? true;
  const sortKeys = options.sort_keys ?? false;
  let indent: string | null = null;
  const ind = options.indent;
  if (ind !== null && ind !== undefined) {
    indent = typeof ind === "string" ? ind : " ".repeat(Math.max(0, Math.trunc(Number(ind))));
  }
  let itemSep: string;
  let keySep: string;
  if (options.separators) {
    itemSep = options.separators[0];
    keySep = options.separators[1];
  } else if (indent !== null) {
    itemSep = ",";
    keySep = ": ";
  } else {
    itemSep = ", ";
    keySep = ": ";
  }
  const encode0 = ensureAscii ? encodeStringAscii : encodeStringUnicode;
  // The size limit: every container checks its text after each item it appends (so a nested or
  // shared structure stops at the first level that passes it), a string that escaping could
  // grow past it is measured before its copy is made, and so is an indentation.
  const max = options.maxLength ?? Infinity;
  const sixth = max / 6;
  const measure = (x: string): void => {
    const n = encodedLength(x, ensureAscii);
    if (n > max) throw new DumpsTooLarge(n);
  };
  const enc = encode0;
  const newline = (ind: string, level: number): string => {
    const n = 1 + ind.length * level;
    if (n > max) throw new DumpsTooLarge(n);
    return "\n" + ind.repeat(level);
  };
  const typeName = options.typeName ?? defaultTypeName;
  const dflt = options.default;
  // containers being encoded (for Python's circular-reference check); nesting is shallow in
  // practice, so a linear scan beats a Set
  const stack: unknown[] = [];

  const keyString = (k: unknown): string | null => {
    if (typeof k === "string") return k;
    if (typeof k === "number") return Number.isInteger(k) ? (Number.isSafeInteger(k) ? String(k === 0 ? 0 : k) : BigInt(k).toString()) : floatJson(k);
    if (k instanceof PyFloat) return floatJson(k.value);
    if (typeof k === "bigint") return k.toString();
    if (k === true) return "true";
    if (k === false) return "false";
    if (k === null) return "null";
    return null;
  };

  const enter = (v: object): void => {
    if (stack.includes(v)) throw new JsonDumpsError("ValueError", "Circular reference detected");
    if (stack.length > 2000) throw new JsonDumpsError("RecursionError", "maximum recursion depth exceeded while encoding a JSON object");
    stack.push(v);
  };

  const encode = (v: unknown, level: number): string => {
    switch (typeof v) {
      case "string":
        if (v.length > sixth) measure(v);
        return enc(v);
      case "number":
        if (!Number.isInteger(v)) return floatJson(v);
        return v === 0 ? "0" : Number.isSafeInteger(v) ? String(v) : BigInt(v).toString();
      case "boolean":
        return v ? "true" : "false";
      case "bigint":
        return v.toString();
      case "object":
        break;
      default:
        return encodeOther(v, level);
    }
    if (v === null) return "null";
    // The three containers frame their items inline, on purpose: collecting the items and
    // joining them in one shared helper cost 26% of render throughput (`npm run bench -- --suite
    // render`, 421 vs 311 M chars/s), tojson of the tools being most of a render.
    if (Array.isArray(v)) {
      if (v.length === 0) return "[]";
      enter(v);
      let out = "[";
      let sep = itemSep;
      if (indent !== null) {
        const nl = newline(indent, level + 1);
        out += nl;
        sep = itemSep + nl;
      }
      for (let i = 0; i < v.length; i++) {
        if (i > 0) {
          out += sep;
        }
        out += encode(v[i], level + 1);
        if (out.length > max) throw new DumpsTooLarge(out.length);
      }
      if (indent !== null) {
        const nl = newline(indent, level);
        out += nl;
      }
      stack.pop();
      return out + "]";
    }
    if (v instanceof PyFloat) return floatJson(v.value);
    const proto = Object.getPrototypeOf(v);
    if (proto === Object.prototype || proto === null) {
      let keys = keysOf(v);
      if (keys.length === 0) return "{}";
      enter(v);
      if (sortKeys) keys = keys.slice().sort(compareCodePoints);
      let out = "{";
      let sep = itemSep;
      if (indent !== null) {
        const nl = newline(indent, level + 1);
        out += nl;
        sep = itemSep + nl;
      }
      const o = v as Record<string, unknown>;
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i] as string;
        if (i > 0) {
          out += sep;
        }
        if (k.length > sixth) measure(k);
        out += enc(k) + keySep + encode(o[k], level + 1);
        if (out.length > max) throw new DumpsTooLarge(out.length);
      }
      if (indent !== null) {
        const nl = newline(indent, level);
        out += nl;
      }
      stack.pop();
      return out + "}";
    }
    if (v instanceof Map) {
      if (v.size === 0) return "{}";
      enter(v);
      let entries = Array.from(v.entries());
      if (sortKeys) entries = entries.sort((a, b) => compareKeys(a[0], b[0], typeName));
      let out = "{";
      let sep = itemSep;
      if (indent !== null) {
        const nl = newline(indent, level + 1);
        out += nl;
        sep = itemSep + nl;
      }
      let first = true;
      for (const [k, x] of entries) {
        const ks = keyString(k);
        if (ks === null) {
          throw new JsonDumpsError("TypeError", `keys must be str, int, float, bool or None, not ${typeName(k)}`);
        }
        if (!first) {
          out += sep;
        }
        first = false;
        if (ks.length > sixth) measure(ks);
        out += enc(ks) + keySep + encode(x, level + 1);
        if (out.length > max) throw new DumpsTooLarge(out.length);
      }
      if (indent !== null) {
        const nl = newline(indent, level);
        out += nl;
      }
      stack.pop();
      return out + "}";
    }
    return encodeOther(v, level);
  };

  const encodeOther = (v: unknown, level: number): string => {
    if (dflt !== undefined && typeof v === "object" && v !== null) {
      enter(v);
      const r = encode(dflt(v), level);
      stack.pop();
      return r;
    }
    if (dflt !== undefined) return encode(dflt(v), level);
    throw new JsonDumpsError("TypeError", `Object of type ${typeName(v)} is not JSON serializable`);
  };

  return encode(value, 0);
}
