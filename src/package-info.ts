/** deltatok's own package.json, found from this file whether running from src/ or dist/src/. */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function findPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const p = join(dir, "package.json");
    if (existsSync(p) && (JSON.parse(readFileSync(p, "utf8")) as { name?: string }).name === "deltatok") return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error("deltatok: package.json not found");
    dir = up;
  }
}

/** Absolute path of the package root (holds package.json and data/). */
export const PACKAGE_ROOT = findPackageRoot();
export const VERSION = (JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string }).version;
