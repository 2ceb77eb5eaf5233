/**
 * `deltatok/jinja`: the Python-exact Jinja2 engine on its own — compile a chat template with the
 * transformers configuration, render it with variables, a clock and budgets, get Python's error
 * strings. No tokenizer, no incremental tracking. README.md (next to this file) says what is exact
 * and what is not.
 *
 * Layer: template/jinja (its public entry point).
 */
export { compile, JinjaTemplate, TemplateErrorDetail, pythonErrorString, ENGINE_BUDGET as DEFAULT_BUDGET } from "./template.js";
export type { CompileOptions, RenderBudget, RenderOptions, RenderResult } from "./template.js";
export { DeltatokError } from "../../errors.js";
export type { ErrorCode } from "../../errors.js";
export { parseJson } from "../../json/index.js";
export { PyFloat } from "../../json/values.js";
