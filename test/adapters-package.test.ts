/**
 * The adapters import the way a user imports them (`deltatok/adapters/ai-sdk`,
 * `deltatok/adapters/langchain`), and their built modules import nothing from the frameworks at
 * run time (types only), so deltatok works without either installed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { repoPath } from "./helpers/paths.js";

test("deltatok/adapters/ai-sdk and deltatok/adapters/langchain export their functions", async (t) => {
  if (!existsSync(repoPath("dist", "src", "adapters", "ai-sdk.js"))) return t.skip("not built (run npm run build)");
  const ai = (await import("deltatok/adapters/ai-sdk" as string)) as Record<string, unknown>;
  const lc = (await import("deltatok/adapters/langchain" as string)) as Record<string, unknown>;
  assert.deepEqual(Object.keys(ai).sort(), ["fromAiSdk", "toAiSdk"]);
  assert.deepEqual(Object.keys(lc).sort(), ["fromLangChain", "toLangChain"]);
  const pkg = JSON.parse(readFileSync(repoPath("package.json"), "utf8")) as Record<string, Record<string, unknown>>;
  for (const name of ["ai", "@langchain/core"]) {
    assert.ok(pkg.peerDependencies?.[name] !== undefined && (pkg.peerDependenciesMeta?.[name] as { optional?: boolean }).optional === true, `${name}: optional peer`);
    assert.ok(pkg.devDependencies?.[name] !== undefined, `${name}: devDependency`);
    assert.equal(pkg.dependencies?.[name], undefined, `${name}: not a dependency`);
  }
});

test("the built adapters import no framework module at run time", (t) => {
  const dir = repoPath("dist", "src", "adapters");
  if (!existsSync(dir)) return t.skip("not built (run npm run build)");
  const files = readdirSync(dir).filter((f) => f.endsWith(".js"));
  assert.ok(files.length >= 3);
  for (const f of files) {
    const js = readFileSync(`${dir}/${f}`, "utf8");
    const specs = [...js.matchAll(/^(?:import|export)\s[^;\n]*?\sfrom\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/gm)].map((m) => m[1] ?? m[2]);
    assert.ok(specs.length > 0, f);
    for (const s of specs) assert.ok(s?.startsWith("."), `${f} imports ${s}`);
  }
});
