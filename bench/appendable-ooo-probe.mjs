// Probe: the appendable BPE against the model's own BPE on every character-boundary prefix of
// seeded random words in 11 scripts. For Llama 3 / gpt-oss (tiktoken ranks converted to every
// split of each token) it counts the words whose BPE uses a token some merge makes out of rank
// order — the case an argument needing rank order would get wrong (src/tokenize/README.md, "Open
// runs"). Prints mismatches (up to 3) and one summary line.
//
//   npm run build && node bench/appendable-ooo-probe.mjs llama3_1 [seed 7] [words 6000]
//
// The merge list itself (every split listed? ordered by the result's id?):
//   (analysed in src/tokenize/README.md, "Open runs": what Llama 3 and gpt-oss refuse and why)
import { AppendableBpe, AppendableIndex } from "../dist/src/encoder/model/appendable-bpe.js";
import { U32List } from "../dist/src/tokenize/encoder.js";
import { rawTokenizer } from "../dist/test/helpers/tokenizers.js";
const name = process.argv[2] ?? "llama3_1";
const pipe = rawTokenizer(name).tokenizer;
const model = pipe.model;
const index = new AppendableIndex(model);
// tokens some merge makes at or below the rank of a merge making one of its parts
const flags = new Uint8Array(model.tables.idLimit);
{
  const p = model.tables.pairs;
  const made = new Int32Array(model.tables.idLimit).fill(-1);
  for (let k = 0; k < p.length; k += 4) if (p[k] >= 0 && p[k + 2] > made[p[k + 3]]) made[p[k + 3]] = p[k + 2];
  for (let k = 0; k < p.length; k += 4) if (p[k] >= 0 && (p[k + 2] <= made[p[k]] || p[k + 2] <= made[p[k + 1]])) flags[p[k + 3]] = 1;
}
const utf8 = new TextEncoder();
const ALPHS = ["etaoinshrdlucmfwypvbgkjqxz", "ETAOINSHRDLU etaoin", "абвгдежзийклмнопрстуфхцчшщъыьэюя", "αβγδεζηθικλμνξοπρστυφχψω", "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生会自能码", "あいうえおかきくけこさしすせそアイウエオカキクケコー", "가나다라마바사아자차카타파하한국어의는을를이가에서고", "ابتثجحخدذرزسشصضطظعغفقكلمنهوي", "अआइईउऊएऐओऔकखगघ", "0123456789", "😀😃😄🎉🚀"];
let x = Number(process.argv[3] ?? 7);
const rnd = (m) => { x = (Math.imul(x, 1103515245) + 12345) >>> 0; return (x >>> 8) % m; };
let prefixes = 0, bad = 0, metFlagged = 0;
for (let trial = 0; trial < Number(process.argv[4] ?? 4000); trial++) {
  const a = [...ALPHS[trial % ALPHS.length]];
  let word = "";
  const n = 1 + rnd(30);
  for (let i = 0; i < n; i++) word += a[rnd(a.length)];
  const bytes = utf8.encode(word);
  const w = new AppendableBpe(index);
  let met = false;
  for (let i = 0; i < bytes.length; i++) {
    const r = w.push(bytes, i, i + 1);
    if (r !== "ok") { console.log("NONE", JSON.stringify(word), i); bad++; break; }
    if (i + 1 < bytes.length && (bytes[i + 1] & 0xc0) === 0x80) continue;
    prefixes++;
    const want = new U32List(); { const sp = new TextDecoder().decode(bytes.subarray(0, i + 1)); model.tokenize(sp, 0, sp.length, want); };
    const wantArr = Array.from(want.toArray ? want.toArray() : want);
    const got = []; w.ids(got);
    for (const id of wantArr) if (flags[id]) met = true;
    if (got.length !== wantArr.length || got.some((v, k) => v !== wantArr[k])) { bad++; if (bad <= 3) console.log("MISMATCH", JSON.stringify(word), i, got, wantArr); break; }
  }
  if (met) metFlagged++;
}
console.log(name, { prefixes, bad, wordsWhoseBpeUsesAFlaggedToken: metFlagged });
