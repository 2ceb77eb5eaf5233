// Issue 17: per-request ISL latency along one growing conversation (the incremental suite's:
// minisweagent conversations concatenated, Qwen3) when each request passes the same message
// objects, shallow copies ({...m}: the incremental suite's "new message objects"), or deep copies
// (a JSON round trip: new strings too, as a sidecar request parses them), for two builds measured
// alternately in fresh processes; and "sidecar": the whole-history count_prompt request line
// answered by the sidecar's in-process backend (JSON parse included). Medians over turns 5-15 and 195-205 of the per-turn minimum of
// --repeats runs.
//
//   node bench/copies.mjs DIR_A DIR_B [--rounds 2] [--repeats 3] [--corpus FILE]
//
// DIR_A and DIR_B are checkouts with a built dist/. Prints JSON.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const here = fileURLToPath(new URL(".", import.meta.url));
const corpus = opt("--corpus", resolve(here, "../../shared/corpus/trajectories/minisweagent-gemini-3-pro-swebench-verified-top50.jsonl"));

if (args[0] === "--child") {
  const [, dir, kind, repeats] = args;
  const { Deltatok } = await import(`${dir}/dist/src/index.js`);
  const convs = readFileSync(corpus, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
  const sorted = convs.slice().sort((x, y) => y.messages.length - x.messages.length);
  const messages = [];
  let assistants = 0;
  outer: for (const c of sorted) {
    for (const m of c.messages) {
      if (m.role === "system" && messages.length > 0) continue;
      messages.push(m);
      if (m.role === "assistant" && ++assistants > 210) break outer;
    }
  }
  const tools = sorted[0].tools;
  const ks = [];
  messages.forEach((m, i) => m.role === "assistant" && ks.push(i));
  const best = new Map();
  // "sidecar": the request line a client sends (whole history), answered by the sidecar's
  // in-process backend (JSON parse + count_prompt; the client's serialization is not timed)
  const serve = kind === "sidecar" ? { ...(await import(`${dir}/dist/src/serve/in-process.js`)), ...(await import(`${dir}/dist/src/serve/protocol.js`)) } : null;
  for (let rep = 0; rep < Number(repeats); rep++) {
    const dt = await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30" });
    const backend = serve === null ? null : new serve.InProcessBackend(dt);
    const w = sorted[1];
    for (let k = 1; k < Math.min(40, w.messages.length); k++) dt.countPrompt(w.messages.slice(0, k), { tools: w.tools });
    dt.clearCache();
    ks.forEach((k, turn) => {
      if (turn + 1 > 205) return;
      const src = messages.slice(0, k);
      let ms;
      if (backend !== null) {
        const line = JSON.stringify({ id: turn, method: "count_prompt", params: { messages: src, tools } });
        const t0 = performance.now();
        serve.handleLine(backend, line).then((r) => {
          if (r.error !== undefined) throw new Error(JSON.stringify(r.error));
        });
        ms = performance.now() - t0; // handleLine answers synchronously inside (in-process backend)
      } else {
        const msgs = kind === "same" ? src : kind === "shallow" ? src.map((m) => ({ ...m })) : JSON.parse(JSON.stringify(src));
        const t0 = performance.now();
        dt.countPrompt(msgs, { tools });
        ms = performance.now() - t0;
      }
      const b = best.get(turn + 1);
      if (b === undefined || ms < b) best.set(turn + 1, ms);
    });
  }
  const med = (lo, hi) => {
    const xs = [...best].filter(([t]) => t >= lo && t <= hi).map(([, v]) => v).sort((a, b) => a - b);
    return xs[Math.floor(xs.length / 2)];
  };
  process.stdout.write(JSON.stringify({ turn_10: med(5, 15), turn_200: med(195, 205) }));
  process.exit(0);
}

const [a, b] = args.filter((x, i) => !x.startsWith("--") && !(i > 0 && args[i - 1]?.startsWith("--")));
const rounds = Number(opt("--rounds", 2));
const repeats = opt("--repeats", "3");
const out = {};
for (let r = 0; r < rounds; r++) {
  for (const kind of ["same", "shallow", "json", "sidecar"]) {
    for (const dir of [a, b]) {
      const res = JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), "--child", resolve(dir), kind, repeats, "--corpus", corpus], { encoding: "utf8", maxBuffer: 1 << 24 }));
      const key = `${kind} ${dir === a ? "A" : "B"}`;
      (out[key] ??= []).push({ ...res, ratio: Math.round((res.turn_200 / res.turn_10) * 100) / 100 });
    }
  }
}
const r3 = (x) => Math.round(x * 1000) / 1000;
for (const v of Object.values(out)) for (const x of v) { x.turn_10 = r3(x.turn_10); x.turn_200 = r3(x.turn_200); }
console.log(JSON.stringify({ A: resolve(a), B: resolve(b), what: "ms per countPrompt at turn ~10 and ~200, per round", results: out }, null, 1));
