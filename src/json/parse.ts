/**
 * `parseJson`: Python `json.loads` semantics on ordinary JS values (see values.ts):
 * - integers stay integers (beyond 2^53 as `bigint`), floats stay floats (`1.0` → `PyFloat`);
 * - object key order is kept even for integer-like keys (`KEY_ORDER`), duplicate keys keep the
 *   first position and the last value, `"__proto__"` is an ordinary own key;
 * - `NaN`, `Infinity`, `-Infinity` are accepted, lone surrogates (`"\ud800"`) are accepted
 *   (use `findLoneSurrogate` to reject them), raw control characters in strings are rejected;
 * - errors are DT_INVALID_JSON with Python's message, e.g.
 *   `Expecting ',' delimiter: line 1 column 4 (char 3)` (positions in code points).
 *
 * Layer: json.
 */
import { DeltatokError } from "../errors.js";
import { PyFloat, isArrayIndexKey, setKeyOrder } from "./values.js";

/**
 * Deepest nesting accepted ("Nesting too deep" past it). Python's own json.loads fails before
 * 1000 levels (RecursionError), and the recursive descent here must reach this limit before the
 * thread's stack runs out on every thread: the main thread's default stack overflowed at
 * ~3,400 levels of objects, a worker's (4 MB) did not at 5,000, so a limit of 5,000 made the same
 * line fail differently in and out of workers.
 */
