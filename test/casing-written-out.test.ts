/**
 * One casing rule for what deltatok writes out (README "Field names"): every key of every JSON
 * the CLI writes (records, summaries, shard headers and trailers, check-template's answer, serve's
 * stderr lines) and of every sidecar answer (each method of src/serve/protocol.ts, over stdio and
 * HTTP) is snake_case — no key matches /[a-z][A-Z]/. Keys that are a caller's data (the template
 * kwargs recorded in a shard header) are exempt by path. Also: a rollout logprob of -0.0 is
 * written `-0.0` in the JSONL record and the sidecar answer, and Python's json.loads reads a
 * negative zero back.
 *
 * One small corpus (one short conversation with sampled ids, one tau-bench conversation), one
 * sidecar process and one replay with a worker (so the pool's answers are covered), eight CLI runs
 * (one a merge, which loads no tokenizer).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { METHODS } from "../src/serve/protocol.js";
import { jsonl, runCli } from "./helpers/cli.js";
import { repoPath } from "./helpers/paths.js";

const CAMEL = /[a-z][A-Z]/;
/** Paths (dot-joined, arrays as []) whose keys are a caller's data, not ours. */
const DATA_PATHS = [/(^|\.)settings\.chat_template_kwargs$/];

/** Every key that breaks the rule in `v`, as `where: path`. */
function camelKeys(v: unknown, where: string, path = "", out: string[] = []): string[] {
  if (Array.isArray(v)) {
    for (const x of v) camelKeys(x, where, `${path}[]`, out);
  } else if (typeof v === "object" && v !== null) {
    if (DATA_PATHS.some((re) => re.test(path))) return out;
    for (const [k, x] of Object.entries(v)) {
      const p = path === "" ? k : `${path}.${k}`;
      if (CAMEL.test(k)) out.push(`${where}: ${p}`);
      camelKeys(x, where, p, out);
    }
  }
  return out;
}

const dir = mkdtempSync(join(tmpdir(), "deltatok-casing-"));
const tau = readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n")[1] as string;
const SHORT = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "hi" },
];
const KWARGS = '{"myFlag": true}'; // a caller's kwarg: data, recorded in shard headers as sent

/** A sidecar on stdio (and HTTP on a free port), with one worker thread. */
function startSidecar() {
  const main = fileURLToPath(new URL("../src/cli/main.js", import.meta.url));
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const child = spawn(process.execPath, [main, "serve", "--workers", "1", "--port", "0", "--date", "2026-11-30"], { env, stdio: ["pipe", "pipe", "pipe"] });
  const answers = new Map<number, (line: string) => void>();
  createInterface({ input: child.stdout }).on("line", (line) => {
    const id = (JSON.parse(line) as { id: number }).id;
    answers.get(id)?.(line);
    answers.delete(id);
  });
  const stderrLines: string[] = [];
  let onListening: ((port: number) => void) | undefined;
  const listening = new Promise<number>((r) => (onListening = r));
  createInterface({ input: child.stderr }).on("line", (line) => {
    stderrLines.push(line);
    const m = /"listening":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(line);
    if (m !== null) onListening?.(Number(m[1]));
  });
  let done = false;
  const exited = new Promise<number | null>((r) =>
    child.on("close", (code) => {
      done = true;
      r(code);
    }),
  );
  let next = 1;
  /** Sends one request whose params are `paramsText`; resolves with the answer line's text. */
  const callText = (method: string, paramsText: string): Promise<string> => {
    const id = next++;
    const p = new Promise<string>((r) => answers.set(id, r));
    child.stdin.write(`{"id":${id},"method":${JSON.stringify(method)},"params":${paramsText}}\n`);
    return p;
  };
  const call = (method: string, params: Record<string, unknown>): Promise<string> => callText(method, JSON.stringify(params));
  return { call, callText, listening, stderrLines, exited, end: () => child.stdin.end(), kill: () => void (done || child.kill("SIGKILL")) };
}

function http(port: number, method: "GET" | "POST", path: string, body?: unknown): Promise<string> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request({ host: "127.0.0.1", port, method, path, headers: data === undefined ? {} : { "content-type": "application/json" } }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (d: string) => (text += d));
      res.on("end", () => resolve(text));
    });
    req.on("error", reject);
    req.end(data);
  });
}

