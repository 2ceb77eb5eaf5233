/**
 * A corpus id comes back exactly as the line spelt it (src/corpus/id.ts): `7`, `"7"`, `1.5`,
 * `9007199254740993`, `-0`, `1e3`, `1E+2` are written back as those characters by replay,
 * tokenize and rollout (JSONL and binary, in process and on workers), by merge of their shards,
 * and the Python readers read the values json.loads reads from the corpus. 7 and "7" are two
 * ids; NaN is not an id.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { idKey, idOfText, jsonWithIds, recordJson } from "../src/corpus/id.js";
import { parseCorpusLine } from "../src/corpus/corpus.js";
import { parseJson } from "../src/json/index.js";
import { runCli } from "./helpers/cli.js";
import { repoPath } from "./helpers/paths.js";
import { same } from "./helpers/shard.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const dir = mkdtempSync(join(tmpdir(), "deltatok-ids-"));
const COMMON = ["--date", "2026-11-30", "--renderer", TEST_RENDERER, "--no-progress"];
const MSGS = '[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]';

/** [id as the line spells it, id as every output must write it]. */
const IDS: Array<[string, string]> = [
  ["7", "7"],
  ['"7"', '"7"'],
  ["1.5", "1.5"],
  ["9007199254740993", "9007199254740993"],
  ["-0", "-0"],
  ["1e3", "1e3"],
  ["1.50", "1.50"],
  ['"a\\u0062"', '"ab"'], // a string is its decoded text
];
const corpus = join(dir, "ids.jsonl");
writeFileSync(
  corpus,
  [
    ...IDS.map(([t]) => `{"id": ${t}, "messages": ${MSGS}}`),
    '{"id": 1E+2, "messages": 5}', // a line that fails keeps its number id as sent
    `{"id": NaN, "messages": ${MSGS}}`, // not a JSON number: not an id
  ].join("\n") + "\n",
);
/** What each record's id must read, in corpus order. */
const WANT = [...IDS.map(([, w]) => w), "1E+2", "null"];

/** The id texts of JSON text holding records that start `{"id":…,` (JSONL lines, a binary index). */
function idTexts(text: string): string[] {
  return [...text.matchAll(/\{"id":((?:"[^"]*")|[^,"}]*),"(?:index|count|sequences|offset|line)"/g)].map((m) => m[1] as string);
}

