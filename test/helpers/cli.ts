/** Runs the deltatok CLI in a child process (built JS under dist/, TypeScript via tsx otherwise). */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const js = fileURLToPath(new URL("../../src/cli/main.js", import.meta.url));
const ts = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], options: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliResult> {
  const argv = existsSync(js) ? [js, ...args] : ["--import", "tsx", ts, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { env: { ...process.env, ...options.env }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
  });
}

/** Parses JSONL output. */
export function jsonl(text: string): Array<Record<string, unknown>> {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A CLI child process under the test's control: stdin open, output watched as it comes. */
export interface LiveCli {
  readonly child: ReturnType<typeof spawn>;
  stdout(): string;
  stderr(): string;
  /** Resolves once `cond` holds after some output arrived (or rejects if the child exits first). */
  waitFor(cond: () => boolean): Promise<void>;
  /** Resolves with the exit code and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startCli(args: string[], options: { timeoutMs?: number } = {}): LiveCli {
  const argv = existsSync(js) ? [js, ...args] : ["--import", "tsx", ts, ...args];
  const child = spawn(process.execPath, argv, { stdio: ["pipe", "pipe", "pipe"] });
  child.stdin.on("error", () => undefined); // the child may exit with its stdin still open
  let out = "";
  let err = "";
  const waiters: Array<{ cond: () => boolean; resolve: () => void; reject: (e: Error) => void }> = [];
  const check = () => {
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i] as (typeof waiters)[number];
      if (w.cond()) {
        waiters.splice(i, 1);
        w.resolve();
      }
    }
  };
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    out += d;
    check();
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    err += d;
    check();
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      for (const w of waiters.splice(0)) w.reject(new Error(`the child exited (${code ?? signal}) first; stderr: ${err}`));
      resolve({ code, signal });
    }),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor: (cond) =>
      cond()
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            waiters.push({ cond, resolve, reject });
          }),
    exited,
  };
}
