/**
 * The vendored golden slice the golden tests share: its conversations (test/fixtures/template/
 * golden/conversations.jsonl, each line's Python-JSON text parsed as the CLI would) and the
 * reference rows of test/fixtures/golden/counts.jsonl.
 */
import { readFileSync } from "node:fs";
import { parseJson } from "../../src/json/index.js";
import { repoPath } from "./paths.js";

export interface GoldenConv {
  id: string;
  messages: Array<Record<string, unknown>>;
  tools?: unknown[] | null;
}

export interface GoldenRow {
  file?: string;
  osl_file?: string;
  template: string;
  tokenizer: string;
  expect: Record<string, unknown>;
}

export function goldenConversations(): GoldenConv[] {
  return readFileSync(repoPath("test/fixtures/template/golden/conversations.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => parseJson((JSON.parse(l) as { line: string }).line) as GoldenConv);
}

export function goldenRows(): GoldenRow[] {
  return readFileSync(repoPath("test/fixtures/golden/counts.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as GoldenRow);
}
