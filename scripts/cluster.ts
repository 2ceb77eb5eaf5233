/**
 * A private deltatok cluster on loopback: N `deltatok serve` instances behind nginx (the shipped
 * deploy/nginx/deltatok.conf with its `server` and `listen` lines rewritten), a corpus replayed
 * through it with the Python client (clients/python/scripts/cluster_replay.py), and the
 * instances' reuse. nginx runs in the foreground with its own prefix, pid file and temp paths
 * in a temporary folder, as root or as a user; nothing of the system's nginx is touched. Every
 * wait is on an event: an instance's "listening" line, nginx's "start worker process" notice, a
 * child's exit. Used by the cluster test and `npm run bench -- --suite cluster`.
 *
 *   node dist/scripts/cluster.js [--corpus FILE] [--instances 3] [--workers 0]
 *        [--method apply_chat_template|count_prompt] [--interleave W] [--kill-third] [--python python3]
 *
 * prints one JSON line per request ({"id", "index", "isl"} or "error"), then {"summary": ...}:
 * requests, errors, the client's counters, each instance's tokens reused / encoded, the reuse.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "dist", "src", "cli", "main.js");
const CONF = join(ROOT, "deploy", "nginx", "deltatok.conf");
const DRIVER = join(ROOT, "clients", "python", "scripts", "cluster_replay.py");
/** The upstream's name: nginx sends it as Host, so every instance accepts it (--allow-host). */
const UPSTREAM_NAME = "deltatok";

/** The nginx binary to run: $DELTATOK_NGINX, else `nginx` on PATH or in /usr/sbin; null when none runs. */
export function findNginx(): string | null {
  for (const c of [process.env.DELTATOK_NGINX, "nginx", "/usr/sbin/nginx"]) {
    if (c === undefined || c === "") continue;
    if (spawnSync(c, ["-v"], { stdio: "ignore" }).status === 0) return c;
  }
  return null;
}

export interface Instance {
  port: number;
  process: ChildProcess;
  /** Resolves with the exit code/signal once the process has exited. */
  exited: Promise<string>;
}

/** Waits for a line of a child's stderr that `match` accepts (its result); rejects if the child exits first. */
function awaitLine<T>(child: ChildProcess, what: string, match: (line: string) => T | null): Promise<T> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const rl = createInterface({ input: child.stderr! });
    const onExit = (code: number | null, signal: string | null) => reject(new Error(`${what} exited (${code ?? signal}) before it was ready:\n${seen}`));
    rl.on("line", (line) => {
      seen += line + "\n";
      const m = match(line);
      if (m !== null) {
        child.off("exit", onExit);
        rl.removeAllListeners("line");
        // keep draining stderr so the child never blocks on a full pipe
        rl.on("line", (l) => process.env.DELTATOK_CLUSTER_VERBOSE && process.stderr.write(`${what}: ${l}\n`));
        resolve(m);
      }
    });
    child.once("exit", onExit);
    child.once("error", reject);
  });
}

function exitedPromise(child: ChildProcess): Promise<string> {
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve(String(code ?? signal))));
}

