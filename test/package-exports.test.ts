/** The package imports the way a user imports it, by name, from the built output. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { repoPath } from "./helpers/paths.js";

test("the package entry point exports the documented API", async (t) => {
  const entry = repoPath("dist", "src", "index.js");
  if (!existsSync(entry)) return t.skip("not built (run npm run build)");
  const mod = (await import("deltatok")) as Record<string, unknown>;
  for (const name of ["Deltatok", "DeltatokError", "ERROR_CODES", "isDeltatokError", "BUNDLED_TOKENIZERS", "loadTokenizer", "tokenizerCacheStats"]) {
    assert.ok(name in mod, `missing export ${name}`);
  }
  const { Deltatok } = mod as { Deltatok: { create(o: object): Promise<{ countText(s: string): number }> } };
  const dt = await Deltatok.create({ tokenizer: "qwen3" });
  assert.equal(dt.countText("hello world"), 2);
});
