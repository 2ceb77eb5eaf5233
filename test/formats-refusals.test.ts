import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { DeltatokError, type ErrorCode } from "../src/errors.js";
import { detectTokenizerFormats, readFormatDirectory } from "../src/load/formats/directory.js";
import { readBoundedFile } from "../src/load/formats/read-bounded.js";
import { MAX_SENTENCEPIECE_MODEL_BYTES, readSentencePieceModel } from "../src/load/formats/sentencepiece-model.js";
import { MAX_TEKKEN_BYTES, readTekken } from "../src/load/formats/tekken.js";
import { MAX_TIKTOKEN_RANK_BYTES, readTiktokenRanks } from "../src/load/formats/tiktoken-ranks.js";
import { rejectsWith } from "./helpers/errors.js";
import { formatFixturePath } from "./helpers/format-fixtures.js";
import { float, int, lengthDelimited, piece, text, tinyModel, varint } from "./helpers/protobuf-writer.js";

function refuses(code: ErrorCode, f: () => unknown, path?: string | RegExp): void {
  assert.throws(f, (e: unknown) => {
    assert.ok(e instanceof DeltatokError, `not a DeltatokError: ${String(e)}`);
    assert.equal(e.code, code, e.message);
    if (typeof path === "string") assert.equal(e.path, path, e.message);
    if (path instanceof RegExp) assert.match(e.path ?? "", path, e.message);
    return true;
  });
}


const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const b64 = (bytes: number[]): string => Buffer.from(bytes).toString("base64");
/** A valid rank file body: the 256 single bytes at ranks 0..255, then `extra` lines. */
function rankFile(extra = "", order?: number[]): string {
  const bytes = order ?? Array.from({ length: 256 }, (_, i) => i);
  return bytes.map((b, r) => `${b64([b])} ${r}\n`).join("") + extra;
}

test("tiktoken rank file: a valid file reads; gaps are allowed unless dense ranks are required", () => {
  const ranks = readTiktokenRanks(enc(rankFile(`${b64([0x61, 0x62])} 300\n`)), "t.tiktoken");
  assert.equal(ranks.size, 257);
  assert.equal(ranks.dense, false);
  refuses("DT_TOKENIZER_INVALID", () => readTiktokenRanks(enc(rankFile(`${b64([0x61, 0x62])} 300\n`)), "t", { dense: true }), "line 257");
  assert.equal(readTiktokenRanks(enc(rankFile(`\r\n${b64([0x61, 0x62])}\t256\r\n\n`)), "t").dense, true);
});

test("tiktoken rank file refusals: duplicate ranks or tokens, bad base64, wrong field counts, bad ranks, a missing byte, empty, too large", () => {
  const ab = b64([0x61, 0x62]);
  refuses("DT_TOKENIZER_INVALID", () => readTiktokenRanks(enc(rankFile(`${ab} 255\n`)), "t"), "line 257");
  refuses("DT_TOKENIZER_INVALID", () => readTiktokenRanks(enc(rankFile(`${b64([0x61])} 256\n`)), "t"), "line 257");
  for (const token of ["YWI", "YW*=", "Y===", "====", "YWI=YWI=", "YWJj\u00e9"]) {
    refuses("DT_TOKENIZER_INVALID", () => readTiktokenRanks(enc(rankFile(`${token} 256\n`)), "t"), "line 257");
  }
  for (const line of [`${ab}`, `${ab} 256 7`, `${ab} +256`, `${ab} 2_56`, `${ab} -1`, `${ab} 0x100`, `${ab} 4294967296`, "   "]) {
    refuses("DT_TOKENIZER_INVALID", () => readTiktokenRanks(enc(rankFile(`${line}\n`)), "t"), "line 257");
  }
  refuses("DT_TOKENIZER_INVALID", () => readTiktokenRanks(enc(rankFile("", Array.from({ length: 255 }, (_, i) => i))), "t"));
  refuses("DT_TOKENIZER_INVALID", () => readTiktokenRanks(enc(""), "t"));
  refuses("DT_TOKENIZER_INVALID", () => readTiktokenRanks(enc("\n\n"), "t"));
  refuses("DT_TOKENIZER_TOO_LARGE", () => readTiktokenRanks({ length: MAX_TIKTOKEN_RANK_BYTES + 1 } as Uint8Array, "t"));
});

