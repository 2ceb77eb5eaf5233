// Prints the texts the tokenizer-format fixtures are computed on, as JSON
// {corpus: [...], hostile: [...], long: [...]}, for scripts/make-format-fixtures.py.
//   node --import tsx scripts/format-fixture-texts.ts
import { corpusTexts, formatHostileTexts, LONG_TEXT_RECIPES, longTexts } from "../test/helpers/format-texts.js";

process.stdout.write(
  JSON.stringify({ corpus: corpusTexts(), hostile: formatHostileTexts(), long: longTexts(), longNames: LONG_TEXT_RECIPES.map((r) => r.name) }),
);
