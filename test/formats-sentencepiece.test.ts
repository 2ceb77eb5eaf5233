import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { SentencePieceProcessor } from "../src/encoder/model/sentencepiece.js";
import { readSentencePieceModel } from "../src/load/formats/sentencepiece-model.js";
import { compareExpectations, formatFixturePath, formatTexts, readFormatJson, type Expectations } from "./helpers/format-fixtures.js";

const MODELS = Object.keys(readFormatJson<Record<string, unknown>>("sentencepiece", "models.json"));

for (const name of MODELS) {
  test(`SentencePiece ${name}: ids, normalized text and decode equal sentencepiece on the corpora and hostile text`, () => {
    const file = formatFixturePath("sentencepiece", `${name}.model`);
    const model = readSentencePieceModel(readFileSync(file), file);
    const sp = new SentencePieceProcessor(model);
    const expect = readFormatJson<Expectations>("sentencepiece", `${name}.sentencepiece.json`);
    const problems = compareExpectations(
      formatTexts(),
      expect,
      (text) => {
        const ids = sp.encode(text);
        return { ids, normalized: sp.normalize(text), decoded: sp.decode(ids) };
      },
      { normalized: true, decoded: true },
    );
    assert.deepEqual(problems.slice(0, 10), [], `${problems.length} mismatches`);
  });
}