test("SentencePiece model refusals: empty, truncated, malformed wire data, invalid pieces, unsupported model types, broken charsmaps", () => {
  assert.equal(readSentencePieceModel(tinyModel(), "m").pieces.length, 7);
  const good = readFileSync(formatFixturePath("sentencepiece", "unigram-identity.model"));
  refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(new Uint8Array(0), "m"));
  // Cut inside a piece (its length says more bytes follow), inside the trainer spec, mid-varint.
  for (const cut of [5, 101, 1000, good.length - 3]) {
    refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(good.subarray(0, cut), "m"));
  }
  refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(enc('{"model": "not protobuf"}'), "m"));
  refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(Uint8Array.from([0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]), "m"));
  refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(Uint8Array.from([...int(1, 5)]), "m")); // pieces as a varint
  refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(Uint8Array.from([0x0f]), "m")); // wire type 7
  refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(Uint8Array.from([...tinyModel(), ...lengthDelimited(1, [...float(2, 1)].slice(0, 3))]), "m"));
  // Pieces that sentencepiece refuses to load.
  const base: Array<[string, number, number]> = [["<unk>", 0, 2], ["a", -1, 1]];
  refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(tinyModel({ pieces: [["a", -1, 1], ["b", -1, 1]] }), "m"), "pieces");
  refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(tinyModel({ pieces: [...base, ["<unk2>", 0, 2]] }), "m"), "pieces[2].type");
  refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(tinyModel({ pieces: [...base, ["<unk>", 0, 3]] }), "m"), "pieces[2].piece");
  refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(tinyModel({ pieces: [...base, ["a", -2, 1]] }), "m"), "pieces[2].piece");
  refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(tinyModel({ pieces: [...base, ["", -2, 1]] }), "m"), "pieces[2].piece");
  refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(tinyModel({ pieces: [...base, ["<0x41>", 0, 6]] }), "m"), "pieces[2].type");
  refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(tinyModel({ byteFallback: true, pieces: [...base, ["<0x41>", 0, 6]] }), "m"), "pieces");
  refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(tinyModel({ byteFallback: true, pieces: [...base, ["<0x4g>", 0, 6]] }), "m"), "pieces[2].piece");
  refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(tinyModel({ pieces: [["<unk>", 0, 2], ["<s>", 0, 3]] }), "m"), "pieces");
  refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(Uint8Array.from([...piece("<unk>", 0, 2), ...lengthDelimited(1, [...text(1, "a"), ...[0x12, 0x01, 0xff]])]), "m"));
  refuses("DT_TOKENIZER_UNSUPPORTED", () => readSentencePieceModel(tinyModel({ modelType: 3 }), "m"), "trainer_spec.model_type");
  refuses("DT_TOKENIZER_UNSUPPORTED", () => readSentencePieceModel(tinyModel({ modelType: 4 }), "m"), "trainer_spec.model_type");
  refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(tinyModel({ normalizer: lengthDelimited(2, [1, 0, 0]) }), "m"), "normalizer_spec.precompiled_charsmap");
  refuses("DT_TOKENIZER_INVALID", () => readSentencePieceModel(tinyModel({ normalizer: lengthDelimited(2, [0xff, 0, 0, 0, 1, 2, 3, 4]) }), "m"), "normalizer_spec.precompiled_charsmap");
  refuses("DT_TOKENIZER_TOO_LARGE", () => readSentencePieceModel({ length: MAX_SENTENCEPIECE_MODEL_BYTES + 1 } as Uint8Array, "m"));
  // proto2: an enum value the schema does not know leaves the default (NORMAL), as sentencepiece's runtime does.
  assert.equal(readSentencePieceModel(tinyModel({ pieces: [...base, ["b", -1, 9]] }), "m").types[2], 1);
  // Unknown fields, groups and later scalar occurrences are protobuf, not errors.
  const extra = Uint8Array.from([...tinyModel(), ...int(99, 7), ...varint((100 << 3) | 3), ...int(1, 1), ...varint((100 << 3) | 4), ...lengthDelimited(2, int(35, 0))]);
  assert.equal(readSentencePieceModel(extra, "m").pieces.length, 7);
});

function tekken(over: Record<string, unknown> = {}, config: Record<string, unknown> = {}): Uint8Array {
  const vocab = Array.from({ length: 258 }, (_, i) => ({
    rank: i,
    token_bytes: i < 256 ? b64([i]) : b64(i === 256 ? [0x61, 0x62] : [0x61, 0x62, 0x63]),
    token_str: null,
  }));
  return enc(
    JSON.stringify({
      config: { pattern: "\\S+|\\s+", default_vocab_size: 10 + 258, default_num_special_tokens: 10, version: "v7", ...config },
      vocab,
      special_tokens: [
        { rank: 0, token_str: "<unk>", is_control: true },
        { rank: 1, token_str: "<s>", is_control: true },
        { rank: 2, token_str: "</s>", is_control: true },
      ],
      ...over,
    }),
  );
}

