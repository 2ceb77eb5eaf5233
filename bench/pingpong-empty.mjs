// Issue 14: the empty round trip of a stdio server, from a Node driver (no Python client in the
// way): `count_text "hi"` sent, its answer awaited, 20,000 times after 2,000 warm-up calls;
// prints µs a round trip. With `--echo` it runs a minimal stand-in server instead (read a line,
// JSON.parse, one fs.writeSync of a fixed-shape answer), so the difference between the two is the
// real sidecar's own per-line path for a trivial call.
//
//   npm run build && node bench/pingpong-empty.mjs [--echo] [--tokenizer qwen3]
import { spawn } from "node:child_process";
import { serveLines } from "./stdio-lines.mjs";
import { fileURLToPath } from "node:url";

if (process.argv[2] === "--serve-echo") {
  serveLines((req) => JSON.stringify({ id: req.id, result: { count: 1 } }) + "\n");
} else {
  const echo = process.argv.includes("--echo");
  const ti = process.argv.indexOf("--tokenizer");
  const tokenizer = ti > 0 ? process.argv[ti + 1] : "qwen3";
  const here = fileURLToPath(import.meta.url);
  const cli = fileURLToPath(new URL("../dist/src/cli/main.js", import.meta.url));
  const p = spawn(process.execPath, echo ? [here, "--serve-echo"] : [cli, "serve", "--tokenizer", tokenizer], { stdio: ["pipe", "pipe", "inherit"] });
  let buf = "";
  let resolveLine = () => {};
  p.stdout.setEncoding("utf8");
  p.stdout.on("data", (d) => {
    buf += d;
    for (let k = buf.indexOf("\n"); k >= 0; k = buf.indexOf("\n")) {
      const line = buf.slice(0, k);
      buf = buf.slice(k + 1);
      resolveLine(line);
    }
  });
  const send = (id) =>
    new Promise((r) => {
      resolveLine = r;
      p.stdin.write(JSON.stringify({ id, method: "count_text", params: { text: "hi" } }) + "\n");
    });
  for (let i = 0; i < 2000; i++) await send(i);
  const N = 20000;
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await send(i);
  console.log(JSON.stringify({ server: echo ? "echo" : "deltatok serve", round_trip_us: Math.round(((performance.now() - t0) * 10000) / N) / 10 }));
  p.stdin.end();
}
