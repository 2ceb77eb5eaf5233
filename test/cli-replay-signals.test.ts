/**
 * The signal contract of the corpus commands, in every mode: SIGTERM (or SIGINT) while the
 * command works stops it between conversations; the output written is a prefix of the full
 * run's, --summary says how far it got (`stopped`), stderr has exactly one notice, and the exit
 * code is 143 (130). A signal after the work is done changes nothing: exit 0, full output.
 *
 * Deterministic: the corpus is a FIFO, fed a few lines and then left open, and the signal is
 * sent once the first record (or, for verify, the first progress line) is seen — the command is
 * then waiting for input it will never get, so only the signal can end it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, writeFileSync, type WriteStream } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli, startCli, jsonl } from "./helpers/cli.js";
import { repoPath } from "./helpers/paths.js";
import { TEST_RENDERER } from "./helpers/renderer.js";

const dir = mkdtempSync(join(tmpdir(), "deltatok-signals-"));
let fifos = 0;
/** A new FIFO, or null where mkfifo is missing (the stop tests are then skipped). */
function fifo(): string | null {
  const path = join(dir, `corpus-${fifos++}.fifo`);
  try {
    execFileSync("mkfifo", [path], { stdio: "ignore" });
    return path;
  } catch {
    return null;
  }
}
const canFifo = process.platform !== "win32" && fifo() !== null;

/** Opens the FIFO for writing (the child opens it for reading) and feeds it `text`, left open. */
function feed(path: string, text: string): WriteStream {
  const w = createWriteStream(path);
  w.on("error", () => undefined); // the child exits with the FIFO still open
  w.write(text);
  return w;
}
const lines = readFileSync(repoPath("data", "tau-bench-airline-20.jsonl"), "utf8").split("\n").filter((l) => l.trim() !== "").slice(0, 3);
/** The lines a stopped run is fed: its output is a prefix of the full run over them. */
const FED = 3;
const fedCorpus = join(dir, "fed.jsonl");
writeFileSync(fedCorpus, lines.slice(0, FED).join("\n") + "\n");
const COMMON = ["--date", "2026-11-30", "--renderer", TEST_RENDERER];

interface Mode {
  name: string;
  args: string[];
  /** verify prints nothing until the end: wait for its first progress line instead. */
  progress?: boolean;
}
const MODES: Mode[] = [
  { name: "replay in process", args: ["replay", "--no-osl"] },
  { name: "replay on 2 workers", args: ["replay", "--no-osl", "--workers", "2"] },
  { name: "render", args: ["render"] },
  { name: "tokenize", args: ["tokenize"] },
  { name: "rollout", args: ["rollout"] },
  { name: "verify", args: ["verify"], progress: true },
];

const fullRuns = new Map<string, Promise<{ code: number | null; stdout: string; stderr: string }>>();
/** The command's output on the lines a stopped run is fed, in process (the same with workers: pool-cli-replay). */
async function fullRun(cmd: string, rest: string[]): Promise<{ stdout: string }> {
  const key = [cmd, ...rest].join(" ");
  if (!fullRuns.has(key)) fullRuns.set(key, runCli([cmd, fedCorpus, ...rest, ...COMMON, "--no-progress"]));
  const r = await (fullRuns.get(key) as Promise<{ code: number | null; stdout: string; stderr: string }>);
  assert.equal(r.code, 0, r.stderr);
  return r;
}

function idsOf(out: string): Set<unknown> {
  return new Set(jsonl(out).map((r) => r.id));
}

