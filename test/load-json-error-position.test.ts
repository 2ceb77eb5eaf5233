/**
 * locateJsonError finds where JSON.parse fails (Node 20's messages often omit the position) and
 * agrees with JSON.parse on what is valid.
 */

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { locateJsonError } from "../src/load/json-text.js";

describe("locateJsonError", () => {
  test("valid JSON gives null", () => {
    for (const s of ['{"a": [1, 2.5e-3, -0, true, false, null, "x\\n\\u00e9"]}', "[]", "{}", ' "s" ', "0", "[[[]]]", '{"a":{"b":{}}}']) {
      assert.doesNotThrow(() => JSON.parse(s));
      assert.equal(locateJsonError(s), null, s);
    }
  });

  const cases: [string, number, number, number][] = [
    // text, offset, line, column
    ['{"a": }', 6, 1, 7],
    ['{"a": 1', 7, 1, 8],
    ["", 0, 1, 1],
    ["[1,2,,]", 5, 1, 6],
    ['{"a":"x\ny"}', 7, 1, 8],
    ["[1,]", 3, 1, 4],
    ['{"a": 1,}', 8, 1, 9],
    ["{'a': 1}", 1, 1, 2],
    ["[01]", 2, 1, 3],
    ["[1.]", 3, 1, 4],
    ["[tru]", 1, 1, 2],
    ['{"a" 1}', 5, 1, 6],
    ["[1] x", 4, 1, 5],
    ['"\\x"', 2, 1, 3],
    ['"\\u12G4"', 5, 1, 6],
    ['{\n  "a": 1\n  "b": 2\n}', 13, 3, 3],
    ["[\n\n  }", 5, 3, 3],
  ];
  for (const [text, offset, line, column] of cases) {
    test(`${JSON.stringify(text)} fails at line ${line}, column ${column}`, () => {
      assert.throws(() => JSON.parse(text));
      const where = locateJsonError(text);
      assert.ok(where !== null);
      assert.deepEqual({ offset: where.offset, line: where.line, column: where.column }, { offset, line, column }, where.reason);
      assert.ok(where.reason.length > 0);
    });
  }

  test("agrees with JSON.parse on generated near-valid texts", () => {
    const base = '{"k": [1, -2.5e+3, "s\\"t", {"n": null, "t": true}], "f": false}';
    let seed = 7;
    const rand = (m: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % m;
    };
    const alphabet = '{}[],:"\\ 0123456789.eE+-tfnulsx\n';
    for (let k = 0; k < 2000; k++) {
      const chars = [...base];
      const edits = 1 + rand(3);
      for (let e = 0; e < edits; e++) {
        const at = rand(chars.length + 1);
        const op = rand(3);
        const ch = alphabet[rand(alphabet.length)] as string;
        if (op === 0) chars.splice(at, 0, ch);
        else if (op === 1) chars.splice(at, 1);
        else chars.splice(at, 1, ch);
      }
      const text = chars.join("");
      let valid = true;
      try {
        JSON.parse(text);
      } catch {
        valid = false;
      }
      assert.equal(locateJsonError(text) === null, valid, text);
    }
  });
});
