// The least a JSON-lines stdio server does, for the benchmarks' stand-in servers
// (bench/echo-sidecar.mjs, bench/pingpong-empty.mjs): read stdin, JSON.parse each line, hand the
// request to `answer`, write what it returns (a Buffer or string ending in "\n") to fd 1 with
// fs.writeSync. process.stdout is never touched, so the pipe stays as the parent made it.
import { writeSync } from "node:fs";

/** Writes the whole buffer (a pipe may take part of it, or none when it is full and non-blocking). */
function writeAll(buf) {
  let off = 0;
  while (off < buf.length) {
    try {
      off += writeSync(1, buf, off);
    } catch (e) {
      if (e.code !== "EAGAIN") throw e;
    }
  }
}

/** Answers every request line of stdin with `answer(request)`. */
export function serveLines(answer) {
  let rest = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk) => {
    const data = rest + chunk;
    let start = 0;
    for (let i = data.indexOf("\n"); i >= 0; i = data.indexOf("\n", start)) {
      const req = JSON.parse(data.slice(start, i));
      start = i + 1;
      const out = answer(req);
      writeAll(typeof out === "string" ? Buffer.from(out, "utf8") : out);
    }
    rest = data.slice(start);
  });
}
