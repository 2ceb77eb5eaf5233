/**
 * A tokenizer.json's added tokens load as the Rust crate loads them (the npm `tokenizers` binding
 * is the oracle): the `id` the file writes is not read — each token takes its content's id in the
 * model vocabulary or among earlier added tokens, else the next id past the vocabulary — empty
 * contents and exact repeats are skipped, a later token on a taken id replaces the earlier, every
 * flag must be present, and unknown top-level fields or versions are refused. Files the crate
 * wrote load unchanged; a file whose ids differ loads with Rust's ids and a
 * DELTATOK_ADDED_TOKEN_ID warning.
 *
 * The fixture is Qwen3's tokenizer.json cut to its first 2,000 tokens (and the merges among
 * them), so each variant loads in milliseconds; its added tokens then sit past the cut, at ids
 * the file does not write.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { Deltatok } from "../src/api/deltatok.js";
import { modelsDir } from "./helpers/tokenizers.js";

interface RustTokenizer {
  encode(t: string, p: null, o: { addSpecialTokens: boolean }): Promise<{ getIds(): number[] }>;
}
const { Tokenizer } = createRequire(import.meta.url)("tokenizers") as { Tokenizer: { fromString(s: string): RustTokenizer } };
const root = mkdtempSync(join(tmpdir(), "dt-added-ids-"));

type Json = Record<string, unknown>;
interface Added {
  id: number;
  content: string;
  special: boolean;
  lstrip: boolean;
  rstrip: boolean;
  single_word: boolean;
  normalized: boolean;
}

const FULL = JSON.parse(readFileSync(join(modelsDir("qwen3"), "tokenizer.json"), "utf8")) as Json;
const CUT = 2000;
/** Qwen3 with the tokens of id < CUT and the merges among them; added tokens as the file writes them. */
const SMALL: Json = (() => {
  const model = FULL.model as { vocab: Record<string, number>; merges: Array<[string, string] | string> };
  const vocab = Object.fromEntries(Object.entries(model.vocab).filter(([, id]) => id < CUT));
  const merges = model.merges.filter((m) => {
    const [a, b] = typeof m === "string" ? (m.split(" ") as [string, string]) : m;
    return Object.hasOwn(vocab, a) && Object.hasOwn(vocab, b) && Object.hasOwn(vocab, a + b);
  });
  return { ...FULL, model: { ...(FULL.model as Json), vocab, merges } };
})();

const TEXT = "a hi <|im_start|><|endoftext|> x <|im_end|>hi zzzq\u0000 there";

function variant(name: string, edit: (j: Json, added: Added[]) => void): string {
  const j = structuredClone(SMALL);
  edit(j, j.added_tokens as Added[]);
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "tokenizer.json"), JSON.stringify(j));
  return dir;
}

async function rust(dir: string): Promise<number[] | "refused"> {
  try {
    const t = Tokenizer.fromString(readFileSync(join(dir, "tokenizer.json"), "utf8"));
    return Array.from((await t.encode(TEXT, null, { addSpecialTokens: false })).getIds());
  } catch {
    return "refused";
  }
}

async function ours(dir: string): Promise<number[] | string> {
  try {
    const dt = await Deltatok.create({ tokenizer: dir, chatTemplate: "{{ messages[0].content }}" });
    return Array.from(dt.encodeText(TEXT));
  } catch (e) {
    return (e as { code: string }).code;
  }
}

const CASES: Array<[string, (j: Json, added: Added[]) => void]> = [
  ["as written", () => undefined],
  ["ids ignored: a gap", (_j, a) => void (a[0]!.id = 200_000)],
  ["ids ignored: a low id", (_j, a) => void (a[1]!.id = 5)],
  ["ids ignored: two tokens on one id", (_j, a) => void (a[1]!.id = a[0]!.id)],
  ["ids ignored: swapped", (_j, a) => void ([a[1]!.id, a[2]!.id] = [a[2]!.id, a[1]!.id])],
  ["content in the model vocabulary", (_j, a) => void (a[1]!.content = "hi")],
  ["content of another added token, other flags", (_j, a) => void Object.assign(a[1]!, { content: a[0]!.content, lstrip: true })],
  ["an exact repeat", (_j, a) => void a.splice(1, 0, structuredClone(a[0]!))],
  ["an empty content", (_j, a) => void (a[1]!.content = "")],
  ["a vocabulary token sharing an id", (j) => void ((j.model as { vocab: Record<string, number> }).vocab["zzzq"] = 1000)],
  ["a vocabulary with a hole (a byte in no merge)", (j) => void delete (j.model as { vocab: Record<string, number> }).vocab["\u0100"]],
  ["an added content in the vocabulary on a taken id", (j) => void ((j.model as { vocab: Record<string, number> }).vocab["<|im_end|>"] = 6)],
  ...(["special", "lstrip", "rstrip", "single_word", "normalized", "content", "id"] as const).flatMap((f): Array<[string, (j: Json, a: Added[]) => void]> => [
    [`no ${f}`, (_j, a) => void delete (a[2] as Partial<Added>)[f]],
    [`null ${f}`, (_j, a) => void ((a[2] as unknown as Json)[f] = null)],
  ]),
  ["an unknown top-level field", (j) => void (j.bogus = 1)],
  ["version 2.0", (j) => void (j.version = "2.0")],
  ["version as a number", (j) => void (j.version = 1)],
  ["no version", (j) => void delete j.version],
  ["an unknown field in an added token", (_j, a) => void ((a[0] as unknown as Json).bogus = 1)],
];

test("added tokens and top-level fields: refused exactly where the Rust crate refuses, ids as the crate assigns them", async () => {
  for (const [name, edit] of CASES) {
    const dir = variant(name.replace(/[^a-z0-9]+/gi, "-"), edit);
    const want = await rust(dir);
    const got = await ours(dir);
    if (want === "refused") assert.equal(got, "DT_TOKENIZER_INVALID", name);
    else assert.deepEqual(got, want, name);
  }
});

test("a file whose added-token ids differ from the crate's loads with the crate's ids and a DELTATOK_ADDED_TOKEN_ID warning", async () => {
  const warned: string[] = [];
  // warnings are emitted on a later tick: the first test's may still arrive, so only this one's files count
  const dir = variant("warned", () => undefined);
  const onWarning = (w: Error & { code?: string }) => void (w.code === "DELTATOK_ADDED_TOKEN_ID" && (w.message.startsWith(dir) || w.message.includes("qwen3")) && warned.push(w.message));
  process.on("warning", onWarning);
  try {
    // the cut vocabulary: every added token moves from 151643.. to 2000..
    const got = await ours(dir);
    assert.deepEqual(got, await rust(dir));
    assert.ok(Array.isArray(got) && got.includes(CUT + 1), "<|im_start|> is the second token past the vocabulary");
    // the unedited Qwen3 file: its ids are the crate's, no warning
    const full = await Deltatok.create({ tokenizer: "qwen3", chatTemplate: "{{ messages[0].content }}" });
    assert.deepEqual(Array.from(full.encodeText("<|im_start|>")), [151644]);
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.equal(warned.length, 1, warned.join("\n"));
    assert.match(warned[0]!, /"<\|endoftext\|>" 151643 → 2000/);
  } finally {
    process.off("warning", onWarning);
  }
});
