/**
 * Choosing the chat template for a render, by transformers' rule
 * (`PreTrainedTokenizerBase.get_chat_template`, src/transformers/tokenization_utils_base.py):
 * - an explicit `chat_template` that names one of the templates selects it; any other explicit
 *   value is template source and is used as is;
 * - otherwise, with several named templates: "tool_use" when tools were passed (`tools is not
 *   None`) and it exists, else "default", else an error listing the names;
 * - a single template (a string in the tokenizer files) is used whether or not tools are given.
 * deltatok differs in one place: an explicit value that is a bare word (no spaces, no Jinja
 * delimiters, e.g. `tool_use`) but names no template raises DT_TEMPLATE_NOT_FOUND, where
 * transformers would render the word itself as a one-word template.
 *
 * Layer: load.
 */

import { DeltatokError } from "../errors.js";
import { tokenizerLabel } from "./display.js";
import type { LoadedTokenizer, TemplateRequest } from "./types.js";

const BARE_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

function available(loaded: LoadedTokenizer): string {
  const names = [...loaded.templates.keys()];
  return names.length === 0 ? "it has none" : `available: ${names.map((n) => JSON.stringify(n)).join(", ")}`;
}

/** The template source to render with. Throws DT_TEMPLATE_NOT_FOUND naming what exists. */
export function selectTemplate(loaded: LoadedTokenizer, request: TemplateRequest): string {
  const explicit = request.chatTemplate;
  if (explicit !== undefined) {
    if (typeof explicit !== "string" || explicit === "") {
      throw new DeltatokError("DT_INVALID_OPTION", "chat_template must be a non-empty string (a template name or source)", {
        path: "chat_template",
      });
    }
    const named = loaded.templates.get(explicit);
    if (named !== undefined) return named;
    if (BARE_NAME.test(explicit)) {
      throw new DeltatokError(
        "DT_TEMPLATE_NOT_FOUND",
        `no chat template named "${explicit}" in ${tokenizerLabel(loaded)}; ${available(loaded)}`,
        { path: "chat_template" },
      );
    }
    return explicit;
  }
  const { templates } = loaded;
  if (templates.size === 0) {
    throw new DeltatokError(
      "DT_TEMPLATE_NOT_FOUND",
      `${tokenizerLabel(loaded)} has no chat template (no chat_template in tokenizer_config.json, ` +
        "no chat_template.jinja, additional_chat_templates/ or chat_template.json): pass a template or a template file",
    );
  }
  if (request.hasTools) {
    const toolUse = templates.get("tool_use");
    if (toolUse !== undefined) return toolUse;
  }
  const dflt = templates.get("default");
  if (dflt !== undefined) return dflt;
  throw new DeltatokError(
    "DT_TEMPLATE_NOT_FOUND",
    `${tokenizerLabel(loaded)} has several chat templates and no "default"` +
      `${request.hasTools ? "" : ' (and "tool_use" is chosen only when tools are given)'}: name one; ${available(loaded)}`,
  );
}