for (const mode of MODES) {
  test(`${mode.name}: SIGTERM mid-run writes a prefix, a summary, one notice, exit 143`, { skip: !canFifo && "needs mkfifo" }, async () => {
    const [cmd, ...rest] = mode.args as [string, ...string[]];
    const full = await fullRun(cmd, rest.filter((a, i) => a !== "--workers" && rest[i - 1] !== "--workers"));
    const summaryFile = join(dir, `summary-${mode.name.replaceAll(" ", "-")}.json`);
    const input = fifo() as string;
    const live = startCli([cmd, input, ...rest, ...COMMON, mode.progress === true ? "--progress" : "--no-progress", "--summary", summaryFile]);
    const writer = feed(input, lines.slice(0, FED).join("\n") + "\n");
    if (mode.progress === true) await live.waitFor(() => /^verify/m.test(live.stderr()));
    else await live.waitFor(() => live.stdout().includes("\n"));
    live.child.kill("SIGTERM");
    const { code, signal } = await live.exited;
    writer.destroy();
    assert.equal(signal, null, "not killed by the signal");
    assert.equal(code, 143, live.stderr());
    const notices = live.stderr().split("\n").filter((l) => l.includes("stopped by"));
    assert.equal(notices.length, 1, live.stderr());
    assert.match(notices[0] as string, new RegExp(`^deltatok: ${cmd} stopped by SIGTERM: \\d+ corpus lines done`));
    const summary = JSON.parse(readFileSync(summaryFile, "utf8")) as Record<string, unknown>;
    const stopped = summary.stopped as { signal: string; lines_done: number; lines_not_done: number; bytes_unread: number | null };
    assert.equal(stopped.signal, "SIGTERM");
    assert.ok(stopped.lines_done >= 1 && stopped.lines_done + stopped.lines_not_done <= FED, JSON.stringify(stopped));
    assert.equal(stopped.bytes_unread, null, "a FIFO: the size of what is left is unknown");
    if (cmd === "verify") {
      const out = JSON.parse(live.stdout()) as { conversations: number; requests: number; stopped: unknown };
      assert.equal(out.conversations, stopped.lines_done);
      assert.ok(out.requests > 0);
      assert.deepEqual(out.stopped, stopped);
    } else {
      const out = live.stdout();
      assert.ok(out.endsWith("\n") && full.stdout.startsWith(out), "the output is a prefix of the full run's, whole records");
      assert.equal(idsOf(out).size, stopped.lines_done, "exactly the lines done have output");
      assert.equal(summary.conversations, stopped.lines_done);
    }
  });
}

test("SIGINT stops the same way with exit 130", { skip: !canFifo && "needs mkfifo" }, async () => {
  const input = fifo() as string;
  const live = startCli(["replay", input, ...COMMON, "--no-progress"]);
  const writer = feed(input, lines.slice(0, 2).join("\n") + "\n");
  await live.waitFor(() => live.stdout().includes("\n"));
  live.child.kill("SIGINT");
  const { code } = await live.exited;
  writer.destroy();
  assert.equal(code, 130, live.stderr());
  assert.equal(live.stderr().split("\n").filter((l) => l.includes("stopped by SIGINT")).length, 1);
});

for (const workers of ["0", "2"]) {
  test(`--workers ${workers}: a SIGTERM after the work is done changes nothing (exit 0, full output)`, { skip: !canFifo && "needs mkfifo" }, async () => {
    // the full output, in process: the same on workers (pool-cli-replay)
    const full = await fullRun("replay", []);
    // the summary goes to a FIFO: writing it waits for a reader, so the command is held in its
    // closing phase (work done, process alive) until the signal has been seen and answered
    const summaryFile = fifo() as string;
    const live = startCli(["replay", fedCorpus, ...COMMON, "--no-progress", "--workers", workers, "--summary", summaryFile]);
    live.child.stdin?.end();
    await live.waitFor(() => live.stdout().length >= full.stdout.length);
    live.child.kill("SIGTERM"); // the records are all out: the command is closing
    await live.waitFor(() => live.stderr().includes("SIGTERM ignored"));
    const summaryText = await new Promise<string>((resolve, reject) => {
      let text = "";
      createReadStream(summaryFile, "utf8").on("data", (c) => (text += String(c))).on("end", () => resolve(text)).on("error", reject);
    });
    const { code, signal } = await live.exited;
    assert.equal(signal, null, "not killed by the signal");
    assert.equal(code, 0, live.stderr());
    assert.equal(live.stdout(), full.stdout);
    assert.ok(!live.stderr().includes("stopped by"), live.stderr());
    const summary = JSON.parse(summaryText) as Record<string, unknown>;
    assert.equal(summary.stopped, undefined);
  });
}
