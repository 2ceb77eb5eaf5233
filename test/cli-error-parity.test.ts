/**
 * One error path and message for an input, whatever the mode: a corpus of bad lines replayed in
 * process and on workers gives byte-identical output and the same errors by code. Before, a
 * line nested deeper than the main thread's stack could follow (~3,400 levels) was "JSON nesting
 * too deep" in process (a stack overflow caught) but "Nesting too deep: line 1 column …" on a
 * worker, whose stack is larger; the parser's own limit (1,000 levels, where Python's json.loads
 * gives up) now comes first on every thread. Both modes also read lines with the same reader.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jsonl, runCli } from "./helpers/cli.js";
import { repoPath } from "./helpers/paths.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const dir = mkdtempSync(join(tmpdir(), "deltatok-parity-"));
const good = readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n").filter((l) => l.trim() !== "").slice(0, 2);

const U = { role: "user", content: "hi" };
const A = { role: "assistant", content: "ok" };
const conv = (id: string, messages: unknown[], extra: Record<string, unknown> = {}) => JSON.stringify({ id, messages, ...extra });
const nested = (open: string, close: string, depth: number, inner = "1") => open.repeat(depth) + inner + close.repeat(depth);

const BAD: string[] = [
  // deep nesting: past the parser's limit, past the main thread's stack, far past both
  `{"id": "deep-list-1500", "messages": [{"role": "user", "content": ${nested("[", "]", 1500)}}, {"role": "assistant", "content": "x"}]}`,
  `{"id": "deep-obj-4000", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "x", "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": ${nested('{"a": ', "}", 4000)}}}]}]}`,
  `{"id": "deep-100000", "messages": ${nested("[", "]", 100000, "")}}`,
  `{"messages": [], "id": ${nested("[", "]", 6000, "")}}`,
  // nesting the parser accepts and the request checks refuse
  `{"id": "deep-300", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "x"}], "chat_template_kwargs": {"x": ${nested("[", "]", 300)}}}`,
  // bad tool calls, as OSL (message.tool_calls) and as ISL of a later request (messages[1].tool_calls)
  conv("tc-number", [U, { role: "assistant", content: "x", tool_calls: 5 }, U, A]),
  conv("tc-item", [U, { role: "assistant", content: "x", tool_calls: [5] }, U, A]),
  conv("tc-function", [U, { role: "assistant", content: "", tool_calls: [{ type: "function", function: 5 }] }, U, A]),
  conv("tc-args", [U, { role: "assistant", content: "", tool_calls: [{ type: "function", function: { name: "f", arguments: "{bad" } }] }, U, A]),
  // bad JSON
  "{broken",
  '{"id": "trailing", "messages": []} x',
  '{"id": "nan-content", "messages": [{"role": "user", "content": NaN}, {"role": "assistant", "content": "x"}]}',
  // bad shapes
  "[1, 2]",
  '"just a string"',
  '{"messages": [{"role": "user", "content": "hi"}]}',
  conv("messages-string", "x" as never),
  conv("messages-empty", []),
  conv("message-number", [5, A]),
  conv("role-missing", [{ content: "hi" }, A]),
  conv("content-number", [{ role: "user", content: 5 }, A]),
  conv("tools-object", [U, A], { tools: { a: 1 } }),
  conv("kwargs-list", [U, A], { chat_template_kwargs: [1] }),
  '{"id": "lone-surrogate", "messages": [{"role": "user", "content": "a\\ud800"}, {"role": "assistant", "content": "x"}]}',
  '{"id": 1e400, "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "x"}]}',
];

test("bad lines give identical records and error counts with --workers 0 and --workers 2", async () => {
  const corpus = join(dir, "bad.jsonl");
  // a UTF-8 BOM before the first line, and a line with a byte that is not UTF-8, as the reader sees them
  const body = [good[0] as string, ...BAD.slice(0, 12), good[1] as string, ...BAD.slice(12)].join("\n") + "\n";
  writeFileSync(corpus, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body, "utf8"), Buffer.from('{"id": "latin1", "messages": [{"role": "user", "content": "caf'), Buffer.from([0xe9]), Buffer.from('"}, {"role": "assistant", "content": "x"}]}\n')]));
  const common = ["--date", "2026-11-30", "--renderer", TEST_RENDERER, "--no-progress"];
  const serial = await runCli(["replay", corpus, ...common, "--summary", join(dir, "s0.json")]);
  const pooled = await runCli(["replay", corpus, ...common, "--workers", "2", "--summary", join(dir, "s2.json")]);
  assert.equal(serial.code, 0, serial.stderr);
  assert.equal(pooled.code, 0, pooled.stderr);
  assert.equal(pooled.stdout, serial.stdout, "the same records, byte for byte");
  const s0 = JSON.parse(readFileSync(join(dir, "s0.json"), "utf8")) as { errors_by_code: Record<string, number>; errors: number };
  const s2 = JSON.parse(readFileSync(join(dir, "s2.json"), "utf8")) as { errors_by_code: Record<string, number>; errors: number };
  assert.deepEqual(s2.errors_by_code, s0.errors_by_code);

  const records = jsonl(serial.stdout);
  const byId = (id: string) => records.filter((r) => r.id === id).map((r) => r.error as { code: string; path?: string } | undefined);
  // deep nesting is a JSON error of the line in both modes, never a crash or DT_INTERNAL
  const lineErrors = records.filter((r) => r.index === null).map((r) => (r.error as { code: string }).code);
  assert.ok(!lineErrors.includes("DT_INTERNAL"), JSON.stringify(lineErrors));
  const deep = records.filter((r) => r.index === null && typeof r.line === "number" && (r.line as number) >= 2 && (r.line as number) <= 5);
  assert.equal(deep.length, 4);
  assert.ok(deep.every((r) => (r.error as { code: string }).code === "DT_INVALID_JSON"));
  assert.equal(new Set(deep.map((r) => (r.error as { message: string }).message.replace(/line \d+ /, "").replace(/column \d+ \(char \d+\)/, ""))).size, 1, "one message for deep nesting");
  // the bad tool_calls: OSL path for its own request, ISL path once a later prompt holds it
  assert.deepEqual(
    byId("tc-number").map((e) => e?.path),
    ["message.tool_calls", "messages[1].tool_calls"],
  );
  assert.ok(s0.errors >= BAD.length);
});