const MAX_DEPTH = 1000;
/** Next character that ends the fast scan of a string body. */
const STRING_SPECIAL = /["\\\x00-\x1f]/g;
/** String literals longer than this many characters (quotes included) are decoded by JSON.parse. */
const FLAT_MIN = 12;

class Parser {
  readonly s: string;
  pos = 0;
  depth = 0;
  constructor(s: string) {
    this.s = s;
  }

  fail(msg: string, at: number): never {
    const s = this.s;
    // Python reports positions in code points.
    let cp = 0;
    let line = 1;
    let lastNl = -1;
    for (let i = 0; i < at && i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0xdc00 && c <= 0xdfff && i > 0) {
        const p = s.charCodeAt(i - 1);
        if (p >= 0xd800 && p <= 0xdbff) continue; // second half of a pair
      }
      if (c === 10) {
        line++;
        lastNl = cp;
      }
      cp++;
    }
    const col = cp - lastNl;
    throw new DeltatokError("DT_INVALID_JSON", `${msg}: line ${line} column ${col} (char ${cp})`);
  }

  ws(): void {
    const s = this.s;
    let i = this.pos;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else break;
    }
    this.pos = i;
  }

  value(): unknown {
    const s = this.s;
    const i = this.pos;
    const c = s.charCodeAt(i);
    switch (c) {
      case 34: // "
        return this.string();
      case 123: // {
        return this.object();
      case 91: // [
        return this.array();
      case 110: // n
        if (s.startsWith("null", i)) {
          this.pos = i + 4;
          return null;
        }
        break;
      case 116: // t
        if (s.startsWith("true", i)) {
          this.pos = i + 4;
          return true;
        }
        break;
      case 102: // f
        if (s.startsWith("false", i)) {
          this.pos = i + 5;
          return false;
        }
        break;
      case 78: // N
        if (s.startsWith("NaN", i)) {
          this.pos = i + 3;
          return NaN;
        }
        break;
      case 73: // I
        if (s.startsWith("Infinity", i)) {
          this.pos = i + 8;
          return Infinity;
        }
        break;
      case 45: // -
        if (s.startsWith("-Infinity", i)) {
          this.pos = i + 9;
          return -Infinity;
        }
        return this.number();
      default:
        if (c >= 48 && c <= 57) return this.number();
    }
    return this.fail("Expecting value", i);
  }

  number(): unknown {
    const s = this.s;
    const start = this.pos;
    let i = start;
    if (s.charCodeAt(i) === 45) i++;
    const c0 = s.charCodeAt(i);
    if (c0 === 48) i++;
    else if (c0 >= 49 && c0 <= 57) {
      i++;
      while (i < s.length) {
        const c = s.charCodeAt(i);
        if (c < 48 || c > 57) break;
        i++;
      }
    } else {
      return this.fail("Expecting value", start);
    }
    let isFloat = false;
    if (s.charCodeAt(i) === 46) {
      const d = s.charCodeAt(i + 1);
      if (d >= 48 && d <= 57) {
        isFloat = true;
        i += 2;
        while (i < s.length) {
          const c = s.charCodeAt(i);
          if (c < 48 || c > 57) break;
          i++;
        }
      }
    }
    const e = s.charCodeAt(i);
    if (e === 101 || e === 69) {
      let j = i + 1;
      const sg = s.charCodeAt(j);
      if (sg === 43 || sg === 45) j++;
      const d = s.charCodeAt(j);
      if (d >= 48 && d <= 57) {
        isFloat = true;
        j++;
        while (j < s.length) {
          const c = s.charCodeAt(j);
          if (c < 48 || c > 57) break;
          j++;
        }
        i = j;
      }
    }
    this.pos = i;
    const text = s.slice(start, i);
    if (isFloat) {
      const x = Number(text);
      return Number.isInteger(x) ? new PyFloat(x) : x;
    }
    if (text.length <= 15) {
      const n = Number(text);
      return n === 0 ? 0 : n; // "-0" is the int 0
    }
    const b = BigInt(text);
    if (b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(b);
    return b;
  }

  string(): string {
    const s = this.s;
    const start = this.pos; // at the opening quote
    let i = start + 1;
    let out = "";
    for (;;) {
      STRING_SPECIAL.lastIndex = i;
      const m = STRING_SPECIAL.exec(s);
      if (m === null) return this.fail("Unterminated string starting at", start);
      const j = m.index;
      const c = s.charCodeAt(j);
      if (c === 34) {
        this.pos = j + 1;
        // The literal is valid here (escapes and control characters were checked on the way), so
        // V8's own JSON.parse decodes it to the same string, as a fresh flat one. A
        // slice would be a view that keeps the whole request text alive (and two-byte when the
        // text has any non-Latin-1 character); escapes would make a rope. Either costs every
        // later pass over the string (validation, hashing, tokenization) and memory.
        if (j - start > FLAT_MIN) return JSON.parse(s.slice(start, j + 1)) as string;
        return out.length === 0 ? s.slice(i, j) : out + s.slice(i, j);
      }
      if (c !== 92) return this.fail("Invalid control character at", j);
      out += s.slice(i, j);
      const esc = s.charCodeAt(j + 1);
      switch (esc) {
        case 34:
          out += '"';
          break;
        case 92:
          out += "\\";
          break;
        case 47:
          out += "/";
          break;
        case 98:
          out += "\b";
          break;
        case 102:
          out += "\f";
          break;
        case 110:
          out += "\n";
          break;
        case 114:
          out += "\r";
          break;
        case 116:
          out += "\t";
          break;
        case 117: {
          const hex = s.slice(j + 2, j + 6);
          // CPython's scanner also wants a character after the four digits
          if (j + 6 >= s.length || !/^[0-9a-fA-F]{4}$/.test(hex)) return this.fail("Invalid \\uXXXX escape", j + 1);
          out += String.fromCharCode(parseInt(hex, 16));
          i = j + 6;
          continue;
        }
        default:
          if (j + 1 >= s.length) return this.fail("Unterminated string starting at", start);
          return this.fail("Invalid \\escape", j);
      }
      i = j + 2;
    }
  }

  array(): unknown[] {
    const s = this.s;
    if (++this.depth > MAX_DEPTH) return this.fail("Nesting too deep", this.pos);
    this.pos++;
    const out: unknown[] = [];
    this.ws();
    if (s.charCodeAt(this.pos) === 93) {
      this.pos++;
      this.depth--;
      return out;
    }
    for (;;) {
      this.ws();
      out.push(this.value());
      this.ws();
      const c = s.charCodeAt(this.pos);
      if (c === 44) {
        this.pos++;
        continue;
      }
      if (c === 93) {
        this.pos++;
        this.depth--;
        return out;
      }
      return this.fail("Expecting ',' delimiter", this.pos);
    }
  }

  object(): Record<string, unknown> {
    const s = this.s;
    if (++this.depth > MAX_DEPTH) return this.fail("Nesting too deep", this.pos);
    this.pos++;
    const out: Record<string, unknown> = {};
    let order: string[] | null = null;
    this.ws();
    if (s.charCodeAt(this.pos) === 125) {
      this.pos++;
      this.depth--;
      return out;
    }
    for (;;) {
      this.ws();
      if (s.charCodeAt(this.pos) !== 34) {
        return this.fail("Expecting property name enclosed in double quotes", this.pos);
      }
      const key = this.string();
      this.ws();
      if (s.charCodeAt(this.pos) !== 58) return this.fail("Expecting ':' delimiter", this.pos);
      this.pos++;
      this.ws();
      const v = this.value();
      const fresh = !Object.prototype.hasOwnProperty.call(out, key);
      if (order === null && fresh && isArrayIndexKey(key)) order = Object.keys(out);
      if (key === "__proto__") {
        Object.defineProperty(out, key, { value: v, enumerable: true, configurable: true, writable: true });
      } else {
        out[key] = v;
      }
      if (order !== null && fresh) order.push(key);
      this.ws();
      const c = s.charCodeAt(this.pos);
      if (c === 44) {
        this.pos++;
        continue;
      }
      if (c === 125) {
        this.pos++;
        break;
      }
      return this.fail("Expecting ',' delimiter", this.pos);
    }
    this.depth--;
    if (order !== null) {
      const ks = Object.keys(out);
      for (let i = 0; i < ks.length; i++) {
        if (ks[i] !== order[i]) {
          setKeyOrder(out, order);
          break;
        }
      }
    }
    return out;
  }
}

