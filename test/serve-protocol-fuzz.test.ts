/**
 * A fast-check fuzz of both sidecar protocols against the real Deltatok: random bytes, random JSON
 * shapes, random envelopes, oversize lines and bodies, random chunking, and random disconnects
 * (an input cut short; HTTP connections ended or reset mid-request). The server never dies, every
 * complete request line or HTTP request gets exactly one answer, every request id comes back
 * once, and a good request answers right after each run. Fixed seed (DELTATOK_FUZZ_SEED
 * overrides); fast-check prints the seed and the shrunk case on failure.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import fc from "fast-check";
import { Deltatok } from "../src/api/deltatok.js";
import { InProcessBackend } from "../src/serve/in-process.js";
import { serve } from "../src/serve/server.js";
import { METHODS } from "../src/serve/protocol.js";
import { TEST_RENDERER } from "./helpers/renderer.js";
import { openSocket, parseResponse, post } from "./helpers/serve.js";

const dt = await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30", renderer: TEST_RENDERER });
const seed = Number(process.env.DELTATOK_FUZZ_SEED ?? 1130);
const LIMIT = 400;

const method = fc.constantFrom<string>(...METHODS, "nope", "");
const message = fc.record(
  { role: fc.oneof(fc.constantFrom("system", "user", "assistant", "tool"), fc.jsonValue({ maxDepth: 1 })), content: fc.oneof(fc.string({ maxLength: 30 }), fc.constant(null), fc.jsonValue({ maxDepth: 2 })) },
  { requiredKeys: [] },
);
const params = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.record(
    {
      messages: fc.oneof(fc.array(message, { maxLength: 4 }), fc.jsonValue({ maxDepth: 2 })),
      text: fc.oneof(fc.string({ maxLength: 40 }), fc.jsonValue({ maxDepth: 1 })),
      message: fc.oneof(message, fc.jsonValue({ maxDepth: 1 })),
      tools: fc.jsonValue({ maxDepth: 2 }),
      chat_template: fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom("{{ messages | length }}", "{% for m in messages %}{{ m.content }}{% endfor %}", "{{ raise_exception('no') }}")),
      requests: fc.array(fc.record({ method, params: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: [] }), { maxLength: 3 }),
    },
    { requiredKeys: [] },
  ),
);

type Item = { kind: "request"; method: string; params: unknown } | { kind: "big" } | { kind: "bytes"; bytes: Uint8Array } | { kind: "json"; value: unknown } | { kind: "blank"; text: string };
const item: fc.Arbitrary<Item> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ method, params }).map((r) => ({ kind: "request" as const, ...r })) },
  { weight: 1, arbitrary: fc.constant({ kind: "big" as const }) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 40 }).map((b) => ({ kind: "bytes" as const, bytes: b.filter((x) => x !== 10) })) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => ({ kind: "json" as const, value })) },
  { weight: 1, arbitrary: fc.constantFrom("", " ", "\t \r", "\r").map((text) => ({ kind: "blank" as const, text })) },
);

/** The request lines of a stream: their bytes, and the id each carries when it is a request. */
function build(items: Item[], crlf: boolean[]): { stream: Buffer; ids: Array<{ id: number; end: number }> } {
  const parts: Buffer[] = [];
  const ids: Array<{ id: number; end: number }> = [];
  let at = 0;
  items.forEach((it, i) => {
    let b: Buffer;
    if (it.kind === "request") b = Buffer.from(JSON.stringify({ id: i, method: it.method, params: it.params }));
    else if (it.kind === "big") b = Buffer.from(JSON.stringify({ id: i, method: "count_text", params: { text: "x".repeat(LIMIT) } }));
    else if (it.kind === "bytes") b = Buffer.from(it.bytes);
    else if (it.kind === "json") b = Buffer.from(JSON.stringify(it.value) ?? "null");
    else b = Buffer.from(it.text);
    if (it.kind === "request" || it.kind === "big") ids.push({ id: i, end: at + b.length });
    const line = Buffer.concat([b, Buffer.from(crlf[i % crlf.length] === true ? "\r\n" : "\n")]);
    parts.push(line);
    at += line.length;
  });
  return { stream: Buffer.concat(parts), ids };
}

/** How many lines of `stream` are not blank (what the server must answer). */
function nonBlankLines(stream: Buffer): number {
  let n = 0;
  let start = 0;
  for (let i = 0; i <= stream.length; i++) {
    if (i < stream.length && stream[i] !== 10) continue;
    let line = stream.subarray(start, i);
    if (line.length > 0 && line[line.length - 1] === 13) line = line.subarray(0, -1);
    if (!line.every((b) => b === 0x20 || b === 0x09 || b === 0x0d)) n++;
    start = i + 1;
  }
  return n;
}

test("stdio fuzz: every complete line is answered exactly once, every id once, and the server survives", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(item, { maxLength: 14 }), fc.array(fc.boolean(), { minLength: 1, maxLength: 3 }), fc.array(fc.nat(), { maxLength: 6 }), fc.option(fc.nat()), async (items, crlf, cuts, truncate) => {
      const { stream: full, ids } = build(items, crlf);
      // a random disconnect: the input ends early (the cut line still counts as a line)
      const stream = truncate === null ? full : full.subarray(0, truncate % (full.length + 1));
      const input = new PassThrough();
      const output = new PassThrough();
      const server = await serve({ backend: new InProcessBackend(dt), stdio: { input, output }, handleSignals: false, maxRequestBytes: LIMIT });
      let text = "";
      output.setEncoding("utf8").on("data", (d: string) => (text += d));
      const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
      let prev = 0;
      for (const p of [...points, stream.length]) {
        input.write(stream.subarray(prev, p));
        prev = p;
      }
      input.end();
      await server.closed;
      const answers = text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { id: unknown; result?: unknown; error?: { code: string } });
      assert.equal(answers.length, nonBlankLines(stream), "one answer per non-blank line");
      for (const a of answers) assert.ok((a.result === undefined) !== (a.error === undefined), "a result or an error");
      for (const { id, end } of ids) {
        if (end > stream.length) continue; // cut short: its id may be lost with the JSON
        assert.equal(answers.filter((a) => a.id === id).length, 1, `id ${id} answered once`);
      }
    }),
    { seed, numRuns: 150 },
  );
});

