/**
 * Jinja2 lexer, configured as Hugging Face configures it: default delimiters, trim_blocks and
 * lstrip_blocks on, no line statements, keep_trailing_newline off, "\n" newlines.
 *
 * Reproduces Jinja2 3.1's tokenizer exactly: newline normalization of the whole source, the
 * dropped trailing newline, `-`/`+` whitespace control, trim_blocks after `%}` and `#}`,
 * lstrip_blocks before `{%`/`{#` (not `{{`) when only spaces precede on the line, raw blocks,
 * bracket balancing inside tags, and Python's string-literal unescaping. A lexing failure is
 * recorded as an error token where it happens, so (as in Jinja2, whose lexer is lazy) a parse
 * error earlier in the template is reported first.
 *
 * Layer: template/jinja.
 */
import { isPySpace, pyStrRepr } from "./pystr.js";

export type TokType =
  | "data"
  | "block_begin"
  | "block_end"
  | "variable_begin"
  | "variable_end"
  | "name"
  | "string"
  | "integer"
  | "float"
  | "eof"
  | "error"
  // operators
  | "add"
  | "sub"
  | "div"
  | "floordiv"
  | "mul"
  | "mod"
  | "pow"
  | "tilde"
  | "lbracket"
  | "rbracket"
  | "lparen"
  | "rparen"
  | "lbrace"
  | "rbrace"
  | "eq"
  | "ne"
  | "gt"
  | "gteq"
  | "lt"
  | "lteq"
  | "assign"
  | "dot"
  | "colon"
  | "pipe"
  | "comma"
  | "semicolon";

export interface Token {
  type: TokType;
  /** name/operator/data text; decoded string; number value (number | bigint); error message */
  value: unknown;
  lineno: number;
}

const OPERATORS: Record<string, TokType> = {
  "+": "add",
  "-": "sub",
  "/": "div",
  "//": "floordiv",
  "*": "mul",
  "%": "mod",
  "**": "pow",
  "~": "tilde",
  "[": "lbracket",
  "]": "rbracket",
  "(": "lparen",
  ")": "rparen",
  "{": "lbrace",
  "}": "rbrace",
  "==": "eq",
  "!=": "ne",
  ">": "gt",
  ">=": "gteq",
  "<": "lt",
  "<=": "lteq",
  "=": "assign",
  ".": "dot",
  ":": "colon",
  "|": "pipe",
  ",": "comma",
  ";": "semicolon",
};

const REVERSE_OPERATORS: Record<string, string> = {};
for (const [k, v] of Object.entries(OPERATORS)) REVERSE_OPERATORS[v] = k;

/** Jinja2 `describe_token_expr` / `_describe_token_type`. */
export function describeTokenType(type: string): string {
  const op = REVERSE_OPERATORS[type];
  if (op !== undefined) return op;
  switch (type) {
    case "block_begin":
      return "begin of statement block";
    case "block_end":
      return "end of statement block";
    case "variable_begin":
      return "begin of print statement";
    case "variable_end":
      return "end of print statement";
    case "data":
      return "template data / text";
    case "eof":
      return "end of template";
    default:
      return type;
  }
}

export function describeToken(t: Token): string {
  if (t.type === "name") return t.value as string;
  return describeTokenType(t.type);
}

/** Jinja2 `describe_token_expr` for expressions like "name:endfor" or "block_end". */
export function describeTokenExpr(expr: string): string {
  const i = expr.indexOf(":");
  if (i >= 0) {
    const type = expr.slice(0, i);
    if (type === "name") return expr.slice(i + 1);
    return describeTokenType(type);
  }
  return describeTokenType(expr);
}

