/** Repository paths that work from test/ (tsx) and dist/test/ (compiled) alike. */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json")) || dir.endsWith("/dist")) {
    const up = dirname(dir);
    if (up === dir) throw new Error("repository root not found");
    dir = up;
  }
  return dir;
}

/** The repository root (holds package.json). */
export const ROOT = findRoot();

export function repoPath(...parts: string[]): string {
  return join(ROOT, ...parts);
}