/** Starts `deltatok serve --no-stdio --port 0` and resolves once it listens. */
export async function startInstance(serveArgs: readonly string[]): Promise<Instance> {
  const child = spawn(process.execPath, [CLI, "serve", "--no-stdio", "--port", "0", "--allow-host", UPSTREAM_NAME, ...serveArgs], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = exitedPromise(child);
  const url = await awaitLine(child, "deltatok serve", (l) => /"listening":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(l)?.[1] ?? null);
  return { port: Number(url), process: child, exited };
}

/** A loopback port free right now (nginx needs a number in its config). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** deploy/nginx/deltatok.conf with its instance lines and listen port replaced. */
export function clusterConf(ports: readonly number[], listen: number): string {
  const server = /^(\s*)server 127\.0\.0\.1:\d+((?: [^;]*)?);$/;
  const out: string[] = [];
  let servers = 0;
  let listens = 0;
  for (const line of readFileSync(CONF, "utf8").split("\n")) {
    const m = server.exec(line);
    if (m !== null) {
      if (servers++ === 0) for (const p of ports) out.push(`${m[1]}server 127.0.0.1:${p}${m[2]};`);
      continue;
    }
    const l = /^(\s*)listen 127\.0\.0\.1:\d+;$/.exec(line);
    if (l !== null) listens++;
    out.push(l === null ? line : `${l[1]}listen 127.0.0.1:${listen};`);
  }
  if (servers === 0 || listens !== 1) throw new Error(`${CONF}: expected "server 127.0.0.1:PORT ...;" lines and one "listen 127.0.0.1:PORT;"`);
  return out.join("\n");
}

export interface Cluster {
  /** nginx's URL (what clients use). */
  url: string;
  instances: Instance[];
  dir: string;
  /** The instance a routing key reaches now (nginx's X-Deltatok-Upstream answer to a health call). */
  instanceOf(route: string): Promise<number>;
  /** SIGKILL an instance; resolves once it has exited. */
  kill(i: number): Promise<void>;
  /** Stops nginx and every instance, removes the folder. */
  stop(): Promise<void>;
}

export interface ClusterOptions {
  instances: number;
  /** More `deltatok serve` flags (Deltatok options, --workers). */
  serveArgs: readonly string[];
  nginx: string;
  /** Puts something in front of each instance (tests: a fault-injecting proxy); the port nginx uses instead. */
  front?: (port: number) => Promise<number>;
}

export async function startCluster(o: ClusterOptions): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), "deltatok-cluster-"));
  const instances: Instance[] = [];
  const upstreams: number[] = [];
  let nginx: ChildProcess | null = null;
  let nginxExited: Promise<string> | null = null;
  const stop = async () => {
    const waits: Promise<string>[] = [];
    for (const i of instances) {
      if (i.process.exitCode === null && i.process.signalCode === null) i.process.kill("SIGTERM");
      waits.push(i.exited);
    }
    if (nginx !== null && nginx.exitCode === null && nginx.signalCode === null) nginx.kill("SIGQUIT");
    if (nginxExited !== null) waits.push(nginxExited);
    await Promise.all(waits);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const i of await Promise.all(Array.from({ length: o.instances }, () => startInstance(o.serveArgs)))) instances.push(i);
    for (const i of instances) upstreams.push(o.front === undefined ? i.port : await o.front(i.port));
    const listen = await freePort();
    writeFileSync(join(dir, "deltatok.conf"), clusterConf(upstreams, listen));
    const root = typeof process.getuid === "function" && process.getuid() === 0;
    writeFileSync(
      join(dir, "nginx.conf"),
      [
        root ? "user root;" : "",
        "worker_processes 1;",
        "daemon off;",
        `pid ${join(dir, "nginx.pid")};`,
        "error_log stderr notice;",
        "events { worker_connections 1024; }",
        "http {",
        "  access_log off;",
        ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((t) => `  ${t}_temp_path ${join(dir, t)};`),
        `  include ${join(dir, "deltatok.conf")};`,
        "}",
      ].join("\n") + "\n",
    );
    nginx = spawn(o.nginx, ["-p", dir, "-e", "stderr", "-c", join(dir, "nginx.conf")], { stdio: ["ignore", "ignore", "pipe"] });
    nginxExited = exitedPromise(nginx);
    await awaitLine(nginx, "nginx", (l) => (/start worker process/.test(l) ? true : null));
  } catch (e) {
    await stop();
    throw e;
  }
  const url = `http://127.0.0.1:${(/listen 127\.0\.0\.1:(\d+);/.exec(readFileSync(join(dir, "deltatok.conf"), "utf8")) ?? [])[1]}`;
  return {
    url,
    instances,
    dir,
    async instanceOf(route) {
      const upstream = await rpcHeader(url, "health", { "x-deltatok-conversation": route }, "x-deltatok-upstream");
      const port = Number(/:(\d+)$/.exec(upstream.split(",").pop()!.trim())?.[1]);
      const i = upstreams.indexOf(port);
      if (i < 0) throw new Error(`nginx named upstream ${upstream}, not one of the instances`);
      return i;
    },
    async kill(i) {
      const inst = instances[i]!;
      inst.process.kill("SIGKILL");
      await inst.exited;
    },
    stop,
  };
}

