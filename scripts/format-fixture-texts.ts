// Prints the texts the tokenizer-format fixtures are computed on, as JSON
// {corpus: [...], hostile: [...]}, for scripts/make-format-fixtures.py.
//   node --import tsx scripts/format-fixture-texts.ts
import { corpusTexts, formatHostileTexts } from "../test/helpers/format-texts.js";

process.stdout.write(JSON.stringify({ corpus: corpusTexts(), hostile: formatHostileTexts() }));
