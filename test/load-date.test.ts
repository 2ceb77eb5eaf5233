/**
 * parseDate reads `--date YYYY-MM-DD` strictly (real calendar dates only) to midnight (a naive datetime carried in the UTC fields) of
 * that day, like Python's datetime.strptime(s, "%Y-%m-%d").
 */

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { DeltatokError } from "../src/errors.js";
import { parseDate } from "../src/load/index.js";

function naiveFields(d: Date): number[] {
  return [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds()];
}

describe("parseDate", () => {
  test("gives midnight of the day as a naive datetime (UTC fields)", () => {
    assert.deepEqual(naiveFields(parseDate("2026-11-30")), [2026, 11, 30, 0, 0, 0, 0]);
    assert.deepEqual(naiveFields(parseDate("2024-02-29")), [2024, 2, 29, 0, 0, 0, 0]);
    assert.deepEqual(naiveFields(parseDate("2000-02-29")), [2000, 2, 29, 0, 0, 0, 0]);
    assert.deepEqual(naiveFields(parseDate("9999-12-31")), [9999, 12, 31, 0, 0, 0, 0]);
  });

  test("years below 100 are not shifted to the 1900s", () => {
    assert.deepEqual(naiveFields(parseDate("0001-01-01")), [1, 1, 1, 0, 0, 0, 0]);
    assert.deepEqual(naiveFields(parseDate("0099-06-15")), [99, 6, 15, 0, 0, 0, 0]);
  });

  test("the weekday is right (strftime %A)", () => {
    assert.equal(parseDate("2026-11-30").getUTCDay(), 1); // Monday
    assert.equal(parseDate("2024-07-26").getUTCDay(), 5); // Friday
  });

  for (const bad of [
    "2026-02-30",
    "2025-02-29",
    "1900-02-29",
    "2026-04-31",
    "2026-13-01",
    "2026-00-10",
    "2026-01-00",
    "0000-01-01",
    "2026-1-5",
    "26-01-05",
    "2026/01/05",
    " 2026-01-05",
    "2026-01-05 ",
    "2026-01-05T00:00",
    "",
    "today",
  ]) {
    test(`rejects ${JSON.stringify(bad)} with DT_INVALID_DATE`, () => {
      assert.throws(
        () => parseDate(bad),
        (e: unknown) => e instanceof DeltatokError && e.code === "DT_INVALID_DATE" && e.message.includes(JSON.stringify(bad)),
      );
    });
  }

  test("rejects a non-string with DT_INVALID_DATE", () => {
    assert.throws(() => parseDate(20261130 as unknown as string), { code: "DT_INVALID_DATE" });
  });
});