/** One POST /rpc; resolves with a response header's value. */
function rpcHeader(url: string, method: string, headers: Record<string, string>, header: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ id: 0, method, params: {} });
    const req = request(`${url}/rpc`, { method: "POST", headers: { "content-type": "application/json", ...headers } }, (res) => {
      res.resume();
      res.on("end", () => {
        const v = res.headers[header];
        if (res.statusCode !== 200 || typeof v !== "string") reject(new Error(`${method}: HTTP ${res.statusCode}, no ${header} header`));
        else resolve(v);
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** GET /stats of one instance (directly, not through nginx). */
export function instanceStats(port: number): Promise<{ tokens_reused: number; tokens_encoded: number; requests: number }> {
  return new Promise((resolve, reject) => {
    request(`http://127.0.0.1:${port}/stats`, (res) => {
      let data = "";
      res.setEncoding("utf8").on("data", (d: string) => (data += d));
      res.on("end", () => {
        try {
          resolve((JSON.parse(data) as { result: { tokens_reused: number; tokens_encoded: number; requests: number } }).result);
        } catch (e) {
          reject(e);
        }
      });
    })
      .on("error", reject)
      .end();
  });
}

export interface ReplayRecord {
  id: string;
  index: number;
  isl?: number;
  error?: { code: string; message: string };
}

export interface ReplayOptions {
  method: "apply_chat_template" | "count_prompt";
  python: string;
  /** Conversations in progress at once, turns round-robin (cluster_replay.py --interleave; default 1). */
  interleave?: number;
  /** Pause after about this many requests (see cluster_replay.py) and await `onPause`. */
  pauseAfter?: number;
  onPause?: (at: number, route: string) => Promise<void>;
}

/** Replays a corpus through `url` with the Python client; the records and the client's counters. */
export function replayThrough(url: string, corpus: string, o: ReplayOptions): Promise<{ records: ReplayRecord[]; client: Record<string, number>; pausedAt: number | null }> {
  const args = [DRIVER, url, corpus, "--method", o.method, "--interleave", String(o.interleave ?? 1)];
  if (o.pauseAfter !== undefined) args.push("--pause-after", String(o.pauseAfter));
  return new Promise((resolve, reject) => {
    const p = spawn(o.python, args, { stdio: ["pipe", "pipe", "pipe"] });
    const records: ReplayRecord[] = [];
    let client: Record<string, number> | null = null;
    let pausedAt: number | null = null;
    let err = "";
    let failed: unknown = null;
    p.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    createInterface({ input: p.stdout }).on("line", (line) => {
      const r = JSON.parse(line) as ReplayRecord & { pause?: number; route?: string; client?: Record<string, number> };
      if (r.pause !== undefined) {
        pausedAt = r.pause;
        const go = o.onPause === undefined ? Promise.resolve() : o.onPause(r.pause, r.route as string);
        go.then(
          () => p.stdin.write("\n"),
          (e: unknown) => {
            failed = e;
            p.stdin.end();
          },
        );
      } else if (r.client !== undefined) client = r.client;
      else records.push(r);
    });
    p.on("error", reject);
    p.on("close", (code) => {
      if (failed !== null) reject(failed);
      else if (code !== 0 || client === null) reject(new Error(`cluster_replay.py exited ${code}:\n${err}`));
      else resolve({ records, client, pausedAt });
    });
  });
}

/** tokens reused / (reused + encoded) of summed instance stats. */
export function reuseOf(stats: readonly { tokens_reused: number; tokens_encoded: number }[]): { reused: number; encoded: number; reuse: number } {
  const reused = stats.reduce((a, s) => a + s.tokens_reused, 0);
  const encoded = stats.reduce((a, s) => a + s.tokens_encoded, 0);
  return { reused, encoded, reuse: reused / Math.max(1, reused + encoded) };
}

/**
 * A cluster run: start, replay (killing, with `killThird`, the instance that holds the
 * conversation in progress a third of the way through), read every live instance's stats (the
 * killed one's just before it died), stop.
 */
export async function clusterRun(o: ClusterOptions & { corpus: string; replay: Omit<ReplayOptions, "pauseAfter" | "onPause">; killThird: boolean; requests: number }) {
  const cluster = await startCluster(o);
  try {
    const stats: ({ tokens_reused: number; tokens_encoded: number; requests: number } | null)[] = cluster.instances.map(() => null);
    let killed: number | null = null;
    const run = await replayThrough(cluster.url, o.corpus, {
      ...o.replay,
      ...(o.killThird
        ? {
            pauseAfter: Math.max(1, Math.floor(o.requests / 3)),
            onPause: async (_at: number, route: string) => {
              killed = await cluster.instanceOf(route);
              stats[killed] = await instanceStats(cluster.instances[killed]!.port);
              await cluster.kill(killed);
            },
          }
        : {}),
    });
    for (let i = 0; i < cluster.instances.length; i++) if (i !== killed) stats[i] = await instanceStats(cluster.instances[i]!.port);
    const all = stats as { tokens_reused: number; tokens_encoded: number; requests: number }[];
    return { ...run, killed, instances: all, ...reuseOf(all) };
  } finally {
    await cluster.stop();
  }
}

async function main(): Promise<void> {
  const { values: v } = parseArgs({
    options: {
      corpus: { type: "string", default: join(ROOT, "data", "tau-bench-airline-20.jsonl") },
      instances: { type: "string", default: "3" },
      workers: { type: "string", default: "0" },
      method: { type: "string", default: "apply_chat_template" },
      interleave: { type: "string", default: "1" },
      "kill-third": { type: "boolean", default: false },
      python: { type: "string", default: "python3" },
    },
  });
  const nginx = findNginx();
  if (nginx === null) throw new Error("nginx is not installed (Debian: apt-get install -y nginx; or set DELTATOK_NGINX)");
  const method = v.method === "count_prompt" ? "count_prompt" : "apply_chat_template";
  const requests = readFileSync(v.corpus, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .reduce((a, l) => a + (JSON.parse(l) as { messages: { role?: string }[] }).messages.filter((m) => m.role === "assistant").length, 0);
  const r = await clusterRun({
    instances: Number(v.instances),
    serveArgs: ["--date", "2026-11-30", "--workers", v.workers],
    nginx,
    corpus: v.corpus,
    replay: { method, python: v.python, interleave: Number(v.interleave) },
    killThird: v["kill-third"],
    requests,
  });
  for (const rec of r.records) process.stdout.write(JSON.stringify(rec) + "\n");
  const errors = r.records.filter((x) => x.error !== undefined).length;
  process.stdout.write(
    JSON.stringify({ summary: { requests: r.records.length, errors, killed_instance: r.killed, paused_at: r.pausedAt, client: r.client, instances: r.instances, tokens_reused: r.reused, tokens_encoded: r.encoded, reuse: Math.round(r.reuse * 10000) / 10000 } }) + "\n",
  );
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e: unknown) => {
    process.stderr.write(`cluster: ${(e as Error)?.stack ?? e}\n`);
    process.exitCode = 1;
  });
}
