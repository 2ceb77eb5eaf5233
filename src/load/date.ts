/**
 * `--date YYYY-MM-DD`: the fixed "today" a template's `strftime_now` sees.
 *
 * Mirrors Python's `datetime.strptime(s, "%Y-%m-%d")` as the reference oracle uses it: a naive
 * datetime at midnight of that calendar day. JavaScript has no naive datetime; deltatok carries
 * one in a Date's UTC fields (the renderer formats `strftime_now` from `getUTC*`), so the result
 * is midnight UTC of that day, whatever the process's time zone — no daylight-saving gaps, no
 * day shifts. `naiveNow()` gives the current local wall-clock time the same way (Python's
 * `datetime.now()`).
 *
 * Stricter than strptime: exactly four-digit year, two-digit month and day, years 0001–9999
 * (Python's datetime range), and only real calendar dates (2026-02-30 and 2025-02-29 are rejected).
 *
 * Layer: load.
 */

import { DeltatokError } from "../errors.js";

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Parses `YYYY-MM-DD` to that day's midnight as a naive datetime (UTC fields). Throws DT_INVALID_DATE. */
export function parseDate(s: string): Date {
  const bad = (why: string): DeltatokError =>
    new DeltatokError("DT_INVALID_DATE", `invalid date ${JSON.stringify(s)}: ${why}`, { path: "date" });
  if (typeof s !== "string") throw bad("expected a string YYYY-MM-DD");
  const m = DATE.exec(s);
  if (m === null) throw bad("expected YYYY-MM-DD, e.g. 2026-11-30");
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (year < 1) throw bad("the year must be 0001 or later");
  if (month < 1 || month > 12) throw bad("the month must be 01 to 12");
  if (day < 1 || day > daysInMonth(year, month)) throw bad(`${m[1]}-${m[2]} has ${daysInMonth(year, month)} days`);
  // Date.UTC maps years 0–99 to 1900–1999, so set the year separately.
  const d = new Date(Date.UTC(2000, 0, 1));
  d.setUTCFullYear(year, month - 1, day);
  return d;
}

/** The current local wall-clock time as a naive datetime (in the UTC fields), like Python's datetime.now(). */
export function naiveNow(): Date {
  const now = new Date();
  return new Date(now.getTime() - now.getTimezoneOffset() * 60_000);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
