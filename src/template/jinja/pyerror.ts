/**
 * The Python exception the reference would raise, carried through evaluation and turned into a
 * DeltatokError at the public boundary (index.ts).
 *
 * Layer: template/jinja.
 */
import type { ErrorCode } from "../../errors.js";

export class PyError extends Error {
  /** Python exception class name, e.g. `TypeError`, `UndefinedError`, `TemplateError`. */
  readonly pyType: string;
  readonly code: ErrorCode;
  /** Template line, when known (syntax errors). */
  readonly lineno: number | undefined;
  constructor(pyType: string, message: string, code: ErrorCode = "DT_TEMPLATE_RUNTIME", lineno?: number) {
    super(message);
    this.name = "PyError";
    this.pyType = pyType;
    this.code = code;
    this.lineno = lineno;
  }
}

export function typeError(msg: string): PyError {
  return new PyError("TypeError", msg);
}

export function valueError(msg: string): PyError {
  return new PyError("ValueError", msg);
}

export function runtimeError(msg: string): PyError {
  return new PyError("TemplateRuntimeError", msg);
}

export function securityError(msg: string): PyError {
  return new PyError("SecurityError", msg, "DT_TEMPLATE_SANDBOX");
}

export function budgetError(msg: string): PyError {
  return new PyError("BudgetExceeded", msg, "DT_TEMPLATE_BUDGET");
}

export function syntaxError(msg: string, lineno: number, pyType = "TemplateSyntaxError"): PyError {
  return new PyError(pyType, msg, "DT_TEMPLATE_SYNTAX", lineno);
}
