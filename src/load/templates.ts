/**
 * Finding a tokenizer's chat templates, with transformers' precedence.
 *
 * What transformers (v4.4x/4.5x) does when loading a tokenizer
 * (src/transformers/tokenization_utils_base.py, `from_pretrained` and `_from_pretrained`):
 * 1. Template files: `chat_template.jinja` becomes the "default" template, and every
 *    `additional_chat_templates/<name>.jinja` becomes template `<name>` (read after
 *    chat_template.jinja, so an `additional_chat_templates/default.jinja` replaces it).
 * 2. If any template file exists, the files are the tokenizer's templates and tokenizer_config's
 *    `chat_template` is ignored entirely, even its other named templates ("If independent chat
 *    template file(s) exist, they take priority over template entries in the tokenizer config").
 * 3. Otherwise tokenizer_config.json's `chat_template`: a string (the single template), or a list
 *    of `{name, template}` turned into a dict (a later duplicate name wins).
 * 4. `chat_template.json` is not read by tokenizers at all: it is the processor's legacy file
 *    (processing_utils.py, LEGACY_PROCESSOR_CHAT_TEMPLATE_FILE). deltatok uses it only as a last
 *    resort, when nothing above gave a template, as `AutoProcessor` would.
 * Template files are read with Python's universal newlines (CRLF → LF); template strings inside
 * JSON are taken verbatim.
 *
 * Layer: load.
 */

import { readdir } from "node:fs/promises";
import { join } from "node:path";

import { DeltatokError, type ErrorCode } from "../errors.js";
import { MAX_TEXT_FILE_BYTES, decodeUtf8, isNotFound, parseJsonBytes, readBytes, universalNewlines } from "./json-text.js";

export const CHAT_TEMPLATE_FILE = "chat_template.jinja";
export const CHAT_TEMPLATE_DIR = "additional_chat_templates";
export const LEGACY_CHAT_TEMPLATE_JSON = "chat_template.json";

/** Named templates and where each came from, in a stable order ("default" first, then by name). */
export interface TemplateSet {
  readonly templates: Map<string, string>;
  readonly sources: Map<string, string>;
}

function emptySet(): TemplateSet {
  return { templates: new Map(), sources: new Map() };
}

function ordered(set: TemplateSet): TemplateSet {
  const names = [...set.templates.keys()].sort((a, b) =>
    a === "default" ? -1 : b === "default" ? 1 : a < b ? -1 : a > b ? 1 : 0,
  );
  const out = emptySet();
  for (const name of names) {
    out.templates.set(name, set.templates.get(name) as string);
    out.sources.set(name, set.sources.get(name) as string);
  }
  return out;
}

/**
 * Reads a `chat_template` value (tokenizer_config.json, chat_template.json): null/undefined →
 * none; a string → "default"; a list of `{name, template}` or an object `{name: template}` →
 * named templates. Anything else throws `code` naming `file` and the field.
 */
export function templatesFromValue(value: unknown, file: string, code: ErrorCode): TemplateSet {
  const set = emptySet();
  if (value === null || value === undefined) return set;
  if (typeof value === "string") {
    set.templates.set("default", value);
    set.sources.set("default", `${file}#chat_template`);
    return set;
  }
  if (Array.isArray(value)) {
    value.forEach((entry: unknown, i) => {
      const field = `chat_template[${i}]`;
      if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
        throw new DeltatokError(code, `${file}: ${field} must be an object {"name": ..., "template": ...}`, {
          path: field,
        });
      }
      const { name, template } = entry as Record<string, unknown>;
      if (typeof name !== "string" || name === "") {
        throw new DeltatokError(code, `${file}: ${field}.name must be a non-empty string`, { path: `${field}.name` });
      }
      if (typeof template !== "string") {
        throw new DeltatokError(code, `${file}: ${field}.template must be a string`, { path: `${field}.template` });
      }
      set.templates.set(name, template);
      set.sources.set(name, `${file}#${field}`);
    });
    return ordered(set);
  }
  if (typeof value === "object") {
    for (const [name, template] of Object.entries(value as Record<string, unknown>)) {
      const field = `chat_template.${name}`;
      if (typeof template !== "string") {
        throw new DeltatokError(code, `${file}: ${field} must be a string`, { path: field });
      }
      set.templates.set(name, template);
      set.sources.set(name, `${file}#${field}`);
    }
    return ordered(set);
  }
  throw new DeltatokError(
    code,
    `${file}: chat_template must be a string or a list of {"name", "template"} objects; got ${typeof value}`,
    { path: "chat_template" },
  );
}

/** Reads a template text file (UTF-8, universal newlines). Missing → null when optional. */
async function readTemplateText(file: string, optional: boolean, missingCode: ErrorCode): Promise<string | null> {
  const bytes = await readBytes(file, {
    optional,
    missingCode,
    unreadableCode: "DT_TEMPLATE_FILE_INVALID",
    tooLargeCode: "DT_TEMPLATE_FILE_INVALID",
    maxBytes: MAX_TEXT_FILE_BYTES,
    what: "chat template file",
  });
  if (bytes === null) return null;
  return universalNewlines(decodeUtf8(bytes, file, "DT_TEMPLATE_FILE_INVALID"));
}