test("tekken.json: a valid file reads; refusals name the field", () => {
  const model = readTekken(tekken(), "tekken.json");
  assert.equal(model.numSpecialTokens, 10);
  assert.equal(model.specialTokens[9]?.text, "<SPECIAL_9>");
  assert.equal(model.ranks.size, 258);
  assert.equal(readTekken(tekken({}, { default_vocab_size: 10 + 257 }), "t").ranks.size, 257);
  const v3 = readTekken(tekken({ special_tokens: undefined }, { version: "v3", default_num_special_tokens: 30, default_vocab_size: 30 + 258 }), "t");
  assert.deepEqual([v3.specialTokens[3]?.text, v3.specialTokens[19]?.text, v3.specialTokens[20]?.text], ["[INST]", "[TOOL_CONTENT]", "<SPECIAL_20>"]);
  refuses("DT_TOKENIZER_INVALID", () => readTekken(tekken({ special_tokens: undefined }, { version: "v3" }), "t"), "special_tokens");
  refuses("DT_TOKENIZER_UNSUPPORTED", () => readTekken(tekken({}, { version: "v99" }), "t"), "config.version");
  refuses("DT_TOKENIZER_INVALID", () => readTekken(tekken({ special_tokens: undefined }, { version: "v11" }), "t"), "special_tokens");
  refuses("DT_TOKENIZER_INVALID", () => readTekken(tekken({}, { default_vocab_size: 10 + 259 }), "t"), "config.default_vocab_size");
  refuses("DT_TOKENIZER_INVALID", () => readTekken(tekken({}, { default_vocab_size: 10 + 200 }), "t"), "config.default_vocab_size");
  refuses("DT_TOKENIZER_INVALID", () => readTekken(tekken({}, { default_num_special_tokens: 2, default_vocab_size: 2 + 258 }), "t"), "special_tokens");
  refuses("DT_TOKENIZER_INVALID", () => readTekken(tekken({}, { pattern: 3 }), "t"), "config.pattern");
  refuses("DT_TOKENIZER_INVALID", () => readTekken(tekken({ special_tokens: [{ rank: 1, token_str: "<unk>" }] }), "t"), "special_tokens[0].rank");
  refuses("DT_TOKENIZER_INVALID", () => readTekken(tekken({ special_tokens: [{ rank: 0, token_str: "<SPECIAL_5>" }] }), "t"), /special_tokens\[5\]/);
  const vocab = JSON.parse(new TextDecoder().decode(tekken())).vocab as Array<Record<string, unknown>>;
  const withVocab = (f: (v: Array<Record<string, unknown>>) => void): Uint8Array => {
    const copy = structuredClone(vocab);
    f(copy);
    return tekken({ vocab: copy });
  };
  refuses("DT_TOKENIZER_INVALID", () => readTekken(withVocab((v) => { (v[257] as Record<string, unknown>).rank = 7; }), "t"), "vocab[257].rank");
  refuses("DT_TOKENIZER_INVALID", () => readTekken(withVocab((v) => { (v[3] as Record<string, unknown>).token_bytes = b64([4]); }), "t"), "vocab[3].token_bytes");
  refuses("DT_TOKENIZER_INVALID", () => readTekken(withVocab((v) => { (v[257] as Record<string, unknown>).token_bytes = "!!"; }), "t"), "vocab[257].token_bytes");
  refuses("DT_TOKENIZER_INVALID", () => readTekken(withVocab((v) => { (v[257] as Record<string, unknown>).token_bytes = b64([0x61, 0x62]); }), "t"), "vocab[257]");
  refuses("DT_TOKENIZER_INVALID", () => readTekken(withVocab((v) => { (v[10] as Record<string, unknown>).extra = 1; }), "t"), "vocab[10]");
  refuses("DT_TOKENIZER_INVALID", () => readTekken(enc("{not json"), "t"));
  refuses("DT_TOKENIZER_INVALID", () => readTekken(enc("[]"), "t"), "(root)");
  refuses("DT_TOKENIZER_TOO_LARGE", () => readTekken({ length: MAX_TEKKEN_BYTES + 1 } as Uint8Array, "t"));
});

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "deltatok-formats-"));
}

