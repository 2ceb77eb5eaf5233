/**
 * Offline lookup of a Hugging Face model id (`org/name`) in the local hub cache. Never touches
 * the network.
 *
 * Cache location, as huggingface_hub computes it (constants.py): `HF_HUB_CACHE` (older alias
 * `HUGGINGFACE_HUB_CACHE`), else `$HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`, else
 * `~/.cache/huggingface/hub`; a leading `~` is expanded. Layout: `models--org--name/refs/main`
 * holds the commit hash of the snapshot `models--org--name/snapshots/<hash>/`. Without
 * refs/main, the only snapshot, or the most recently modified one, is used.
 *
 * Layer: load.
 */

import { readFile, readdir, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

import { DeltatokError } from "../errors.js";
import { isNotFound } from "./json-text.js";

type Env = Readonly<Record<string, string | undefined>>;

/** A Hugging Face repo id `org/name` (letters, digits, `-`, `_`, `.`; no `..` or `--` edge cases checked). */
const REPO_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*\/[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export function looksLikeRepoId(spec: string): boolean {
  return REPO_ID.test(spec) && !spec.includes("..");
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === "" ? undefined : v;
}

function expandHome(p: string, env: Env): string {
  if (p === "~" || p.startsWith("~/")) return join(nonEmpty(env["HOME"]) ?? homedir(), p.slice(1));
  return p;
}

/** The hub cache directory for an environment. */
export function hubCacheDir(env: Env): string {
  const explicit = nonEmpty(env["HF_HUB_CACHE"]) ?? nonEmpty(env["HUGGINGFACE_HUB_CACHE"]);
  if (explicit !== undefined) return expandHome(explicit, env);
  const hfHome = nonEmpty(env["HF_HOME"]);
  if (hfHome !== undefined) return join(expandHome(hfHome, env), "hub");
  const xdg = nonEmpty(env["XDG_CACHE_HOME"]);
  if (xdg !== undefined) return join(expandHome(xdg, env), "huggingface", "hub");
  return join(nonEmpty(env["HOME"]) ?? homedir(), ".cache", "huggingface", "hub");
}

async function isDirectory(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
}

/**
 * The snapshot directory of `repoId` in the hub cache. Throws DT_TOKENIZER_NOT_FOUND naming every
 * path tried (`alsoTried` first) when the model is not cached.
 */
export async function hubSnapshotDirectory(repoId: string, env: Env, alsoTried: readonly string[]): Promise<string> {
  const cache = hubCacheDir(env);
  try {
    return await findSnapshot(repoId, cache, alsoTried);
  } catch (e) {
    if (e instanceof DeltatokError) throw e;
    throw new DeltatokError(
      "DT_TOKENIZER_NOT_FOUND",
      `tokenizer "${repoId}": cannot read the Hugging Face hub cache at ${cache}: ${e instanceof Error ? e.message : String(e)}`,
      { cause: e },
    );
  }
}

async function findSnapshot(repoId: string, cache: string, alsoTried: readonly string[]): Promise<string> {
  const repoDir = join(cache, `models--${repoId.replace("/", "--")}`);
  const tried = [...alsoTried];
  const notFound = (why: string): DeltatokError =>
    new DeltatokError(
      "DT_TOKENIZER_NOT_FOUND",
      `tokenizer "${repoId}" not found: ${why} (looked offline in the Hugging Face hub cache; tried ${tried.join(", ")})`,
    );

  tried.push(repoDir);
  if (!(await isDirectory(repoDir))) throw notFound("the model is not in the hub cache");

  const refFile = join(repoDir, "refs", "main");
  let revision: string | undefined;
  try {
    revision = (await readFile(refFile, "utf8")).trim();
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  const snapshots = join(repoDir, "snapshots");
  if (revision !== undefined && revision !== "") {
    const snap = join(snapshots, revision);
    tried.push(snap);
    if (!(await isDirectory(snap))) throw notFound(`${refFile} names snapshot ${revision}, which is missing`);
    return snap;
  }

  tried.push(snapshots);
  let names: string[] = [];
  try {
    names = (await readdir(snapshots, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  if (names.length === 0) throw notFound(`no refs/main and no snapshot in ${snapshots}`);
  let best = names[0] as string;
  if (names.length > 1) {
    let bestTime = -Infinity;
    for (const name of names.sort()) {
      const t = (await stat(join(snapshots, name))).mtimeMs;
      if (t > bestTime) {
        bestTime = t;
        best = name;
      }
    }
  }
  return join(snapshots, best);
}
