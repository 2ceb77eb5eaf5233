/**
 * Corpus bytes to lines: each line is decoded on its own with a fatal UTF-8 decoder, so a line
 * that is not valid UTF-8 is DT_INVALID_UTF8 for that line (never U+FFFD counted as text) while
 * the others go on; a UTF-8 byte order mark at the start of the file is dropped (the first
 * conversation is kept); LF, CRLF and CR end lines (also split across reads); blank lines, empty
 * files and /dev/null give nothing; an oversize line is skipped to its end, coded, never buffered
 * whole; a corpus that cannot be opened is DT_CORPUS_UNREADABLE.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkCorpus, corpusLines, openCorpus, readCorpus, type CorpusItem, type CorpusLine } from "../src/corpus/corpus.js";
import { idJson } from "../src/corpus/id.js";
import { pythonJsonParser } from "../src/api/json.js";
import { DeltatokError } from "../src/errors.js";
import { jsonl, runCli } from "./helpers/cli.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const dir = mkdtempSync(join(tmpdir(), "deltatok-enc-"));
const conv = (id: string, text = "Hi") =>
  JSON.stringify({ id, messages: [{ role: "user", content: text }, { role: "assistant", content: "Hello." }] });

function file(name: string, bytes: Buffer | string): string {
  const p = join(dir, name);
  writeFileSync(p, bytes);
  return p;
}

async function items(path: string): Promise<CorpusItem[]> {
  const out: CorpusItem[] = [];
  for await (const it of readCorpus(path, pythonJsonParser)) out.push(it);
  return out;
}

async function lines(path: string, maxLineBytes?: number): Promise<CorpusLine[]> {
  const out: CorpusLine[] = [];
  for await (const l of corpusLines(await openCorpus(path), maxLineBytes)) out.push(l);
  return out;
}

const summary = (xs: CorpusItem[]) =>
  xs.map((x) => (x.ok ? `${x.conversation.line}:${x.conversation.id}` : `${x.failure.line}:${x.failure.error.code}`));

test("a UTF-8 BOM at the start of the file is dropped: the first conversation counts", async () => {
  const p = file("bom.jsonl", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${conv("a")}\n${conv("b")}\n`)]));
  assert.deepEqual(summary(await items(p)), ["1:a", "2:b"]);
  // only at the start of the file: a BOM starting a later line is not JSON whitespace
  const mid = file("bom-mid.jsonl", Buffer.concat([Buffer.from(`${conv("a")}\n`), Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${conv("b")}\n`)]));
  assert.deepEqual(summary(await items(mid)), ["1:a", "2:DT_INVALID_JSON"]);
});

test("invalid UTF-8 is DT_INVALID_UTF8 for that line only; the text is never U+FFFD", async () => {
  const bad = [
    Buffer.from([0xff]), // never valid
    Buffer.from([0xc3]), // truncated sequence
    Buffer.from([0xc0, 0xaf]), // overlong
    Buffer.from([0xed, 0xa0, 0x80]), // an encoded surrogate
    Buffer.from([0xf4, 0x90, 0x80, 0x80]), // beyond U+10FFFF
  ];
  for (const b of bad) {
    const line2 = Buffer.concat([Buffer.from('{"id":"x","messages":[{"role":"user","content":"a'), b, Buffer.from('"},{"role":"assistant","content":"y"}]}')]);
    const p = file("bad.jsonl", Buffer.concat([Buffer.from(conv("a") + "\n"), line2, Buffer.from("\n" + conv("c") + "\n")]));
    const got = await items(p);
    assert.deepEqual(summary(got), ["1:a", "2:DT_INVALID_UTF8", "3:c"], b.toString("hex"));
    assert.equal((got[1] as { failure: { id: unknown } }).failure.id, null);
  }
  // valid multi-byte text, including 4-byte sequences, is decoded exactly
  const p = file("ok.jsonl", conv("u", "é — 漢字 😀") + "\n");
  const got = await items(p);
  assert.ok(got[0]?.ok === true && (got[0].conversation.messages[0] as { content: string }).content === "é — 漢字 😀");
  // a UTF-16 file: coded, with nothing counted
  const u16 = file("u16.jsonl", Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(conv("a") + "\n", "utf16le")]));
  assert.equal(summary(await items(u16))[0], "1:DT_INVALID_UTF8");
});

test("line ends: LF, CRLF, CR, a last line without one, and a CRLF split across reads", async () => {
  const p = file("ends.jsonl", `${conv("a")}\r\n${conv("b")}\r${conv("c")}\n\n\r\n${conv("d")}`);
  assert.deepEqual(summary(await items(p)), ["1:a", "2:b", "3:c", "6:d"]);
  // the reader takes 1 MiB at a time: put a CRLF and a multi-byte character across the boundary
  const base = Buffer.byteLength(conv("big", ""));
  const big = conv("big", "x".repeat((1 << 20) - 1 - base));
  assert.equal(Buffer.byteLength(big), (1 << 20) - 1);
  const q = file("split.jsonl", `${big}\r\n${conv("next", "ü".repeat(3))}\n`);
  assert.deepEqual(summary(await items(q)), ["1:big", "2:next"]);
  const head = '{"id":"s","messages":[{"role":"user","content":"';
  const straddle = `${head}${"x".repeat((1 << 20) - 1 - head.length)}é"},{"role":"assistant","content":"y"}]}`;
  assert.equal(Buffer.from(straddle).indexOf(Buffer.from("é")), (1 << 20) - 1, "é starts at the last byte of the first read");
  const got = await items(file("split2.jsonl", `${straddle}
${conv("after")}
`));
  assert.deepEqual(summary(got), ["1:s", "2:after"], "a character split across reads is decoded whole");
});

test("blank lines, an empty file, a file of only blank lines and /dev/null give nothing", async () => {
  assert.deepEqual(await items(file("empty.jsonl", "")), []);
  assert.deepEqual(await items(file("blank.jsonl", "\n\n  \r\n\t\n")), []);
  assert.deepEqual(await items("/dev/null"), []);
  assert.deepEqual(summary(await items(file("gaps.jsonl", `\n\n${conv("a")}\n   \n${conv("b")}\n\n`))), ["3:a", "5:b"]);
});

test("a line over the limit is skipped to its end and coded; the next line is read", async () => {
  const p = file("long.jsonl", `${conv("a")}\n${conv("long", "y".repeat(5000))}\n${conv("c")}\n`);
  const got = await lines(p, 1000);
  assert.equal(got.length, 3);
  assert.equal(got[0]?.text, conv("a"));
  assert.equal(got[1]?.error?.code, "DT_INPUT_TOO_LARGE");
  assert.equal(got[2]?.text, conv("c"));
  // the same across reads (a line longer than one read) and at the end of the file
  const q = file("long2.jsonl", `${conv("a")}\n${"z".repeat(3 << 20)}`);
  const got2 = await lines(q, 1 << 20);
  assert.deepEqual(got2.map((l) => l.error?.code ?? "text"), ["text", "DT_INPUT_TOO_LARGE"]);
  assert.equal(got2[1]?.bytes, 3 << 20);
});

test("a corpus that cannot be read is DT_CORPUS_UNREADABLE: missing, a directory, no permission", async () => {
  const expectCode = async (p: Promise<unknown>) => {
    await assert.rejects(p, (e: unknown) => e instanceof DeltatokError && e.code === "DT_CORPUS_UNREADABLE");
  };
  await expectCode(checkCorpus(join(dir, "missing.jsonl")));
  await expectCode(openCorpus(join(dir, "missing.jsonl")));
  const sub = join(dir, "a-directory");
  mkdirSync(sub);
  await expectCode(checkCorpus(sub));
  await expectCode(items(sub));
  await expectCode(checkCorpus(join(file("plain.txt", "x"), "below-a-file")));
  assert.deepEqual(await checkCorpus("/dev/null"), { size: 0 });
  if (process.getuid?.() !== 0) {
    // (root reads any file: this part needs an ordinary user)
    const locked = file("locked.jsonl", conv("a"));
    chmodSync(locked, 0);
    await expectCode(checkCorpus(locked));
    await expectCode(items(locked));
  }
});

test("deltatok replay: a BOM and a bad line in one corpus; the other conversations are counted", async () => {
  const p = file(
    "cli.jsonl",
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${conv("a")}\n`), Buffer.from([0x7b, 0xff, 0x7d, 0x0a]), Buffer.from(`${conv("c")}\n`)]),
  );
  const r = await runCli(["replay", p, "--renderer", TEST_RENDERER, "--date", "2026-11-30"]);
  assert.equal(r.code, 0, r.stderr);
  const recs = jsonl(r.stdout);
  assert.deepEqual(
    recs.map((x) => [x.id, x.index, (x.error as { code?: string } | undefined)?.code ?? typeof x.isl]),
    [["a", 1, "number"], [null, null, "DT_INVALID_UTF8"], ["c", 1, "number"]],
  );
  assert.equal(recs[1]?.line, 2);
});

test("ids: strings, and JSON numbers as the line spells them (big ints included); NaN and other types are not ids", async () => {
  const p = file(
    "ids.jsonl",
    [
      `{"id":"s","messages":[{"role":"user","content":"x"}]}`,
      `{"id":7,"messages":[{"role":"user","content":"x"}]}`,
      `{"id":123456789012345678901234567890,"messages":[{"role":"user","content":"x"}]}`,
      `{"id":1.0,"messages":[{"role":"user","content":"x"}]}`,
      `{"id":1e-7,"messages":[{"role":"user","content":"x"}]}`,
      `{"id":1e400,"messages":[{"role":"user","content":"x"}]}`,
      `{"id":true,"messages":[{"role":"user","content":"x"}]}`,
      `{"id":{"a":1},"messages":[{"role":"user","content":"x"}]}`,
      `{"id":NaN,"messages":[{"role":"user","content":"x"}]}`,
    ].join("\n"),
  );
  const got = (await items(p)).map((x) => (x.ok ? `${x.conversation.line}:${idJson(x.conversation.id)}` : `${x.failure.line}:${x.failure.error.code}`));
  assert.deepEqual(got, [
    '1:"s"',
    "2:7",
    "3:123456789012345678901234567890",
    "4:1.0",
    "5:1e-7",
    "6:1e400",
    "7:DT_INVALID_REQUEST",
    "8:DT_INVALID_REQUEST",
    "9:DT_INVALID_REQUEST",
  ]);
});
