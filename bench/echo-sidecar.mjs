// Issue 14: a "recorded-answer" fake of `deltatok serve` over stdio, for measuring what a client in
// another process costs with zero Deltatok work. It answers the n-th request line with the n-th
// recorded answer line and does only what any stdio server must: read the line, JSON.parse it,
// look the answer up by position, write it with one write. No Deltatok, no tokenizer, no
// conversation state: a client that sends the same requests in the same order as the recorded run
// (clients/python/scripts/bench_loop.py does: ids and order are deterministic) gets the same
// answers, so its totals show whether the recording matched. A request whose id differs from the
// recorded answer's id is answered with an error line instead (the sequence drifted).
//
//   # record the request and answer lines of one real run (two tees around the real sidecar):
//   printf '#!/bin/sh\ntee /tmp/req.jsonl | node %s/dist/src/cli/main.js "$@" | tee /tmp/ans.jsonl\n' "$PWD" > /tmp/tee.sh
//   chmod +x /tmp/tee.sh
//   DELTATOK_CMD=/tmp/tee.sh python3 clients/python/scripts/bench_loop.py CORPUS --warm 20
//   # the unmodified client against the fake (the client appends `serve ARGS`, ignored here):
//   DELTATOK_CMD="node bench/echo-sidecar.mjs /tmp/ans.jsonl" python3 clients/python/scripts/bench_loop.py CORPUS --warm 20
//
//   # the same with a Deltatok that costs exactly N µs a request (a busy wait before each answer
//   # of an encode_prompt line: the library's own per-request time, so the loop shows the ratio
//   # a client could reach if the sidecar added nothing to the Deltatok and the Deltatok nothing to it):
//   DELTATOK_CMD="node bench/echo-sidecar.mjs /tmp/ans.jsonl --spin-us 480" python3 ...
//
// bench/python-floor.mjs runs it alternating with the real sidecar, the library and
// bench/min_client.py. Answers are held as UTF-8 buffers with their newline, written by
// bench/stdio-lines.mjs (fs.writeSync on fd 1; process.stdout is never touched).
import { readFileSync } from "node:fs";
import { serveLines } from "./stdio-lines.mjs";

const file = process.argv[2];
if (file === undefined) throw new Error("usage: node bench/echo-sidecar.mjs ANSWERS.jsonl [ignored args]");
const si = process.argv.indexOf("--spin-us");
const spinMs = si > 0 ? Number(process.argv[si + 1]) / 1000 : 0;
if (!(spinMs >= 0)) throw new Error("--spin-us takes a number of microseconds");
const lines = readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0);
const answers = lines.map((l) => Buffer.from(l + "\n", "utf8"));
const ids = lines.map((l) => JSON.parse(l).id);
// only prompt answers carry ids: the Deltatok's work is theirs (tokenizer_info, count_text, stats get none)
const spins = lines.map((l) => spinMs > 0 && l.includes('"ids_from"'));

let pos = 0;
serveLines((req) => {
  const n = pos++;
  if (n < answers.length && req.id === ids[n]) {
    if (spins[n]) for (const until = performance.now() + spinMs; performance.now() < until; );
    return answers[n];
  }
  return JSON.stringify({ id: req.id, error: { code: "DT_INTERNAL", message: `echo-sidecar: request ${n} has id ${req.id}, the recording ${ids[n]}` } }) + "\n";
});
