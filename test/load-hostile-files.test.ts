/**
 * Tokenizer files are not trusted. A FIFO, a device (/dev/zero) or an oversize file as
 * tokenizer.json is refused with a code before anything is read (DT_TOKENIZER_INVALID /
 * DT_TOKENIZER_TOO_LARGE; the CLI exits 1 promptly, never hangs or grows), and a tokenizer.json
 * is refused exactly when the Rust binding (npm `tokenizers`) refuses it: an added token or
 * vocabulary id past u32, WordPiece / WordLevel / Unigram models missing what the crate
 * requires, a merge naming a missing token. What Rust
 * loads (a byte-level vocabulary without some byte, a valid WordPiece model) loads here too, the
 * byte-less one with Rust's ids. After every refusal the next load succeeds.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, openSync, closeSync, ftruncateSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { Deltatok } from "../src/api/deltatok.js";
import { MAX_TOKENIZER_JSON_BYTES } from "../src/load/json-text.js";
import { runCli } from "./helpers/cli.js";
import { modelsDir } from "./helpers/tokenizers.js";
import { repoPath } from "./helpers/paths.js";

const { Tokenizer } = createRequire(import.meta.url)("tokenizers") as { Tokenizer: { fromString(s: string): { encode(t: string, p: null, o: { addSpecialTokens: boolean }): Promise<{ getIds(): number[] }> } } };
const root = mkdtempSync(join(tmpdir(), "dt-hostile-"));
const QWEN = JSON.parse(readFileSync(join(modelsDir("qwen3"), "tokenizer.json"), "utf8")) as Record<string, unknown>;

async function loads(dir: string): Promise<Deltatok | string> {
  try {
    return await Deltatok.create({ tokenizer: dir, chatTemplate: "{{ messages[0].content }}" });
  } catch (e) {
    return (e as { code: string }).code;
  }
}

async function stillLoads(): Promise<void> {
  const dt = await loads("qwen3");
  assert.ok(typeof dt !== "string" && dt.countText("hello") === 1);
}

test("a FIFO, /dev/zero and a sparse 257 MiB file as tokenizer.json are refused at once (CLI: exit 1, a code)", async () => {
  const cases: Array<[string, (file: string) => void, string]> = [
    ["fifo", (f) => execFileSync("mkfifo", [f]), "DT_TOKENIZER_INVALID"],
    ["zero", (f) => symlinkSync("/dev/zero", f), "DT_TOKENIZER_INVALID"],
    ["big", (f) => {
      const fd = openSync(f, "w");
      ftruncateSync(fd, MAX_TOKENIZER_JSON_BYTES + (1 << 20)); // sparse: no disk used
      closeSync(fd);
    }, "DT_TOKENIZER_TOO_LARGE"],
  ];
  for (const [name, make, code] of cases) {
    const dir = join(root, name);
    mkdirSync(dir);
    make(join(dir, "tokenizer.json"));
    assert.equal(await loads(dir), code, name);
    // the path itself: a FIFO or device is no tokenizer.json file
    if (name !== "big") assert.equal(await loads(join(dir, "tokenizer.json")), "DT_TOKENIZER_INVALID", `${name} as a path`);
    const cli = await runCli(["replay", repoPath("data", "tau-bench-airline-20.jsonl"), "--tokenizer", dir, "--out", join(root, `${name}.jsonl`)], { input: "", timeoutMs: 30_000 });
    assert.equal(cli.code, 1, `${name}: ${cli.stderr}`);
    assert.match(cli.stderr, new RegExp(code));
    await stillLoads();
  }
});

/** A copy of Qwen3's tokenizer.json changed by `edit`, in its own directory. */
function variant(name: string, edit: (j: Record<string, unknown>) => void): string {
  const j = structuredClone(QWEN);
  edit(j);
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "tokenizer.json"), JSON.stringify(j));
  return dir;
}

/** A small tokenizer.json around `model` (Whitespace pre-tokenizer). */
function small(name: string, model: unknown): string {
  return variant(name, (j) => {
    for (const k of Object.keys(j)) delete j[k];
    Object.assign(j, { version: "1.0", truncation: null, padding: null, added_tokens: [], normalizer: null, pre_tokenizer: { type: "Whitespace" }, post_processor: null, decoder: null, model });
  });
}