test("directories: precedence (tokenizer.json, tekken.json, tiktoken, SentencePiece), prefer, sniffing tokenizer.model, ambiguity and absence", async () => {
  const dir = tempDir();
  try {
    await rejectsWith(detectTokenizerFormats(dir), "DT_TOKENIZER_NOT_FOUND");
    await rejectsWith(detectTokenizerFormats(join(dir, "missing")), "DT_TOKENIZER_NOT_FOUND");
    copyFileSync(formatFixturePath("sentencepiece", "unigram-identity.model"), join(dir, "tokenizer.model"));
    const sp = await readFormatDirectory(dir);
    assert.equal(sp.format, "sentencepiece");
    writeFileSync(join(dir, "tekken.json"), tekken());
    assert.equal((await detectTokenizerFormats(dir)).chosen.format, "tekken");
    assert.equal((await detectTokenizerFormats(dir, { prefer: "sentencepiece" })).chosen.format, "sentencepiece");
    writeFileSync(join(dir, "tokenizer.json"), "{}");
    const all = await detectTokenizerFormats(dir);
    assert.deepEqual(all.candidates.map((c) => c.format), ["tokenizer.json", "tekken", "sentencepiece"]);
    assert.equal((await readFormatDirectory(dir)).format, "tokenizer.json");
    assert.equal((await readFormatDirectory(dir, { prefer: "tekken" })).format, "tekken");
    await rejectsWith(detectTokenizerFormats(dir, { prefer: "tiktoken" }), "DT_TOKENIZER_NOT_FOUND");
    writeFileSync(join(dir, "tokenizer.model"), "this is neither\n");
    await rejectsWith(detectTokenizerFormats(dir), "DT_TOKENIZER_INVALID");
    writeFileSync(join(dir, "tokenizer.model"), rankFile());
    assert.equal((await detectTokenizerFormats(dir, { prefer: "tiktoken" })).chosen.file, join(dir, "tokenizer.model"));
    writeFileSync(join(dir, "a.tiktoken"), rankFile());
    writeFileSync(join(dir, "b.tiktoken"), rankFile());
    await rejectsWith(detectTokenizerFormats(dir), "DT_TOKENIZER_AMBIGUOUS");
    writeFileSync(join(dir, "tiktoken.model"), rankFile());
    assert.equal((await detectTokenizerFormats(dir, { prefer: "tiktoken" })).chosen.file, join(dir, "tiktoken.model"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("tiktoken directories: a missing pattern is a coded error naming --pattern; the explicit pattern, tokenizer_config.json and tokenization_*.py are used in that order", async () => {
  const dir = tempDir();
  try {
    writeFileSync(join(dir, "vocab.tiktoken"), rankFile());
    await assert.rejects(() => readFormatDirectory(dir), (e: unknown) => {
      assert.ok(e instanceof DeltatokError);
      assert.equal(e.code, "DT_TOKENIZER_PATTERN_MISSING");
      assert.match(e.message, /--pattern/);
      return true;
    });
    const withOption = await readFormatDirectory(dir, { pattern: "\\S+|\\s+" });
    assert.equal(withOption.format === "tiktoken" && withOption.pattern.pattern, "\\S+|\\s+");
    writeFileSync(join(dir, "tokenization_mine.py"), 'PAT_STR = r"""\\w+""" r"|\\s+"\n');
    const fromPy = await readFormatDirectory(dir);
    assert.equal(fromPy.format === "tiktoken" && fromPy.pattern.pattern, "\\w+|\\s+");
    writeFileSync(join(dir, "tokenization_other.py"), 'pat_str = "\\\\d+"\n');
    await rejectsWith(readFormatDirectory(dir), "DT_TOKENIZER_AMBIGUOUS");
    writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify({ pat_str: "[a-z]+|." }));
    const fromConfig = await readFormatDirectory(dir);
    assert.equal(fromConfig.format === "tiktoken" && fromConfig.pattern.pattern, "[a-z]+|.");
    assert.equal(fromConfig.format === "tiktoken" && fromConfig.pattern.source, "tokenizer_config.json pat_str");
    writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify({ pat_str: 7 }));
    await rejectsWith(readFormatDirectory(dir), "DT_TOKENIZER_INVALID");
    assert.equal((await readFormatDirectory(dir, { pattern: "x" })).format, "tiktoken");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("tiktoken directories: a family's special ids may not collide with ranks (a gapped Kimi rank file)", async () => {
  const dir = tempDir();
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "tiktoken.model"), rankFile(`${b64([0x61, 0x62])} 300\n`));
    writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify({ auto_map: { AutoTokenizer: ["tokenization_kimi.TikTokenTokenizer", null] } }));
    await rejectsWith(readFormatDirectory(dir), "DT_TOKENIZER_INVALID");
    writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify({ added_tokens_decoder: { x: { content: "a" } } }));
    await rejectsWith(readFormatDirectory(dir, { pattern: "." }), "DT_TOKENIZER_INVALID");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("bounded reads: the size is checked before reading; missing files and directories are coded", async () => {
  const dir = tempDir();
  try {
    writeFileSync(join(dir, "f"), "0123456789");
    assert.equal((await readBoundedFile(join(dir, "f"), 10, "f")).length, 10);
    await rejectsWith(readBoundedFile(join(dir, "f"), 9, "f"), "DT_TOKENIZER_TOO_LARGE");
    await rejectsWith(readBoundedFile(join(dir, "missing"), 9, "f"), "DT_TOKENIZER_NOT_FOUND");
    await rejectsWith(readBoundedFile(dir, 9, "f"), "DT_TOKENIZER_INVALID");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