// ---- regular expressions (sticky), Python `\s` = str.isspace -----------------------------
const WS_CLASS = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const RE_WS = new RegExp(`[${WS_CLASS}]+`, "y");
const RE_WS_OPT = new RegExp(`[${WS_CLASS}]*`, "y");
const RE_FLOAT = /(?<!\.)(?:\d+_)*\d+(?:(?:\.(?:\d+_)*\d+)?[eE][+-]?(?:\d+_)*\d+|\.(?:\d+_)*\d+)/y;
const RE_INTEGER = /(?:0[bB](?:_?[01])+|0[oO](?:_?[0-7])+|0[xX](?:_?[0-9a-fA-F])+|[1-9](?:_?\d)*|0(?:_?0)*)/y;
const RE_NAME = /[\p{L}\p{N}\p{M}\p{Pc}\u00b7\u0387\u1369-\u1371\u19da\u2118\u212e\u309b\u309c]+/uy;
const RE_IDENT = /^[\p{ID_Start}_\u2118\u212e\u309b\u309c][\p{ID_Continue}\u00b7\u0387\u1369-\u1371\u19da]*$/u;
const RE_STRING = /'([^'\\]*(?:\\[\s\S][^'\\]*)*)'|"([^"\\]*(?:\\[\s\S][^"\\]*)*)"/y;
const RE_OPERATOR = /\/\/|\*\*|==|!=|>=|<=|[+\-/*%~[\](){}><=.:|,;]/y;
/** `{%(-|+|)\s*raw\s*(?:-%}\s*|%})` */
const RE_RAW_BEGIN = new RegExp(`\\{%([-+]?)[${WS_CLASS}]*raw[${WS_CLASS}]*(?:-%\\}[${WS_CLASS}]*|%\\})`, "y");
/** `{%(-|+|)\s*endraw\s*(?:+%}|-%}\s*|%}\n?)` searched (not sticky) */
const RE_RAW_END = new RegExp(`\\{%([-+]?)[${WS_CLASS}]*endraw[${WS_CLASS}]*(?:\\+%\\}|-%\\}[${WS_CLASS}]*|%\\}\\n?)`, "g");
const RE_TAG_START = /\{[{%#]/g;

function pyRstrip(s: string): string {
  let e = s.length;
  while (e > 0 && isPySpace(s.charCodeAt(e - 1))) e--;
  return s.slice(0, e);
}

function countNewlines(s: string): number {
  let n = 0;
  let i = s.indexOf("\n");
  while (i >= 0) {
    n++;
    i = s.indexOf("\n", i + 1);
  }
  return n;
}

function allSpace(s: string, from: number): boolean {
  if (from >= s.length) return false; // `\s+` needs at least one character
  for (let i = from; i < s.length; i++) if (!isPySpace(s.charCodeAt(i))) return false;
  return true;
}

/** Python `int(text.replace("_", ""), 0)`. */
function parseInteger(text: string): number | bigint {
  const t = text.replace(/_/g, "");
  let b: bigint;
  const p = t.slice(0, 2).toLowerCase();
  if (p === "0b" || p === "0o" || p === "0x") b = BigInt(p === "0o" ? "0o" + t.slice(2) : t);
  else b = BigInt(t);
  return b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
}

/**
 * Python `value.encode("ascii", "backslashreplace").decode("unicode-escape")` on the body of a
 * string literal. Returns the decoded string, or `{ error }` with Jinja2's message.
 */
export function unescapeString(body: string): string | { error: string } {
  if (body.indexOf("\\") < 0) return body;
  // backslashreplace: non-ASCII characters become escape sequences first.
  let ascii = "";
  for (const ch of body) {
    const cp = ch.codePointAt(0) as number;
    if (cp < 0x80) ascii += ch;
    else if (cp < 0x100) ascii += "\\x" + cp.toString(16).padStart(2, "0");
    else if (cp < 0x10000) ascii += "\\u" + cp.toString(16).padStart(4, "0");
    else ascii += "\\U" + cp.toString(16).padStart(8, "0");
  }
  let out = "";
  const s = ascii;
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c !== "\\") {
      out += c;
      continue;
    }
    i++;
    if (i >= s.length) return { error: "\\ at end of string" };
    const e = s[i] as string;
    switch (e) {
      case "\n":
        break;
      case "\\":
        out += "\\";
        break;
      case "'":
        out += "'";
        break;
      case '"':
        out += '"';
        break;
      case "a":
        out += "\x07";
        break;
      case "b":
        out += "\b";
        break;
      case "f":
        out += "\f";
        break;
      case "n":
        out += "\n";
        break;
      case "r":
        out += "\r";
        break;
      case "t":
        out += "\t";
        break;
      case "v":
        out += "\v";
        break;
      case "x":
      case "u":
      case "U": {
        const n = e === "x" ? 2 : e === "u" ? 4 : 8;
        const hex = s.slice(i + 1, i + 1 + n);
        if (hex.length < n || !/^[0-9a-fA-F]+$/.test(hex)) {
          return { error: e === "x" ? "truncated \\xXX escape" : e === "u" ? "truncated \\uXXXX escape" : "truncated \\UXXXXXXXX escape" };
        }
        const cp = parseInt(hex, 16);
        if (cp > 0x10ffff) return { error: "illegal Unicode character" };
        out += String.fromCodePoint(cp);
        i += n;
        break;
      }
      case "N":
        return { error: "malformed \\N character escape" };
      default:
        if (e >= "0" && e <= "7") {
          let j = i;
          let v = 0;
          while (j < s.length && j < i + 3 && (s[j] as string) >= "0" && (s[j] as string) <= "7") {
            v = v * 8 + (s.charCodeAt(j) - 48);
            j++;
          }
          out += String.fromCodePoint(v);
          i = j - 1;
        } else {
          out += "\\" + e;
        }
    }
  }
  return out;
}

/** Tokenizes `source`; a lexing failure becomes a final `error` token. */
export function tokenize(sourceIn: string): Token[] {
  // Newline normalization and the dropped trailing newline (keep_trailing_newline=False).
  const lines = sourceIn.split(/\r\n|\r|\n/);
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const source = lines.join("\n");
  const n = source.length;
  const toks: Token[] = [];
  let pos = 0;
  let lineno = 1;
  let lineStarting = true;

  const error = (msg: string): Token[] => {
    toks.push({ type: "error", value: msg, lineno });
    return toks;
  };

  /** Applies `-` / lstrip rules to the text before a tag; returns [text, newlinesStripped]. */
  const stripBefore = (text: string, sign: string, isVariable: boolean): [string, number] => {
    if (sign === "-") {
      const stripped = pyRstrip(text);
      return [stripped, countNewlines(text.slice(stripped.length))];
    }
    if (sign !== "+" && !isVariable) {
      const lpos = text.lastIndexOf("\n") + 1;
      if ((lpos > 0 || lineStarting) && allSpace(text, lpos)) return [text.slice(0, lpos), 0];
    }
    return [text, 0];
  };

  while (pos < n) {
    // ---- root state: text up to the next tag ---------------------------------------------
    RE_TAG_START.lastIndex = pos;
    const m = RE_TAG_START.exec(source);
    let tagPos = -1;
    let kind = "";
    let sign = "";
    let tagEnd = 0;
    if (m !== null) {
      const at = m.index;
      RE_RAW_BEGIN.lastIndex = at;
      const raw = source[at + 1] === "%" ? RE_RAW_BEGIN.exec(source) : null;
      tagPos = at;
      if (raw !== null) {
        kind = "raw";
        sign = raw[1] as string;
        tagEnd = at + raw[0].length;
      } else {
        kind = source[at + 1] as string;
        const sc = source[at + 2];
        sign = sc === "-" || sc === "+" ? sc : "";
        tagEnd = at + 2 + sign.length;
      }
    }
    if (tagPos < 0) {
      const text = source.slice(pos);
      toks.push({ type: "data", value: text, lineno });
      lineno += countNewlines(text);
      break;
    }
    const [text, nlStripped] = stripBefore(source.slice(pos, tagPos), sign, kind === "{");
    if (text.length > 0) toks.push({ type: "data", value: text, lineno });
    lineno += countNewlines(text) + nlStripped;
    const tagText = source.slice(tagPos, tagEnd);
    lineStarting = tagText.endsWith("\n");
    pos = tagEnd;

    if (kind === "raw") {
      lineno += countNewlines(tagText);
      RE_RAW_END.lastIndex = pos;
      const e = RE_RAW_END.exec(source);
      if (e === null) return error("Missing end of raw directive");
      const [rawText, nl2] = stripBefore(source.slice(pos, e.index), e[1] as string, false);
      if (rawText.length > 0) toks.push({ type: "data", value: rawText, lineno });
      lineno += countNewlines(rawText) + nl2 + countNewlines(e[0]);
      lineStarting = e[0].endsWith("\n");
      pos = e.index + e[0].length;
      continue;
    }
    if (kind === "#") {
      // comment: (.*?)((?:\+#}|\-#}\s*|#}\n?))
      let i = source.indexOf("#}", pos);
      if (i < 0) return error("Missing end of comment tag");
      let endStart = i;
      let endLen = 2;
      const prev = source[i - 1];
      if (i - 1 >= pos && prev === "+") {
        endStart = i - 1;
        endLen = 3;
      } else if (i - 1 >= pos && prev === "-") {
        endStart = i - 1;
        RE_WS_OPT.lastIndex = i + 2;
        const w = RE_WS_OPT.exec(source);
        endLen = 3 + (w ? w[0].length : 0);
      } else if (source[i + 2] === "\n") {
        endLen = 3;
      }
      i = endStart;
      const comment = source.slice(pos, i);
      const endText = source.slice(i, i + endLen);
      lineno += countNewlines(comment) + countNewlines(endText);
      lineStarting = endText.endsWith("\n");
      pos = i + endLen;
      continue;
    }
    const isBlock = kind === "%";
    toks.push({ type: isBlock ? "block_begin" : "variable_begin", value: tagText, lineno });
    lineno += countNewlines(tagText);
    // ---- inside a tag ------------------------------------------------------------------
    const balancing: string[] = [];
    for (;;) {
      if (pos >= n) return toks; // unterminated tag: the parser reports it
      const c = source[pos] as string;
      // end of tag (only when brackets are balanced)
      if (balancing.length === 0) {
        if (isBlock) {
          let endLen = 0;
          if (c === "+" && source.startsWith("%}", pos + 1)) endLen = 3;
          else if (c === "-" && source.startsWith("%}", pos + 1)) {
            RE_WS_OPT.lastIndex = pos + 3;
            const w = RE_WS_OPT.exec(source);
            endLen = 3 + (w ? w[0].length : 0);
          } else if (c === "%" && source[pos + 1] === "}") endLen = source[pos + 2] === "\n" ? 3 : 2;
          if (endLen > 0) {
            const endText = source.slice(pos, pos + endLen);
            toks.push({ type: "block_end", value: endText, lineno });
            lineno += countNewlines(endText);
            lineStarting = endText.endsWith("\n");
            pos += endLen;
            break;
          }
        } else {
          let endLen = 0;
          if (c === "-" && source.startsWith("}}", pos + 1)) {
            RE_WS_OPT.lastIndex = pos + 3;
            const w = RE_WS_OPT.exec(source);
            endLen = 3 + (w ? w[0].length : 0);
          } else if (c === "}" && source[pos + 1] === "}") endLen = 2;
          if (endLen > 0) {
            const endText = source.slice(pos, pos + endLen);
            toks.push({ type: "variable_end", value: endText, lineno });
            lineno += countNewlines(endText);
            lineStarting = endText.endsWith("\n");
            pos += endLen;
            break;
          }
        }
      }
      let mm: RegExpExecArray | null;
      RE_WS.lastIndex = pos;
      if ((mm = RE_WS.exec(source)) !== null) {
        lineno += countNewlines(mm[0]);
        lineStarting = mm[0].endsWith("\n");
        pos += mm[0].length;
        continue;
      }
      lineStarting = false;
      RE_FLOAT.lastIndex = pos;
      if ((mm = RE_FLOAT.exec(source)) !== null) {
        toks.push({ type: "float", value: Number(mm[0].replace(/_/g, "")), lineno });
        pos += mm[0].length;
        continue;
      }
      RE_INTEGER.lastIndex = pos;
      if ((mm = RE_INTEGER.exec(source)) !== null) {
        toks.push({ type: "integer", value: parseInteger(mm[0]), lineno });
        pos += mm[0].length;
        continue;
      }
      RE_NAME.lastIndex = pos;
      if ((mm = RE_NAME.exec(source)) !== null) {
        if (!RE_IDENT.test(mm[0])) return error("Invalid character in identifier");
        toks.push({ type: "name", value: mm[0], lineno });
        pos += mm[0].length;
        continue;
      }
      RE_STRING.lastIndex = pos;
      if ((mm = RE_STRING.exec(source)) !== null) {
        const body = mm[1] ?? mm[2] ?? "";
        const v = unescapeString(body);
        if (typeof v !== "string") return error(v.error);
        toks.push({ type: "string", value: v, lineno });
        lineno += countNewlines(mm[0]);
        lineStarting = mm[0].endsWith("\n");
        pos += mm[0].length;
        continue;
      }
      RE_OPERATOR.lastIndex = pos;
      if ((mm = RE_OPERATOR.exec(source)) !== null) {
        const op = mm[0];
        if (op === "{") balancing.push("}");
        else if (op === "(") balancing.push(")");
        else if (op === "[") balancing.push("]");
        else if (op === "}" || op === ")" || op === "]") {
          if (balancing.length === 0) return error(`unexpected '${op}'`);
          const expected = balancing.pop();
          if (expected !== op) return error(`unexpected '${op}', expected '${expected}'`);
        }
        toks.push({ type: OPERATORS[op] as TokType, value: op, lineno });
        pos += op.length;
        continue;
      }
      // Python reports the position in code points.
      let cpPos = 0;
      for (let i = 0; i < pos; i++) {
        const cu = source.charCodeAt(i);
        if (!(cu >= 0xdc00 && cu <= 0xdfff && i > 0 && source.charCodeAt(i - 1) >= 0xd800 && source.charCodeAt(i - 1) <= 0xdbff)) cpPos++;
      }
      const ch = String.fromCodePoint(source.codePointAt(pos) as number);
      return error(`unexpected char ${pyStrRepr(ch)} at ${cpPos}`);
    }
  }
  return toks;
}