test("every key written out is snake_case: sidecar answers of every method and the CLI's JSON; -0.0 logprobs kept", async (t) => {
  const bad: string[] = [];
  const sc = startSidecar();
  t.after(sc.kill); // a failed assertion must not leave the sidecar (and this test) running
  const answer = async (method: string, params: Record<string, unknown>, seen: Set<string>): Promise<Record<string, unknown>> => {
    const line = await sc.call(method, params);
    seen.add(method);
    const v = JSON.parse(line) as Record<string, unknown>;
    camelKeys(v, `serve ${method}`, "", bad);
    return v;
  };
  const seen = new Set<string>();
  const result = async (method: string, params: Record<string, unknown>) => {
    const v = await answer(method, params, seen);
    assert.ok(v.result !== undefined, `${method}: ${JSON.stringify(v.error)}`);
    return v.result as Record<string, unknown>;
  };

  // the short conversation's completion as sampled ids, logprobs with -0.0 among them
  const first = await result("tokenize_rollout", { messages: [...SHORT, { role: "assistant", content: "Hello there" }] });
  const seq = (first.sequences as Array<{ ids: number[]; turns: Array<{ completion: [number, number] }> }>)[0];
  const [c0, c1] = seq?.turns[0]?.completion ?? [0, 0];
  const sampledIds = seq?.ids.slice(c0, c1) ?? [];
  assert.ok(sampledIds.length >= 3);
  const logprobs = sampledIds.map((_x, i) => (i % 2 === 0 ? -0 : -i / 4));
  const sampled = [...SHORT, { role: "assistant", content: "Hello there", sampled_ids: sampledIds, sampled_logprobs: logprobs }];
  // JSON.stringify writes -0 as 0: the text spells it -0.0, as a Python harness's json.dumps does
  const messagesText = JSON.stringify(sampled).replace(/"sampled_logprobs":\[([^\]]*)\]/, (_m, xs: string) => `"sampled_logprobs":[${xs.split(",").map((x) => (x === "0" ? "-0.0" : x)).join(",")}]`);
  assert.match(messagesText, /"sampled_logprobs":\[-0\.0,/);
  const corpus = join(dir, "corpus.jsonl");
  writeFileSync(corpus, `{"id":"short","messages":${messagesText}}\n${tau}\n`);
  // the sidecar's answer keeps each -0.0
  const rolloutAnswer = await sc.callText("tokenize_rollout", `{"messages":${messagesText}}`);
  camelKeys(JSON.parse(rolloutAnswer), "serve tokenize_rollout", "", bad);

  const port = await sc.listening;
  const M = JSON.parse(tau) as { messages: Array<Record<string, unknown>>; tools: unknown[] };
  const head = M.messages.slice(0, 3);
  await result("health", {});
  await result("count_prompt", { messages: head, tools: M.tools, conversation_id: "c", state: "s1" });
  await result("encode_prompt", { messages: M.messages.slice(3, 5), tools: M.tools, conversation_id: "c", state: "s2", prefix: { state: "s1", length: 3 }, ids_delta: true });
  await result("count_message", { message: M.messages[2] });
  await result("count_text", { text: "hello" });
  await result("tokenize_trajectory", { messages: head, tools: M.tools });
  await result("encode_text", { text: "hello world" });
  await result("encode_batch", { texts: ["a", "b c"], ids_encoding: "base64" });
  await result("decode", { ids: [9707, 1879] });
  await result("tokenizer_info", {});
  await result("vocab", {});
  await result("render_prompt", { messages: head });
  await result("fits", { messages: head, limit: 10 });
  await result("trim_to_fit", { messages: M.messages, limit: 2000 });
  const tc = await result("text_counter_open", {});
  await result("counter_append", { handle: tc.handle, chunk: "Hello wor" });
  await result("counter_append", { handle: tc.handle, chunk: "ld, again" });
  const finished = await result("counter_finish", { handle: tc.handle });
  assert.ok(typeof finished.stats === "object" && finished.stats !== null && Object.keys(finished.stats).length > 0, "the counter's stats are written");
  const m = await result("message_counter_open", {});
  await result("counter_append", { handle: m.handle, delta: { role: "assistant", content: "Hi" } });
  await result("counter_finish", { handle: m.handle });
  const m2 = await result("message_counter_open", {});
  await result("counter_close", { handle: m2.handle });
  await result("batch", { requests: [{ method: "count_text", params: { text: "x" } }, { method: "stats", params: {} }, { method: "count_prompt", params: { messages: head } }, { method: "nope", params: {} }] });
  const stats = await result("stats", {});
  const err = await answer("count_text", { text: 1 }, seen);
  assert.ok(err.error !== undefined);
  for (const [m, path, body] of [["GET", "/stats"], ["GET", "/health"], ["POST", "/v1/count_text", { text: "x" }], ["POST", "/rpc", { id: 1, method: "stats", params: {} }]] as const) {
    camelKeys(JSON.parse(await http(port, m, path, body)), `HTTP ${path}`, "", bad);
  }
  assert.deepEqual(METHODS.filter((x) => !seen.has(x)), [], "every method of the protocol exercised");
  sc.end();
  assert.equal(await sc.exited, 0);
  const stderrJson = sc.stderrLines.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.ok(stderrJson.some((v) => v.stopped !== undefined), `serve's stop line: ${sc.stderrLines.join("\n")}`);
  for (const v of stderrJson) camelKeys(v, "serve stderr", "", bad);

  // ---- the CLI ----
  const p = (name: string) => join(dir, name);
  const common = ["--date", "2026-11-30"];
  const runs = await Promise.all([
    runCli(["replay", corpus, ...common, "--shard", "0/2", "--chat-template-kwargs", KWARGS, "--out", p("r0.jsonl"), "--summary", p("r0.json")]),
    runCli(["replay", corpus, ...common, "--shard", "1/2", "--chat-template-kwargs", KWARGS, "--workers", "1", "--out", p("r1.jsonl"), "--summary", p("r1.json")]),
  ]);
  for (const r of runs) assert.equal(r.code, 0, r.stderr);
  const more = await Promise.all([
    runCli(["merge", "--out", p("merged.jsonl"), "--summary", p("merged.json"), p("r0.jsonl"), p("r1.jsonl")]),
    runCli(["tokenize", corpus, ...common, "--out", p("t.jsonl"), "--summary", p("t.json")]),
  ]);
  for (const r of more) assert.equal(r.code, 0, r.stderr);
  const last = await Promise.all([
    runCli(["rollout", corpus, ...common, "--out", p("ro.jsonl"), "--summary", p("ro.json")]),
    runCli(["check-template", corpus, ...common, "--no-progress"]),
  ]);
  for (const r of last) assert.equal(r.code, 0, r.stderr);
  const verify = await runCli(["verify", corpus, ...common, "--max-diffs", "3"]);
  assert.equal(verify.code, 0, verify.stderr);

  for (const f of ["r0.jsonl", "r1.jsonl", "merged.jsonl", "t.jsonl", "ro.jsonl"]) {
    for (const rec of jsonl(readFileSync(p(f), "utf8"))) camelKeys(rec, f, "", bad);
  }
  for (const f of ["r0.json", "r1.json", "merged.json", "t.json", "ro.json"]) camelKeys(JSON.parse(readFileSync(p(f), "utf8")), f, "", bad);
  camelKeys(JSON.parse(last[1]?.stdout ?? ""), "check-template", "", bad);
  camelKeys(JSON.parse(verify.stdout), "verify", "", bad);
  assert.deepEqual(bad, [], `camelCase keys written out:\n${bad.join("\n")}`);
  // the exemption is for data: the caller's kwarg is in the shard header as sent
  const header = jsonl(readFileSync(p("r0.jsonl"), "utf8"))[0] as { deltatok_shard: { settings: { chat_template_kwargs: Record<string, unknown> } } };
  assert.deepEqual(header.deltatok_shard.settings.chat_template_kwargs, JSON.parse(KWARGS));
  assert.ok("tokens_reused" in stats && "bytes_held" in stats, `stats keys: ${Object.keys(stats).join(", ")}`);
  // the summaries carry the renamed cache fields
  const r0 = JSON.parse(readFileSync(p("r0.json"), "utf8")) as { cache: Record<string, unknown> };
  assert.ok("tokens_reused" in r0.cache && "render" in r0.cache);

  // a shard of format 2 (camelCase cache stats) is refused, not summed with snake_case ones
  const old = readFileSync(p("r0.jsonl"), "utf8").replace(/^\{"deltatok_shard":\{"version":3,/, '{"deltatok_shard":{"version":2,');
  assert.notEqual(old, readFileSync(p("r0.jsonl"), "utf8"));
  writeFileSync(p("r0-v2.jsonl"), old);
  const refused = await runCli(["merge", "--out", p("m2.jsonl"), p("r0-v2.jsonl"), p("r1.jsonl")]);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /DT_SHARD_INVALID.*shard format 2/);

  // ---- -0.0 logprobs: the JSONL record and the sidecar answer, read back by Python ----
  const rolloutLine = readFileSync(p("ro.jsonl"), "utf8").split("\n").find((l) => l.includes('"id":"short"')) as string;
  const want = logprobs.map((x) => Math.sign(1 / x)); // -1 for every logprob, the -0.0 ones included
  for (const [where, text] of [["rollout JSONL", rolloutLine], ["sidecar answer", rolloutAnswer]] as const) {
    assert.match(text, /"logprobs":\[(null,)+-0\.0,-0\.25,-0\.0/, where);
    const py = spawnSync("python3", ["-c", "import json,math,sys; r=json.loads(sys.stdin.read()); r=r.get('result', r); print(json.dumps([math.copysign(1.0, x) for x in r['sequences'][0]['logprobs'] if x is not None]))"], { input: text, encoding: "utf8" });
    assert.equal(py.status, 0, py.stderr);
    assert.deepEqual(JSON.parse(py.stdout), want, `${where}: Python reads each -0.0 back negative`);
    const js = (JSON.parse(text) as { result?: { sequences: Array<{ logprobs: Array<number | null> }> }; sequences?: Array<{ logprobs: Array<number | null> }> });
    const lp = (js.result ?? js).sequences?.[0]?.logprobs.filter((x): x is number => x !== null);
    assert.deepEqual(lp?.map((x) => Object.is(x, -0)), logprobs.map((x) => Object.is(x, -0)), `${where}: JSON.parse gives -0`);
  }
});