const httpPath = fc.constantFrom("/rpc", "/v1/count_text", "/v1/count_prompt", "/v1/batch", "/v1/nope", "/health", "/stats", "/", "/rpc?x=1");
const header = fc.string({ unit: fc.constantFrom(..."abcxyz019 -_;=/.:,"), maxLength: 20 });
const httpRequest = fc.record({
  verb: fc.constantFrom("POST", "POST", "POST", "GET", "PUT", "OPTIONS", "HEAD"),
  path: httpPath,
  host: fc.oneof({ weight: 6, arbitrary: fc.constant("ok") }, fc.constantFrom("evil.example", "", "localhost:1"), header),
  contentType: fc.oneof({ weight: 4, arbitrary: fc.constant("application/json") }, fc.constantFrom("text/plain", "", "application/json; charset=utf-8"), header),
  origin: fc.option(fc.oneof(fc.constantFrom("http://evil.example", "null"), header), { freq: 4 }),
  body: fc.oneof(
    fc.record({ method, params }).map((r) => Buffer.from(JSON.stringify({ id: 1, ...r }))),
    params.map((p) => Buffer.from(JSON.stringify(p) ?? "null")),
    fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b)),
    fc.constant(Buffer.from(JSON.stringify({ id: 2, method: "count_text", params: { text: "y".repeat(LIMIT * 2) } }))),
  ),
  ending: fc.constantFrom("complete", "complete", "complete", "fin", "reset", "garbage"),
  cut: fc.nat(),
  cutInBody: fc.boolean(),
  garbage: fc.uint8Array({ minLength: 1, maxLength: 80 }),
});
type HttpCase = typeof httpRequest extends fc.Arbitrary<infer T> ? T : never;

function requestBytes(c: HttpCase, port: number): { bytes: Buffer; headLength: number } {
  let head = `${c.verb} ${c.path} HTTP/1.1\r\n`;
  if (c.host !== "") head += `Host: ${c.host === "ok" ? `127.0.0.1:${port}` : c.host}\r\n`;
  if (c.contentType !== "") head += `Content-Type: ${c.contentType}\r\n`;
  if (c.origin !== null && c.origin !== "") head += `Origin: ${c.origin}\r\n`;
  head += `Content-Length: ${c.body.length}\r\nConnection: close\r\n\r\n`;
  return { bytes: Buffer.concat([Buffer.from(head), c.body]), headLength: Buffer.byteLength(head) };
}

/** Every response in `data` (a connection that was closed after them). */
function responses(data: Buffer): number[] {
  const out: number[] = [];
  let rest = data;
  for (;;) {
    const r = parseResponse(rest);
    if (r === null) return out;
    out.push(r.status);
    const end = rest.indexOf("\r\n\r\n") + 4 + Number(r.headers["content-length"] ?? 0);
    rest = rest.subarray(end);
  }
}

async function exchange(c: HttpCase, port: number): Promise<void> {
  const s = await openSocket(port);
  let data = Buffer.alloc(0);
  s.on("data", (d: Buffer) => (data = Buffer.concat([data, d])));
  const closed = new Promise<void>((r) => s.on("close", () => r()));
  s.on("error", () => {});
  const { bytes, headLength } = requestBytes(c, port);
  if (c.ending === "complete") {
    s.end(bytes);
    await closed;
    const statuses = responses(data);
    assert.equal(statuses.length, c.verb === "HEAD" ? statuses.length : 1, `one answer to ${c.verb} ${c.path}: got ${statuses.join(",")}`);
    if (c.verb !== "HEAD") assert.ok([200, 400, 401, 403, 404, 405, 413, 415].includes(statuses[0] as number), `status ${statuses[0]}`);
    return;
  }
  if (c.ending === "garbage") {
    s.end(Buffer.from(c.garbage));
    await closed;
    assert.ok(responses(data).length <= 1);
    return;
  }
  // a disconnect partway through the request
  s.write(bytes.subarray(0, c.cutInBody && c.body.length > 0 ? headLength + (c.cut % c.body.length) : c.cut % bytes.length));
  if (c.ending === "fin") {
    s.end();
    await closed;
    assert.ok(responses(data).length <= 1);
  } else {
    await new Promise<void>((r) => s.write("", () => r()));
    s.resetAndDestroy();
  }
}

test("HTTP fuzz: every complete request gets exactly one answer, disconnects cost nothing, the server survives", async () => {
  const server = await serve({ backend: new InProcessBackend(dt), port: 0, handleSignals: false, maxRequestBytes: LIMIT });
  const port = server.port as number;
  await fc.assert(
    fc.asyncProperty(fc.array(httpRequest, { minLength: 1, maxLength: 6 }), async (cases) => {
      await Promise.all(cases.map((c) => exchange(c, port)));
      const r = await post(port, "/rpc", JSON.stringify({ id: "good", method: "count_text", params: { text: "hello world" } }));
      assert.deepEqual(r.json, { id: "good", result: { count: 2 } });
    }),
    { seed, numRuns: 80 },
  );
  await server.close();
});
