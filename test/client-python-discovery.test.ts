/**
 * The Python client finds the deltatok CLI without any network, in order: `DELTATOK_CMD` (a
 * command line, split like a shell: quoted paths with spaces work), `node_modules/.bin/deltatok`
 * in the working directory or above, `deltatok` on PATH; with none, it fails at construction
 * with DeltatokNotFoundError saying how to point it — it never runs npx (a fake npx on PATH
 * records any call). Each case runs a copy of the package (and the `deltatok_client`
 * compatibility module) outside the repository, from a directory of its own. Skipped, with a message, only where python3 is absent.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoPath } from "./helpers/paths.js";

const pythonPath = spawnSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" });
const python = pythonPath.status === 0 ? pythonPath.stdout.trim() : null;
const cli = repoPath("dist", "src", "cli", "main.js");
const skip = python === null ? "python3 is not installed" : !existsSync(cli) ? "not built (npm run build)" : process.platform === "win32" ? "POSIX shell scripts" : false;

const root = mkdtempSync(join(tmpdir(), "deltatok py discovery "));
const clientDir = join(root, "client");
mkdirSync(clientDir);
// the package and its compatibility module, as an installed copy would lay them out
cpSync(repoPath("clients", "python", "src", "deltatok"), join(clientDir, "deltatok"), { recursive: true, filter: (p) => !p.includes("__pycache__") });
cpSync(repoPath("clients", "python", "src", "deltatok_client.py"), join(clientDir, "deltatok_client.py"));
/** A bin directory whose npx only records that it was called. */
const fakeBin = join(root, "fake-bin");
mkdirSync(fakeBin);
const npxCalled = join(root, "npx-was-called");
writeFileSync(join(fakeBin, "npx"), `#!/bin/sh\necho "$@" > "${npxCalled}"\nexit 1\n`);
chmodSync(join(fakeBin, "npx"), 0o755);

/** A shell script that runs the built CLI (what npm puts in node_modules/.bin). */
function launcher(path: string): void {
  writeFileSync(path, `#!/bin/sh\nexec "${process.execPath}" "${cli}" "$@"\n`);
  chmodSync(path, 0o755);
}

const SCRIPT = `
import json, sys
sys.path.insert(0, sys.argv[1])
from deltatok_client import DeltatokClient, DeltatokNotFoundError, find_command
try:
    cmd = find_command()
except DeltatokNotFoundError as e:
    try:
        DeltatokClient(["--date", "2026-11-30"])
        constructed = True
    except DeltatokNotFoundError as e2:
        constructed = False
        msg = str(e2)
    print(json.dumps({"found": None, "constructed": constructed, "message": msg}))
    sys.exit(0)
with DeltatokClient(["--date", "2026-11-30"]) as dt:
    n = dt.count_text("hello world")
print(json.dumps({"found": cmd, "count": n}))
`;

function runPy(cwd: string, env: Record<string, string>): Promise<{ code: number | null; out: Record<string, unknown> | null; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(python as string, ["-c", SCRIPT, clientDir], { cwd, env: { HOME: root, ...env } });
    let stdout = "";
    let stderr = "";
    p.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    p.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    p.on("close", (code) => {
      let out: Record<string, unknown> | null = null;
      try {
        out = JSON.parse(stdout) as Record<string, unknown>;
      } catch {
        out = null;
      }
      resolve({ code, out, stderr });
    });
    p.stdin.end();
  });
}

/** PATH with the fake npx first and without any deltatok. */
const PATH = `${fakeBin}:/usr/bin:/bin`;

test("DELTATOK_CMD is a command line: quoted paths with spaces work", { skip }, async () => {
  const dir = join(root, "with space");
  mkdirSync(dir);
  launcher(join(dir, "my deltatok"));
  const r = await runPy(dir, { PATH, DELTATOK_CMD: `'${join(dir, "my deltatok")}'` });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.out?.found, [join(dir, "my deltatok")]);
  assert.equal(r.out?.count, 2);
});

test("node_modules/.bin/deltatok is found from a subdirectory of the project", { skip }, async () => {
  const project = join(root, "project");
  mkdirSync(join(project, "node_modules", ".bin"), { recursive: true });
  mkdirSync(join(project, "src", "deep"), { recursive: true });
  launcher(join(project, "node_modules", ".bin", "deltatok"));
  const r = await runPy(join(project, "src", "deep"), { PATH });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.out?.found, [join(project, "node_modules", ".bin", "deltatok")]);
  assert.equal(r.out?.count, 2);
});

test("deltatok on PATH is the last resort", { skip }, async () => {
  const bin = join(root, "global-bin");
  mkdirSync(bin);
  launcher(join(bin, "deltatok"));
  const elsewhere = join(root, "elsewhere");
  mkdirSync(elsewhere);
  const r = await runPy(elsewhere, { PATH: `${fakeBin}:${bin}:/usr/bin:/bin` });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.out?.found, [join(bin, "deltatok")]);
});

test("no CLI anywhere: DeltatokNotFoundError at construction, saying how to point it; npx never runs", { skip }, async () => {
  const nowhere = join(root, "nowhere");
  mkdirSync(nowhere);
  const r = await runPy(nowhere, { PATH });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.out?.found, null);
  assert.equal(r.out?.constructed, false, "the constructor raises, before any request");
  assert.match(String(r.out?.message), /DELTATOK_CMD/);
  assert.match(String(r.out?.message), /node_modules\/\.bin\/deltatok/);
  assert.equal(existsSync(npxCalled), false, "no npx (and so no registry) was asked");
});
