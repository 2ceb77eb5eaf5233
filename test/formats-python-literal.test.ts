import { test } from "node:test";
import assert from "node:assert/strict";

import { DeltatokError } from "../src/errors.js";
import { findPatternLiterals } from "../src/load/formats/python-literal.js";

const values = (src: string): string[] => findPatternLiterals(src, "t.py").map((f) => f.value);

test("pat_str literals: plain, raw, triple-quoted, concatenated, parenthesized, joined lists and tuples, annotated, self.", () => {
  assert.deepEqual(values('pat_str = "a\\\\p{L}|\\\\s+"\n'), ["a\\p{L}|\\s+"]);
  assert.deepEqual(values("pat_str = r'\\p{L}+'\n"), ["\\p{L}+"]);
  assert.deepEqual(values('PAT_STR = r"""(?i:\'s|\'t)""" + 1\n'), []);
  assert.deepEqual(values('pat_str = ("a"\n    r"\\b"  # comment\n    \'c\')\n'), ["a\\bc"]);
  assert.deepEqual(values('class T:\n    pat_str = "|".join(\n        [\n            r"""x""",\n            r"y"  "z",\n        ]\n    )\n'), ["x|yz"]);
  assert.deepEqual(values('pat_str = "".join(("a", "b"))\n'), ["ab"]);
  assert.deepEqual(values('pat_str: str = "q"\nself.pat_str = "w"\n'), ["q", "w"]);
  assert.deepEqual(values('pat_str = "\\x41\\u00e9\\U0001F600\\101\\t\\z"\n'), ["A\u00e9\u{1F600}A\t\\z"]);
  assert.deepEqual(values('pat_str = "a\\\nb"\n'), ["ab"]);
});

test("pat_str: non-literals, other names, strings and comments that only mention it are not read", () => {
  assert.deepEqual(values("pat_str = PATTERN\n"), []);
  assert.deepEqual(values('pat_str = f"{x}"\n'), []);
  assert.deepEqual(values('pat_str = b"x"\n'), []);
  assert.deepEqual(values('pat_str = "a".join(parts)\n'), []);
  assert.deepEqual(values('pat_str == "x"\nmy_pat_str = "y"\nx = pat_str = "z"\n'), []);
  assert.deepEqual(values('"""\npat_str = "in a docstring"\n"""\n# pat_str = "in a comment"\n'), []);
  assert.deepEqual(values('f(pat_str = "keyword argument")\n'), []);
  assert.deepEqual(values('pat_str = "unterminated\n'), []);
});

test("pat_str with a \\N{...} escape is a coded error (the Unicode name table is not shipped)", () => {
  assert.throws(() => values('pat_str = "\\N{EM DASH}"\n'), (e: unknown) => e instanceof DeltatokError && e.code === "DT_TOKENIZER_UNSUPPORTED");
  assert.deepEqual(values('other = "\\N{EM DASH}"\npat_str = "ok"\n'), ["ok"]);
});
