/**
 * The four kinds of text the encoder benchmark measures: bench/data/encode/<kind>.json.gz, each a
 * list of distinct strings of at least 1.2 MB of UTF-8 (made by scripts/make-encode-texts.mjs from
 * the shared corpora and this Node's ICU data; sources and licenses in bench/data/encode/README.md).
 */
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";

export type TextKind = "tool-json" | "code-shell" | "prose" | "multilingual" | PathologicalKind;
export const TEXT_KINDS: readonly TextKind[] = ["tool-json", "code-shell", "prose", "multilingual"];

/** One long text each, where a quadratic step would show: one pre-token of 400k CJK, 1M spaces, 400k of one letter. */
export type PathologicalKind = "cjk-400k" | "spaces-1m" | "a-400k";
export const PATHOLOGICAL_KINDS: readonly PathologicalKind[] = ["cjk-400k", "spaces-1m", "a-400k"];
const PATHOLOGICAL: Readonly<Record<PathologicalKind, () => string>> = {
  "cjk-400k": () => "\u4e2d\u6587\u5b57\u7b26".repeat(100_000),
  "spaces-1m": () => " ".repeat(1_000_000),
  "a-400k": () => "a".repeat(400_000),
};

/** The strings of one kind. */
export function encodeTexts(kind: TextKind): string[] {
  if (kind in PATHOLOGICAL) return [PATHOLOGICAL[kind as PathologicalKind]()];
  // dist/bench/… at run time, bench/… under tsx: the data lives in the source tree either way
  const here = fileURLToPath(new URL(".", import.meta.url));
  const root = here.includes("/dist/bench") ? new URL("../../", import.meta.url) : new URL("../", import.meta.url);
  const file = new URL(`bench/data/encode/${kind}.json.gz`, root);
  return JSON.parse(gunzipSync(readFileSync(file)).toString("utf8")) as string[];
}