/** Python `json.loads(text)` on ordinary JS values; throws DT_INVALID_JSON. */
export function parseJson(text: string): unknown {
  const p = new Parser(text);
  if (text.charCodeAt(0) === 0xfeff) p.fail("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0);
  p.ws();
  let v: unknown;
  try {
    v = p.value();
  } catch (e) {
    // the stack ran out before MAX_DEPTH (a caller already deep in its own stack): the same error
    if (e instanceof RangeError) p.fail("Nesting too deep", p.pos);
    throw e;
  }
  p.ws();
  if (p.pos < text.length) p.fail("Extra data", p.pos);
  return v;
}

const hasWellFormed = typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === "function";

/** True when `s` contains a UTF-16 surrogate that is not part of a pair. */
export function hasLoneSurrogate(s: string): boolean {
  if (hasWellFormed) return !(s as unknown as { isWellFormed(): boolean }).isWellFormed();
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
      else return true;
    } else if (c >= 0xdc00 && c <= 0xdfff) return true;
  }
  return false;
}

function keyPath(k: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? "." + k : "[" + JSON.stringify(k) + "]";
}

/**
 * Path (relative to `value`, e.g. `[3].content`, `.tool_calls[0].function.arguments`; `""` for
 * `value` itself) of the first string — value or object key — holding a lone surrogate, or null.
 */
export function findLoneSurrogate(value: unknown): string | null {
  const seen = new Set<object>();
  const walk = (v: unknown, path: string): string | null => {
    if (typeof v === "string") return hasLoneSurrogate(v) ? path : null;
    if (typeof v !== "object" || v === null) return null;
    if (seen.has(v)) return null;
    seen.add(v);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const r = walk(v[i], `${path}[${i}]`);
        if (r !== null) return r;
      }
      return null;
    }
    if (v instanceof Map) {
      for (const [k, x] of v) {
        const kp = typeof k === "string" ? keyPath(k) : `[${String(k)}]`;
        if (typeof k === "string" && hasLoneSurrogate(k)) return path + kp;
        const r = walk(x, path + kp);
        if (r !== null) return r;
      }
      return null;
    }
    for (const k of Object.keys(v)) {
      if (hasLoneSurrogate(k)) return path + keyPath(k);
      const r = walk((v as Record<string, unknown>)[k], path + keyPath(k));
      if (r !== null) return r;
    }
    return null;
  };
  return walk(value, "");
}