async function rust(dir: string): Promise<number[] | "refused"> {
  try {
    const t = Tokenizer.fromString(readFileSync(join(dir, "tokenizer.json"), "utf8"));
    return (await t.encode("a\u0000b hi there", null, { addSpecialTokens: false })).getIds();
  } catch {
    return "refused";
  }
}

test("tokenizer.json is refused exactly where the Rust binding refuses it; what Rust loads answers as Rust", async () => {
  // "Ā" is the byte 0x00 of the byte-level alphabet (in no merge); "Ġ" the space (in many)
  const byteless = (j: Record<string, unknown>, byte: string) => {
    delete (j.model as { vocab: Record<string, number> }).vocab[byte];
  };
  const cases: Array<[string, string]> = [
    [variant("added-id-1e12", (j) => ((j.added_tokens as Array<{ id: number }>)[0]!.id = 1e12)), "DT_TOKENIZER_INVALID"],
    [variant("added-id-2^32", (j) => ((j.added_tokens as Array<{ id: number }>)[0]!.id = 2 ** 32)), "DT_TOKENIZER_INVALID"],
    [variant("vocab-id-2^32", (j) => ((j.model as { vocab: Record<string, number> }).vocab["!"] = 2 ** 32)), "DT_TOKENIZER_INVALID"],
    [variant("type-wordpiece", (j) => ((j.model as { type: string }).type = "WordPiece")), "DT_TOKENIZER_INVALID"],
    [variant("type-wordlevel", (j) => ((j.model as { type: string }).type = "WordLevel")), "DT_TOKENIZER_INVALID"],
    [variant("type-unknown", (j) => ((j.model as { type: string }).type = "Nonsense")), "DT_TOKENIZER_INVALID"],
    [variant("byteless-space", (j) => byteless(j, "Ġ")), "DT_TOKENIZER_INVALID"],
    [small("wordpiece-no-prefix", { type: "WordPiece", vocab: { a: 0, "[UNK]": 1 }, unk_token: "[UNK]" }), "DT_TOKENIZER_INVALID"],
    [small("wordlevel-no-unk", { type: "WordLevel", vocab: { a: 0 } }), "DT_TOKENIZER_INVALID"],
    [small("unigram-unk-out", { type: "Unigram", vocab: [["a", -1]], unk_id: 5 }), "DT_TOKENIZER_INVALID"],
    [small("unigram-map", { type: "Unigram", vocab: { a: 0 } }), "DT_TOKENIZER_INVALID"],
    [variant("byteless-nul", (j) => byteless(j, "Ā")), "loads"],
    [small("wordpiece-ok", { type: "WordPiece", vocab: { a: 0, "[UNK]": 1, "##b": 2 }, unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100 }), "loads"],
  ];
  for (const [dir, want] of cases) {
    const oracle = await rust(dir);
    assert.equal(oracle === "refused" ? "DT_TOKENIZER_INVALID" : "loads", want, `the Rust binding on ${dir}`);
    const got = await loads(dir);
    if (want === "loads") {
      assert.ok(typeof got !== "string", `${dir}: ${String(got)}`);
      assert.deepEqual(Array.from(got.encodeText("a\u0000b hi there")), oracle, dir);
    } else assert.equal(got, want, dir);
    await stillLoads();
  }
});

test("a BPE unknown token missing from the vocabulary: loads as in Rust, and an encode that needs it fails coded (Rust fails it too)", async () => {
  const dir = small("bpe-unk-missing", { type: "BPE", vocab: { a: 0, b: 1 }, merges: [], unk_token: "[UNK]" });
  const dt = await loads(dir);
  assert.ok(typeof dt !== "string", String(dt));
  assert.deepEqual(Array.from(dt.encodeText("a b")), [0, 1]);
  assert.throws(() => dt.encodeText("a c"), { code: "DT_TOKENIZE_FAILED" });
  const t = Tokenizer.fromString(readFileSync(join(dir, "tokenizer.json"), "utf8"));
  assert.deepEqual((await t.encode("a b", null, { addSpecialTokens: false })).getIds(), [0, 1]);
  await assert.rejects(t.encode("a c", null, { addSpecialTokens: false }));
  assert.equal(dt.countText("b a"), 2);
});
