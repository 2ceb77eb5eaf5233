/**
 * Request ids of any JSON number are answered back with the very text they were sent as — past
 * 2^53, with a fraction or exponent, `-0` — and the string "7" as a string, over stdio (the real
 * `deltatok serve` process, which stays alive and answers the next request) and HTTP, through
 * the in-process backend and the pool's raw-params path; an oversize or non-UTF-8 line keeps its
 * id text too.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { Deltatok } from "../src/api/deltatok.js";
import { InProcessBackend } from "../src/serve/in-process.js";
import { serve, type RunningServer } from "../src/serve/server.js";
import { handleLine } from "../src/serve/protocol.js";
import { responseText, WireId } from "../src/serve/wire-id.js";
import type { Backend } from "../src/serve/protocol.js";
import { TEST_RENDERER } from "./helpers/renderer.js";
import { startCli } from "./helpers/cli.js";

const dt = await Deltatok.create({ tokenizer: "qwen3", date: "2026-11-30", renderer: TEST_RENDERER });
const ID_TEXTS = ['"7"', "9007199254740993", "-9007199254740993123", "1.50", "1e2", "-0", "0", "1E+400", "0.1000000000000000055511151231257827", "7"];

/** The id text at the start of an answer line (`{"id":TEXT,`). */
const idText = (line: string) => /^\{"id":([^,}]*)/.exec(line)?.[1];

test("stdio: the real server answers number ids exactly as sent, stays alive, answers the next request", async () => {
  const cli = startCli(["serve", "--renderer", "python"]);
  const lines = ID_TEXTS.map((t, i) => (i % 2 === 0 ? `{"id":${t},"method":"count_text","params":{"text":"hi"}}` : `{"method":"health","params":{},"id":${t}}`));
  cli.child.stdin?.write(lines.join("\n") + "\n");
  await cli.waitFor(() => cli.stdout().split("\n").length > ID_TEXTS.length);
  const got = cli.stdout().trim().split("\n").map(idText).sort();
  assert.deepEqual(got, [...ID_TEXTS].sort());
  for (const l of cli.stdout().trim().split("\n")) assert.ok(!l.includes('"error"'), l);
  // alive: a later request is answered
  cli.child.stdin?.write('{"id":"after","method":"count_text","params":{"text":"hello world"}}\n');
  await cli.waitFor(() => cli.stdout().includes('"after"'));
  assert.match(cli.stdout(), new RegExp(`\\{"id":"after","result":\\{"count":${dt.countText("hello world")}\\}\\}`));
  cli.child.stdin?.end();
  assert.equal((await cli.exited).code, 0);
});

function postRaw(port: number, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method: "POST", path: "/rpc", headers: { "content-type": "application/json" } }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

test("HTTP: number ids come back as sent (200, not DT_INTERNAL), errors too; the server answers after", async () => {
  const server = (await serve({ backend: new InProcessBackend(dt), port: 0, handleSignals: false })) as RunningServer & { port: number };
  for (const t of ID_TEXTS) {
    const ok = await postRaw(server.port, `{"id":${t},"method":"count_text","params":{"text":"hi"}}`);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.text, `{"id":${t},"result":{"count":${dt.countText("hi")}}}`);
    const bad = await postRaw(server.port, `{"id":${t},"method":"nope","params":{}}`);
    assert.equal(idText(bad.text), t);
    assert.match(bad.text, /DT_UNKNOWN_METHOD/);
  }
  const after = await postRaw(server.port, '{"id":"after","method":"health","params":{}}');
  assert.equal(after.status, 200);
  await server.close();
});

test("the raw-params path (a pool backend) and the envelope serializer keep the id text", async () => {
  const raw: Backend = {
    callRaw: async () => ({ count: 1 }),
    call: async () => ({ count: 2 }),
    callMany: async () => [],
    close: async () => undefined,
  };
  for (const t of ID_TEXTS) {
    const r = await handleLine(raw, `{"id":${t},"method":"count_prompt","params":{"messages":[]}}`);
    assert.equal(responseText(r), `{"id":${t},"result":{"count":1}}`);
  }
  assert.equal(responseText({ id: new WireId("1.50") }), '{"id":1.50}');
  assert.equal(responseText({ id: "s", result: 1 } as { id: unknown }), '{"id":"s","result":1}');
});