/** Parses a chat_template.json file: `{"chat_template": string | [{name, template}]}`. */
function templatesFromJsonFile(bytes: Uint8Array, file: string): TemplateSet {
  const parsed = parseJsonBytes(bytes, file, "DT_TEMPLATE_FILE_INVALID");
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new DeltatokError("DT_TEMPLATE_FILE_INVALID", `${file} must hold a JSON object {"chat_template": ...}`);
  }
  const value = (parsed as Record<string, unknown>)["chat_template"];
  if (typeof value !== "string" && !Array.isArray(value)) {
    throw new DeltatokError(
      "DT_TEMPLATE_FILE_INVALID",
      `${file}: "chat_template" must be a string or a list of {"name", "template"} objects` +
        (value === undefined ? " (the key is missing)" : `; got ${value === null ? "null" : typeof value}`),
      { path: "chat_template" },
    );
  }
  const set = templatesFromValue(value, file, "DT_TEMPLATE_FILE_INVALID");
  if (set.templates.size === 0) {
    throw new DeltatokError("DT_TEMPLATE_FILE_INVALID", `${file}: "chat_template" is an empty list`, {
      path: "chat_template",
    });
  }
  return set;
}

/** Template files of a tokenizer directory: chat_template.jinja and additional_chat_templates/*.jinja. */
async function templatesFromFiles(dir: string): Promise<TemplateSet> {
  const set = emptySet();
  const main = join(dir, CHAT_TEMPLATE_FILE);
  const text = await readTemplateText(main, true, "DT_TEMPLATE_NOT_FOUND");
  if (text !== null) {
    set.templates.set("default", text);
    set.sources.set("default", main);
  }
  const extraDir = join(dir, CHAT_TEMPLATE_DIR);
  let entries: string[] = [];
  try {
    entries = (await readdir(extraDir, { withFileTypes: true }))
      .filter((d) => d.name.endsWith(".jinja") && d.name.length > ".jinja".length && !d.isDirectory())
      .map((d) => d.name)
      .sort();
  } catch (e) {
    const code = (e as { code?: unknown } | null)?.code;
    if (!isNotFound(e) && code !== "ENOTDIR") {
      throw new DeltatokError("DT_TEMPLATE_FILE_INVALID", `${extraDir} is unreadable: ${String(e)}`, { cause: e });
    }
  }
  for (const name of entries) {
    const file = join(extraDir, name);
    const body = await readTemplateText(file, false, "DT_TEMPLATE_FILE_INVALID");
    const templateName = name.slice(0, -".jinja".length);
    set.templates.set(templateName, body as string);
    set.sources.set(templateName, file);
  }
  return ordered(set);
}

/**
 * The templates of a tokenizer directory with transformers' precedence (see the file comment).
 * `configTemplates` is what tokenizer_config.json's `chat_template` gave.
 */
export async function directoryTemplates(dir: string, configTemplates: TemplateSet): Promise<TemplateSet> {
  const files = await templatesFromFiles(dir);
  if (files.templates.size > 0) return files;
  if (configTemplates.templates.size > 0) return configTemplates;
  const legacy = join(dir, LEGACY_CHAT_TEMPLATE_JSON);
  const bytes = await readBytes(legacy, {
    optional: true,
    missingCode: "DT_TEMPLATE_NOT_FOUND",
    unreadableCode: "DT_TEMPLATE_FILE_INVALID",
    tooLargeCode: "DT_TEMPLATE_FILE_INVALID",
    maxBytes: MAX_TEXT_FILE_BYTES,
    what: "chat template file",
  });
  if (bytes === null) return emptySet();
  return templatesFromJsonFile(bytes, legacy);
}

/** An override given as source text. */
export function overrideFromText(text: string): TemplateSet {
  const set = emptySet();
  set.templates.set("default", text);
  set.sources.set("default", "options.chatTemplate");
  return set;
}

/** An override read from a file (absolute path): `.json` as chat_template.json, anything else as template text. */
export async function overrideFromFile(file: string): Promise<TemplateSet> {
  const bytes = await readBytes(file, {
    optional: false,
    missingCode: "DT_TEMPLATE_NOT_FOUND",
    unreadableCode: "DT_TEMPLATE_FILE_INVALID",
    tooLargeCode: "DT_TEMPLATE_FILE_INVALID",
    maxBytes: MAX_TEXT_FILE_BYTES,
    what: "chat template file",
  });
  if (bytes === null) return emptySet(); // unreachable: not optional
  if (file.toLowerCase().endsWith(".json")) return templatesFromJsonFile(bytes, file);
  const set = emptySet();
  set.templates.set("default", universalNewlines(decodeUtf8(bytes, file, "DT_TEMPLATE_FILE_INVALID")));
  set.sources.set("default", file);
  return set;
}
