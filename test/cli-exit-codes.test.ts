/**
 * Exit codes as the README promises, for every corpus command (replay, render, verify,
 * tokenize): a chat template that does not parse (`--template`) and a corpus that cannot be read
 * (missing, a directory) are fatal — exit 1 with the coded error on stderr, nothing written —
 * while /dev/null, an empty file and a FIFO are corpora like any other (exit 0); an output file
 * that cannot be written is DT_OUTPUT_UNWRITABLE (exit 1), not a crash. Both are checked before
 * the tokenizer is loaded, so a mistyped path fails at once.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, mkdirSync, openSync, writeFileSync, createWriteStream } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jsonl, runCli } from "./helpers/cli.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const dir = mkdtempSync(join(tmpdir(), "deltatok-exit-"));
const corpus = join(dir, "good.jsonl");
writeFileSync(
  corpus,
  JSON.stringify({ id: "g", messages: [{ role: "user", content: "Hi" }, { role: "assistant", content: "Hello." }] }) + "\n",
);
const badTemplate = join(dir, "bad.jinja");
writeFileSync(badTemplate, "{% for m in messages %}{{ m.content }");
const aDirectory = join(dir, "a-directory");
mkdirSync(aDirectory);
const base = ["--renderer", TEST_RENDERER, "--date", "2026-11-30"];
const commands: Array<[string, string[]]> = [
  ["replay", []],
  ["render", []],
  ["verify", []],
  ["tokenize", ["--out", join(dir, "out.jsonl")]],
];

test("a --template that does not parse: exit 1, DT_TEMPLATE_SYNTAX, in every command", async () => {
  for (const [cmd, extra] of commands) {
    const r = await runCli([cmd, corpus, ...base, "--template", badTemplate, ...extra]);
    assert.equal(r.code, 1, `${cmd}: ${r.stderr}`);
    assert.match(r.stderr, /DT_TEMPLATE_SYNTAX/, cmd);
    assert.equal(r.stdout, "", `${cmd} wrote nothing`);
  }
});

test("a corpus that is a directory or missing: exit 1, DT_CORPUS_UNREADABLE, in every command", async () => {
  for (const [cmd, extra] of commands) {
    const r = await runCli([cmd, aDirectory, ...base, ...extra]);
    assert.equal(r.code, 1, `${cmd}: ${r.stderr}`);
    assert.match(r.stderr, /DT_CORPUS_UNREADABLE/, cmd);
    assert.doesNotMatch(r.stderr, /DT_INTERNAL/, cmd);
  }
  const r = await runCli(["replay", join(dir, "missing.jsonl"), ...base]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /DT_CORPUS_UNREADABLE/);
});

test("/dev/null, an empty file and a FIFO are read like files (exit 0)", async () => {
  let r = await runCli(["replay", "/dev/null", ...base]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "");
  const empty = join(dir, "empty.jsonl");
  writeFileSync(empty, "\n\n");
  r = await runCli(["verify", empty, ...base]);
  assert.equal(r.code, 0, r.stderr);
  const fifo = join(dir, "fifo");
  if (spawnSync("mkfifo", [fifo]).status !== 0) return; // no mkfifo here: the rest is covered above
  const cli = runCli(["replay", fifo, ...base]);
  const w = createWriteStream(fifo);
  w.end(JSON.stringify({ id: "f", messages: [{ role: "user", content: "Hi" }, { role: "assistant", content: "Hello." }] }) + "\n");
  r = await cli;
  // had the child not opened the FIFO, our writer would wait for a reader forever: give it one
  closeSync(openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK));
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(jsonl(r.stdout).map((x) => [x.id, x.index, typeof x.isl]), [["f", 1, "number"]]);
});

test("an output that cannot be written (--out a directory, --summary in a missing directory): exit 1, DT_OUTPUT_UNWRITABLE", async () => {
  const cases: string[][] = [
    ["replay", corpus, "--out", aDirectory],
    ["render", corpus, "--out", aDirectory],
    ["tokenize", corpus, "--format", "binary", "--out", aDirectory],
    ["replay", corpus, "--summary", join(dir, "no-such-dir", "summary.json")],
    ["verify", corpus, "--out", aDirectory],
  ];
  for (const args of cases) {
    const r = await runCli([...args, ...base]);
    assert.equal(r.code, 1, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, /DT_OUTPUT_UNWRITABLE/, args.join(" "));
    assert.doesNotMatch(r.stderr, /Unhandled|DT_INTERNAL/, args.join(" "));
  }
});

test("the corpus and the outputs are checked before the tokenizer loads: a bad path is its own error, whatever the tokenizer", async () => {
  // a tokenizer that cannot load: had it been loaded first, every case would be its error
  const noTokenizer = ["--tokenizer", join(dir, "no-such-tokenizer")];
  for (const [cmd] of [...commands, ["rollout", []] as [string, string[]]]) {
    const missing = await runCli([cmd, join(dir, "missing.jsonl"), ...base, ...noTokenizer]);
    assert.equal(missing.code, 1, `${cmd}: ${missing.stderr}`);
    assert.match(missing.stderr, /DT_CORPUS_UNREADABLE: cannot read corpus .*missing\.jsonl: no such file/, cmd);
    const outDir = await runCli([cmd, corpus, ...base, ...noTokenizer, "--out", aDirectory]);
    assert.equal(outDir.code, 1, `${cmd}: ${outDir.stderr}`);
    assert.match(outDir.stderr, /DT_OUTPUT_UNWRITABLE: cannot write .*a-directory: it is a directory/, cmd);
    const summary = await runCli([cmd, corpus, ...base, ...noTokenizer, "--summary", join(dir, "nowhere", "s.json")]);
    assert.equal(summary.code, 1, `${cmd}: ${summary.stderr}`);
    assert.match(summary.stderr, /DT_OUTPUT_UNWRITABLE: cannot write .*s\.json: its directory does not exist/, cmd);
  }
  // with paths that are fine, the tokenizer's own error
  const r = await runCli(["replay", corpus, ...base, ...noTokenizer]);
  assert.equal(r.code, 1, r.stderr);
  assert.doesNotMatch(r.stderr, /DT_CORPUS_UNREADABLE|DT_OUTPUT_UNWRITABLE/);
});
