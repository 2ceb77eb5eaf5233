/**
 * The OpenAI encodings by name (`o200k_base`, `cl100k_base`, `p50k_base`, `r50k_base`), from rank
 * data already on the machine — never fetched. Looked for, first found wins:
 * 1. `$DELTATOK_TIKTOKEN_DIR/<name>.tiktoken` (the file as OpenAI publishes it);
 * 2. tiktoken's (Python) download cache: `$TIKTOKEN_CACHE_DIR`, else `$DATA_GYM_CACHE_DIR`, else
 *    `<tmpdir>/data-gym-cache`, the file named by the SHA-1 of its download URL, as tiktoken
 *    names it;
 * 3. the npm `tiktoken` package, when installed beside deltatok (`tiktoken/encoders/<name>.json`:
 *    its `bpe_ranks` lines are `! <first rank> <base64 token> …`), rewritten to the published
 *    rank-file text.
 * Whatever the source, the bytes must hash (SHA-256) to the published file's, so the family
 * table's pattern and special tokens apply to exactly OpenAI's ranks; else DT_TOKENIZER_INVALID.
 * Nothing found is DT_TOKENIZER_NOT_FOUND naming the places looked at.
 *
 * Layer: load.
 */

import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { DeltatokError } from "../../errors.js";
import { pathKind } from "../json-text.js";
import type { ModuleResolver } from "../bundled.js";
import { readBoundedFile } from "./read-bounded.js";
import { TIKTOKEN_FAMILIES, type TiktokenFamilyName } from "./tiktoken-families.js";
import { MAX_TIKTOKEN_RANK_BYTES } from "./tiktoken-ranks.js";

export type OpenAiEncodingName = "o200k_base" | "cl100k_base" | "p50k_base" | "r50k_base";

export const OPENAI_ENCODINGS: readonly OpenAiEncodingName[] = Object.freeze(["o200k_base", "cl100k_base", "p50k_base", "r50k_base"]);

export function isOpenAiEncoding(spec: string): spec is OpenAiEncodingName {
  return (OPENAI_ENCODINGS as readonly string[]).includes(spec);
}

/** Where tiktoken downloads each encoding from (tiktoken_ext/openai_public.py); its cache names files by this URL's SHA-1. */
const DOWNLOAD_URL = "https://openaipublic.blob.core.windows.net/encodings/";

export interface EncodingSource {
  /** The rank file's text as OpenAI publishes it. */
  readonly bytes: Uint8Array;
  /** Where it was found (a path), for messages and summaries. */
  readonly file: string;
  /** Which of the places it was found in. */
  readonly via: "DELTATOK_TIKTOKEN_DIR" | "tiktoken cache" | "npm tiktoken";
}

const defaultResolver: ModuleResolver = (specifier) => createRequire(import.meta.url).resolve(specifier);

/** The places looked at, in order (for the error message and the README). */
function candidates(name: OpenAiEncodingName, env: Readonly<Record<string, string | undefined>>): Array<{ file: string; via: EncodingSource["via"] }> {
  const out: Array<{ file: string; via: EncodingSource["via"] }> = [];
  const own = env["DELTATOK_TIKTOKEN_DIR"];
  if (own !== undefined && own !== "") out.push({ file: join(own, `${name}.tiktoken`), via: "DELTATOK_TIKTOKEN_DIR" });
  const cache = env["TIKTOKEN_CACHE_DIR"] || env["DATA_GYM_CACHE_DIR"] || join(tmpdir(), "data-gym-cache");
  const key = createHash("sha1").update(`${DOWNLOAD_URL}${name}.tiktoken`).digest("hex");
  out.push({ file: join(cache, key), via: "tiktoken cache" });
  return out;
}

/** npm tiktoken's `bpe_ranks` as the published rank file's text. */
export function npmRanksToRankFile(bpeRanks: string, file: string): Uint8Array {
  const lines: string[] = [];
  for (const line of bpeRanks.split("\n")) {
    if (line === "") continue;
    const parts = line.split(" ");
    const first = Number(parts[1]);
    if (parts[0] !== "!" || !Number.isSafeInteger(first) || first < 0) {
      throw new DeltatokError("DT_TOKENIZER_INVALID", `${file}: bpe_ranks line does not start with "! <rank>"`, { path: "bpe_ranks" });
    }
    for (let i = 2; i < parts.length; i++) lines.push(`${parts[i]} ${first + i - 2}\n`);
  }
  return new TextEncoder().encode(lines.join(""));
}

/** Finds the rank data of an OpenAI encoding on this machine. */
export async function locateOpenAiEncoding(
  name: OpenAiEncodingName,
  env: Readonly<Record<string, string | undefined>>,
  resolver: ModuleResolver = defaultResolver,
): Promise<EncodingSource> {
  const family = TIKTOKEN_FAMILIES[name as TiktokenFamilyName];
  const looked: string[] = [];
  const check = (bytes: Uint8Array, file: string, via: EncodingSource["via"]): EncodingSource => {
    const sha = createHash("sha256").update(bytes).digest("hex");
    if (sha !== family.rankFileSha256) {
      throw new DeltatokError("DT_TOKENIZER_INVALID", `${file} is not ${name}'s published rank file (its SHA-256 is ${sha})`);
    }
    return { bytes, file, via };
  };
  for (const c of candidates(name, env)) {
    looked.push(c.file);
    if ((await pathKind(c.file)) !== "file") continue;
    return check(await readBoundedFile(c.file, MAX_TIKTOKEN_RANK_BYTES, "tiktoken rank file"), c.file, c.via);
  }
  let npmFile: string | null = null;
  try {
    npmFile = resolver(`tiktoken/encoders/${name}.json`);
  } catch {
    looked.push(`the npm package tiktoken (encoders/${name}.json): not installed`);
  }
  if (npmFile !== null) {
    const bytes = await readBoundedFile(npmFile, MAX_TIKTOKEN_RANK_BYTES * 2, "npm tiktoken encoding");
    let data: unknown;
    try {
      data = JSON.parse(new TextDecoder().decode(bytes));
    } catch (e) {
      throw new DeltatokError("DT_TOKENIZER_INVALID", `${npmFile} is not JSON: ${(e as Error).message}`, { cause: e });
    }
    const ranks = (data as { bpe_ranks?: unknown } | null)?.bpe_ranks;
    if (typeof ranks !== "string") throw new DeltatokError("DT_TOKENIZER_INVALID", `${npmFile} has no bpe_ranks string`, { path: "bpe_ranks" });
    return check(npmRanksToRankFile(ranks, npmFile), npmFile, "npm tiktoken");
  }
  throw new DeltatokError(
    "DT_TOKENIZER_NOT_FOUND",
    `the rank file of ${name} is not on this machine (deltatok never downloads it); looked at: ${looked.join("; ")}. ` +
      `Put OpenAI's ${name}.tiktoken in a folder named by DELTATOK_TIKTOKEN_DIR, or install the npm package tiktoken`,
  );
}