async function run(args: string[]): Promise<string> {
  const r = await runCli([...args, ...COMMON]);
  assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

/** A binary output's index text (src/cli/binary.ts: the index's offset in the last 8 bytes). */
function indexText(path: string): string {
  const b = readFileSync(path);
  return b.subarray(Number(b.readBigUInt64LE(b.length - 8)), b.length - 8).toString("utf8");
}

test("ids: the id of a line is its string or its number's text; 7 and \"7\" are two ids; NaN is none", () => {
  const parse = (t: string) => parseCorpusLine(`{"id": ${t}, "messages": ${MSGS}}`, 1, parseJson);
  assert.deepEqual(parse("7").id, { number: "7" });
  assert.equal(parse('"7"').id, "7");
  assert.deepEqual(parse("9007199254740993").id, { number: "9007199254740993" });
  assert.notEqual(idKey({ number: "7" }), idKey("7"));
  assert.notEqual(idKey({ number: "7" }), idKey({ number: "7.0" }));
  for (const t of ["NaN", "Infinity", "-Infinity", "true", "null", "[7]"]) {
    const r = parse(t);
    assert.ok("error" in r && r.error.code === "DT_INVALID_REQUEST" && r.id === null, t);
  }
  // duplicate keys: the parser keeps the last value, and so does the id's text
  assert.deepEqual(parseCorpusLine(`{"id": 1, "messages": ${MSGS}, "id": 2.50}`, 1, parseJson).id, { number: "2.50" });
  assert.deepEqual(idOfText('{"a": {"id": 1}, "id" : -0 }'), { number: "-0" });
  // writers: top-level id (records) and ids at any depth (a verify summary's differences)
  assert.equal(recordJson({ id: { number: "1e3" }, skip: undefined, n: [1, 2] }), '{"id":1e3,"n":[1,2]}');
  assert.equal(recordJson({ id: "1e3", n: 1 }), '{"id":"1e3","n":1}');
  const nested = { differences: [{ id: { number: "-0" }, index: 1 }, { id: "x\u0000y" }], id: { number: "9007199254740993" } };
  assert.equal(jsonWithIds(nested, 2), ['{', '  "differences": [', "    {", '      "id": -0,', '      "index": 1', "    },", "    {", '      "id": "x\\u0000y"', "    }", "  ],", '  "id": 9007199254740993', "}"].join("\n"));
});

test("replay, tokenize, rollout (JSONL) write every id as sent, in process and on workers", async () => {
  for (const command of ["replay", "tokenize", "rollout"]) {
    const serial = await run([command, corpus]);
    assert.deepEqual(idTexts(serial), WANT, command);
    if (command === "rollout") continue;
    const pooled = await run([command, corpus, "--workers", "2"]);
    same(Buffer.from(pooled), Buffer.from(serial), `${command} --workers 2`);
  }
});

test("tokenize and rollout --format binary hold every id as sent; the Python readers read json.loads's values", async () => {
  for (const [command, reader] of [
    ["tokenize", "read_tokens"],
    ["rollout", "read_rollouts"],
  ] as const) {
    const out = join(dir, `${command}.bin`);
    await run([command, corpus, "--format", "binary", "--out", out]);
    assert.deepEqual(idTexts(indexText(out)), WANT, command);
    if (command === "tokenize") {
      const pooled = join(dir, `${command}-w2.bin`);
      await run([command, corpus, "--format", "binary", "--out", pooled, "--workers", "2"]);
      same(readFileSync(pooled), readFileSync(out), `${command} --format binary --workers 2`);
    }
    if (spawnSync("python3", ["--version"]).status !== 0) continue;
    // each id read back against json.loads of its corpus line: same type, same value, same sign
    const script = [
      "import json, math, sys",
      `from deltatok.binary import ${reader} as read`,
      "want = [json.loads(l)['id'] for l in open(sys.argv[2], encoding='utf-8').read().splitlines()[:-1]]",
      "got = [r['id'] for r in read(sys.argv[1])][:-1]",
      "key = lambda v: [type(v).__name__, repr(v), math.copysign(1, v) if isinstance(v, float) else 1]",
      "print(json.dumps([[key(v) for v in got], [key(v) for v in want]]))",
    ].join("\n");
    const py = spawnSync("python3", ["-c", script, out, corpus], { cwd: repoPath("clients", "python", "src"), encoding: "utf8" });
    assert.equal(py.status, 0, py.stderr);
    const [got, want] = JSON.parse(py.stdout) as [unknown[], unknown[]];
    assert.deepEqual(got, want, reader);
    assert.equal(got.length, IDS.length + 1);
  }
});

test("merge of shards writes every id as the unsharded run does (JSONL and binary)", async () => {
  for (const [command, format] of [
    ["replay", "jsonl"], // tokenize and rollout JSONL go through the same record writer and merge
    ["tokenize", "binary"],
    ["rollout", "binary"],
  ] as const) {
    const base = join(dir, `${command}-${format}`);
    const fmt = command === "replay" ? [] : ["--format", format];
    await run([command, corpus, ...fmt, "--out", `${base}.whole`]);
    const shards = [0, 1, 2].map((i) => `${base}.${i}`);
    for (const [i, s] of shards.entries()) await run([command, corpus, ...fmt, "--out", s, "--shard", `${i}/3`]);
    // every shard holds some of the ids (the test would prove nothing with one shard holding all)
    for (const s of shards) assert.ok(idTexts(format === "binary" ? indexText(s) : readFileSync(s, "utf8")).length > 0, s);
    const m = await runCli(["merge", "--out", `${base}.merged`, ...shards.reverse()]);
    assert.equal(m.code, 0, m.stderr);
    same(readFileSync(`${base}.merged`), readFileSync(`${base}.whole`), `${command} ${format} merged`);
  }
});
