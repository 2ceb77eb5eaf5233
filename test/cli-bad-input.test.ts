/**
 * Every kind of bad input gets a coded error for the item it concerns; every other request of
 * the corpus is still answered; the process does not crash.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jsonl, runCli } from "./helpers/cli.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const dir = mkdtempSync(join(tmpdir(), "deltatok-bad-"));
const good = (id: string) => ({
  id,
  messages: [
    { role: "system", content: "You are terse." },
    { role: "user", content: "Hi" },
    { role: "assistant", content: "Hello." },
  ],
});
const convo = (id: string, extra: Record<string, unknown>, msgs?: unknown[]) => ({ id, messages: msgs ?? good(id).messages, ...extra });

const lines: string[] = [
  JSON.stringify(good("ok-1")),
  "{this is not json",
  JSON.stringify({ id: "no-messages" }),
  JSON.stringify({ id: "messages-not-array", messages: { role: "user" } }),
  JSON.stringify({ id: "messages-empty", messages: [] }),
  JSON.stringify(convo("no-role", {}, [{ content: "x" }, { role: "assistant", content: "y" }])),
  JSON.stringify(convo("role-not-string", {}, [{ role: 7, content: "x" }, { role: "assistant", content: "y" }])),
  JSON.stringify(convo("content-number", {}, [{ role: "user", content: 42 }, { role: "assistant", content: "y" }])),
  JSON.stringify(convo("content-object", {}, [{ role: "user", content: { text: "x" } }, { role: "assistant", content: "y" }])),
  JSON.stringify(convo("content-bad-parts", {}, [{ role: "user", content: ["x"] }, { role: "assistant", content: "y" }])),
  '{"id":"lone-surrogate","messages":[{"role":"user","content":"bad \\ud800 text"},{"role":"assistant","content":"y"}]}',
  JSON.stringify(convo("tool-calls-not-list", {}, [{ role: "user", content: "x" }, { role: "assistant", content: "", tool_calls: { id: 1 } }, { role: "assistant", content: "z" }])),
  JSON.stringify(convo("arguments-not-json", {}, [
    { role: "user", content: "x" },
    { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{not json" } }] },
    { role: "tool", content: "r", tool_call_id: "c1" },
    { role: "assistant", content: "z" },
  ])),
  JSON.stringify(convo("tools-not-list", { tools: { name: "f" } })),
  JSON.stringify(convo("kwargs-not-object", { chat_template_kwargs: [1, 2] })),
  JSON.stringify(convo("huge-message", {}, [{ role: "user", content: "y".repeat(2_000) }, { role: "assistant", content: "z" }])),
  JSON.stringify(good("ok-2")),
];
const corpus = join(dir, "bad.jsonl");
writeFileSync(corpus, lines.join("\n") + "\n");

function byId(records: Array<Record<string, unknown>>) {
  const m = new Map<string, Array<Record<string, unknown>>>();
  for (const r of records) {
    const k = String(r.id ?? `line:${r.line}`);
    m.set(k, [...(m.get(k) ?? []), r]);
  }
  return m;
}
const code = (r: Record<string, unknown> | undefined) => (r?.error as { code?: string } | undefined)?.code;

test("replay: each bad item gets its coded error, the rest complete", async () => {
  const summary = join(dir, "summary.json");
  const res = await runCli([
    "replay", corpus, "--renderer", TEST_RENDERER, "--date", "2026-11-30", "--parse-tool-arguments", "--max-prompt-chars", "1000", "--summary", summary,
  ]);
  assert.equal(res.code, 0, res.stderr);
  const recs = byId(jsonl(res.stdout));
  const expect: Record<string, string> = {
    "line:2": "DT_INVALID_JSON",
    "no-messages": "DT_INVALID_MESSAGES",
    "messages-not-array": "DT_INVALID_MESSAGES",
    "messages-empty": "DT_INVALID_MESSAGES",
    "no-role": "DT_INVALID_MESSAGE",
    "role-not-string": "DT_INVALID_MESSAGE",
    "content-number": "DT_INVALID_CONTENT",
    "content-object": "DT_INVALID_CONTENT",
    "content-bad-parts": "DT_INVALID_CONTENT",
    "lone-surrogate": "DT_LONE_SURROGATE",
    "tool-calls-not-list": "DT_INVALID_TOOL_CALLS",
    "arguments-not-json": "DT_INVALID_TOOL_ARGUMENTS",
    "tools-not-list": "DT_INVALID_TOOLS",
    "kwargs-not-object": "DT_INVALID_KWARGS",
    "huge-message": "DT_INPUT_TOO_LARGE",
  };
  for (const [id, want] of Object.entries(expect)) {
    const rs = recs.get(id);
    assert.ok(rs !== undefined && rs.length > 0, `no record for ${id}`);
    assert.ok(rs.some((r) => code(r) === want), `${id}: want ${want}, got ${JSON.stringify(rs)}`);
  }
  // error records name the offending field
  assert.equal((recs.get("content-number")?.[0]?.error as { path?: string }).path, "messages[0].content");
  assert.equal(
    (recs.get("arguments-not-json")?.find((r) => code(r) === "DT_INVALID_TOOL_ARGUMENTS")?.error as { path?: string }).path,
    "messages[1].tool_calls[0].function.arguments",
  );
  for (const id of ["ok-1", "ok-2"]) {
    const r = recs.get(id)?.[0];
    assert.ok(typeof r?.isl === "number" && r.isl > 0 && typeof r.osl === "number", `${id} answered: ${JSON.stringify(r)}`);
  }
  const s = JSON.parse(readFileSync(summary, "utf8")) as { errors: number; requests: number; errors_by_code: Record<string, number>; tokenizer_engine: string };
  assert.equal(s.tokenizer_engine, "deltatok", "the summary says what encoded text (deltatok's own encoder, on the bundled qwen3)");
  assert.equal(s.errors, [...recs.values()].flat().filter((r) => r.error !== undefined).length, "summary counts every error record");
  assert.equal(s.errors_by_code.DT_INVALID_MESSAGES, 3);
});

test("replay --strict exits 1 when a request failed", async () => {
  const res = await runCli(["replay", corpus, "--renderer", TEST_RENDERER, "--strict", "--out", join(dir, "strict.jsonl")]);
  assert.equal(res.code, 1);
});

test("a 50 MB message is refused with DT_INPUT_TOO_LARGE for its requests only", async () => {
  const big = join(dir, "big.jsonl");
  writeFileSync(
    big,
    JSON.stringify(convo("big", {}, [{ role: "user", content: "word ".repeat(10_000_000) }, { role: "assistant", content: "ok" }])) + "\n" + JSON.stringify(good("after")) + "\n",
  );
  const res = await runCli(["replay", big, "--renderer", TEST_RENDERER, "--no-osl"]);
  assert.equal(res.code, 0, res.stderr);
  const recs = byId(jsonl(res.stdout));
  assert.equal(code(recs.get("big")?.[0]), "DT_INPUT_TOO_LARGE");
  assert.equal(typeof recs.get("after")?.[0]?.isl, "number");
});

test("startup failures: unknown tokenizer, missing tokenizer.json, bad date, bad kwargs, bad template", async () => {
  let r = await runCli(["replay", corpus, "--tokenizer", "no_such_tokenizer"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /DT_TOKENIZER_UNKNOWN/);
  r = await runCli(["replay", corpus, "--tokenizer", join(dir, "missing-dir")]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /DT_TOKENIZER_NOT_FOUND/);
  const corrupt = join(dir, "corrupt");
  (await import("node:fs")).mkdirSync(corrupt, { recursive: true });
  writeFileSync(join(corrupt, "tokenizer.json"), "{ not json");
  r = await runCli(["replay", corpus, "--tokenizer", corrupt]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /DT_TOKENIZER_INVALID/);
  r = await runCli(["replay", corpus, "--date", "2026-02-30"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /DT_INVALID_DATE/);
  r = await runCli(["replay", corpus, "--chat-template-kwargs", "[1]"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /DT_INVALID_KWARGS/);
  r = await runCli(["replay", corpus, "--bogus-flag"]);
  assert.equal(r.code, 2);
  const badTemplate = join(dir, "bad.jinja");
  writeFileSync(badTemplate, "{% for m in messages %}{{ m.content }");
  const goodOnly = join(dir, "good.jsonl");
  writeFileSync(goodOnly, JSON.stringify(good("g1")) + "\n" + JSON.stringify(good("g2")) + "\n");
  r = await runCli(["replay", goodOnly, "--renderer", TEST_RENDERER, "--template", badTemplate]);
  assert.equal(r.code, 1, "a --template that does not parse is a load error (README: exit 1)");
  assert.match(r.stderr, /DT_TEMPLATE_SYNTAX/);
  assert.equal(jsonl(r.stdout).length, 0);
});

test("raise_exception from the template is a coded per-request error with the template's message", async () => {
  const c = join(dir, "gemma.jsonl");
  writeFileSync(c, JSON.stringify(convo("not-alternating", {}, [{ role: "user", content: "a" }, { role: "user", content: "b" }, { role: "assistant", content: "c" }])) + "\n");
  const r = await runCli(["replay", c, "--tokenizer", "gemma3", "--renderer", TEST_RENDERER]);
  assert.equal(r.code, 0, r.stderr);
  const rec = jsonl(r.stdout)[0];
  assert.equal(code(rec), "DT_TEMPLATE_RAISED");
  assert.match(String((rec?.error as { message: string }).message), /Conversation roles must alternate/);
});
