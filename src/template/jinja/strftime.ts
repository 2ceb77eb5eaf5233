/**
 * Python `datetime.strftime` on a naive datetime, as CPython on Linux does it: Python itself
 * expands %f, %z and %Z (empty for naive datetimes), then glibc's strftime (C locale) handles
 * the rest, including its flags (`-`, `_`, `0`, `^`, `#`), field widths, the E/O modifiers and
 * unknown conversions (copied through).
 *
 * Layer: template/jinja.
 */
import { StrBuilder } from "./pystr.js";

export interface NaiveDateTime {
  year: number;
  month: number; // 1-12
  day: number;
  hour: number;
  minute: number;
  second: number;
  microsecond: number;
  /** seconds since the epoch when this wall-clock time is read as local time (glibc %s) */
  epoch: number;
}

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

function dayOfYear(d: NaiveDateTime): number {
  const cum = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
  return (cum[d.month - 1] as number) + d.day + (d.month > 2 && isLeap(d.year) ? 1 : 0);
}

/** 0 = Sunday */
function weekdaySun(d: NaiveDateTime): number {
  const t = new Date(Date.UTC(2000, 0, 1, 12));
  t.setUTCFullYear(d.year, d.month - 1, d.day);
  return t.getUTCDay();
}

/** ISO 8601 week-based year and week number. */
function isoWeek(d: NaiveDateTime): [number, number] {
  const wd = (weekdaySun(d) + 6) % 7; // Monday = 0
  const yday = dayOfYear(d) - 1;
  let year = d.year;
  let week = Math.floor((yday - wd + 10) / 7);
  if (week < 1) {
    year -= 1;
    const prevDays = isLeap(year) ? 366 : 365;
    week = Math.floor((yday + prevDays - wd + 10) / 7);
  } else {
    const days = isLeap(year) ? 366 : 365;
    if (week === 53 && yday - wd + 3 >= days) {
      year += 1;
      week = 1;
    }
  }
  return [year, week];
}

function pad(s: string, width: number, ch: string): string {
  return s.length >= width ? s : ch.repeat(width - s.length) + s;
}

/** Python datetime.strftime(fmt) for a naive datetime. */
export function strftime(fmt: string, d: NaiveDateTime): string {
  // Python's own pass: %f, %z, %Z (naive: empty); everything else goes to the C library.
  if (!/%[fzZ]/.test(fmt)) return cStrftime(fmt, d);
  const pre = new StrBuilder();
  for (let i = 0; i < fmt.length; ) {
    if (fmt[i] !== "%") {
      let j = fmt.indexOf("%", i);
      if (j < 0) j = fmt.length;
      pre.add(fmt.slice(i, j));
      i = j;
      continue;
    }
    i++;
    if (i >= fmt.length) {
      pre.add("%");
      break;
    }
    const c = fmt[i++] as string;
    if (c === "f") pre.add(String(d.microsecond).padStart(6, "0"));
    else if (c === "z" || c === "Z") pre.add("");
    else pre.add("%" + c);
  }
  return cStrftime(pre.toString(), d);
}

/**
 * The most UTF-16 units strftime(fmt) can produce: each directive at most its width or 64
 * (the longest conversion, `%c`, is 24), literal text as is.
 */
export function strftimeBound(fmt: string): number {
  let n = 0;
  for (let i = 0; i < fmt.length; ) {
    if (fmt[i] !== "%") {
      let j = fmt.indexOf("%", i);
      if (j < 0) j = fmt.length;
      n += j - i;
      i = j;
      continue;
    }
    const start = i++;
    while (i < fmt.length && "_-0^#".includes(fmt[i] as string)) i++;
    let width = 0;
    while (i < fmt.length && (fmt[i] as string) >= "0" && (fmt[i] as string) <= "9") width = width * 10 + (fmt.charCodeAt(i++) - 48);
    while (i < fmt.length && (fmt[i] === "E" || fmt[i] === "O")) i++;
    i++;
    n += Math.max(width, 64, i - start);
  }
  return n;
}

function cStrftime(fmt: string, d: NaiveDateTime): string {
  // (built in chunks: a long format makes no rope node per piece)
  const out = new StrBuilder();
  const n = fmt.length;
  let i = 0;
  while (i < n) {
    const ch = fmt[i] as string;
    if (ch !== "%") {
      // a run of literal text, up to the next directive
      let j = fmt.indexOf("%", i);
      if (j < 0) j = n;
      out.add(fmt.slice(i, j));
      i = j;
      continue;
    }
    const start = i;
    i++;
    let padChar: string | null = null; // null = default
    let upper = false;
    let swap = false;
    for (; i < n; i++) {
      const f = fmt[i];
      if (f === "_") padChar = " ";
      else if (f === "-") padChar = "";
      else if (f === "0") padChar = "0";
      else if (f === "^") upper = true;
      else if (f === "#") swap = true;
      else break;
    }
    let width = -1;
    while (i < n && (fmt[i] as string) >= "0" && (fmt[i] as string) <= "9") {
      width = (width < 0 ? 0 : width * 10) + (fmt.charCodeAt(i) - 48);
      i++;
    }
    while (i < n && (fmt[i] === "E" || fmt[i] === "O")) i++;
    if (i >= n) {
      out.add(fmt.slice(start));
      break;
    }
    const conv = fmt[i++] as string;
    const num = (v: number, w: number, defPad = "0"): string => {
      const s = String(Math.abs(v));
      let p = padChar === null ? defPad : padChar;
      let ww = width >= 0 ? width : w;
      if (padChar === "") {
        p = " ";
        ww = width >= 0 ? width : 0;
      }
      return (v < 0 ? "-" : "") + pad(s, ww, p === "" ? " " : p);
    };
    const text = (s: string, isUpperish = false): string => {
      let t = s;
      if (upper) t = t.toUpperCase();
      else if (swap) t = isUpperish ? t.toLowerCase() : t.toUpperCase();
      if (width > 0) t = pad(t, width, padChar === "0" ? "0" : " ");
      return t;
    };
    const wd = weekdaySun(d);
    switch (conv) {
      case "a":
        out.add(text((DAYS[wd] as string).slice(0, 3)));
        break;
      case "A":
        out.add(text(DAYS[wd] as string));
        break;
      case "b":
      case "h":
        out.add(text((MONTHS[d.month - 1] as string).slice(0, 3)));
        break;
      case "B":
        out.add(text(MONTHS[d.month - 1] as string));
        break;
      case "c":
        out.add(text(cStrftime("%a %b %e %H:%M:%S %Y", d)));
        break;
      case "C":
        out.add(num(Math.floor(d.year / 100), 2));
        break;
      case "d":
        out.add(num(d.day, 2));
        break;
      case "D":
        out.add(text(cStrftime("%m/%d/%y", d)));
        break;
      case "e":
        out.add(num(d.day, 2, " "));
        break;
      case "F":
        out.add(text(cStrftime("%Y-%m-%d", d)));
        break;
      case "g":
        out.add(num(isoWeek(d)[0] % 100, 2));
        break;
      case "G":
        out.add(num(isoWeek(d)[0], 1));
        break;
      case "H":
        out.add(num(d.hour, 2));
        break;
      case "I":
        out.add(num(d.hour % 12 === 0 ? 12 : d.hour % 12, 2));
        break;
      case "j":
        out.add(num(dayOfYear(d), 3));
        break;
      case "k":
        out.add(num(d.hour, 2, " "));
        break;
      case "l":
        out.add(num(d.hour % 12 === 0 ? 12 : d.hour % 12, 2, " "));
        break;
      case "m":
        out.add(num(d.month, 2));
        break;
      case "M":
        out.add(num(d.minute, 2));
        break;
      case "n":
        out.add("\n");
        break;
      case "p":
        out.add(text(d.hour < 12 ? "AM" : "PM", true));
        break;
      case "P":
        out.add(text(d.hour < 12 ? "am" : "pm"));
        break;
      case "r":
        out.add(text(cStrftime("%I:%M:%S %p", d)));
        break;
      case "R":
        out.add(text(cStrftime("%H:%M", d)));
        break;
      case "s":
        out.add(num(d.epoch, 1));
        break;
      case "S":
        out.add(num(d.second, 2));
        break;
      case "t":
        out.add("\t");
        break;
      case "T":
        out.add(text(cStrftime("%H:%M:%S", d)));
        break;
      case "u":
        out.add(num(wd === 0 ? 7 : wd, 1));
        break;
      case "U":
        out.add(num(Math.floor((dayOfYear(d) - 1 + 7 - wd) / 7), 2));
        break;
      case "V":
        out.add(num(isoWeek(d)[1], 2));
        break;
      case "w":
        out.add(num(wd, 1));
        break;
      case "W":
        out.add(num(Math.floor((dayOfYear(d) - 1 + 7 - ((wd + 6) % 7)) / 7), 2));
        break;
      case "x":
        out.add(text(cStrftime("%m/%d/%y", d)));
        break;
      case "X":
        out.add(text(cStrftime("%H:%M:%S", d)));
        break;
      case "y":
        out.add(num(d.year % 100, 2));
        break;
      case "Y":
        out.add(num(d.year, 1));
        break;
      case "z":
        {
          // the offset's sign goes before its last four digits
          const z = num(0, 4);
          out.add(z.slice(0, z.length - 4) + "+" + z.slice(z.length - 4));
        }
        break;
      case "Z":
        out.add(text(""));
        break;
      case "%":
        out.add("%");
        break;
      default: {
        const seq = fmt.slice(start, i);
        out.add(width > seq.length ? " ".repeat(width - seq.length) + seq : seq);
      }
    }
  }
  return out.toString();
}

/** The naive datetime HF would see: `now`'s UTC fields when given, else the local wall clock. */
export function naiveFrom(now: Date | undefined): NaiveDateTime {
  if (now !== undefined) {
    return {
      year: now.getUTCFullYear(),
      month: now.getUTCMonth() + 1,
      day: now.getUTCDate(),
      hour: now.getUTCHours(),
      minute: now.getUTCMinutes(),
      second: now.getUTCSeconds(),
      microsecond: now.getUTCMilliseconds() * 1000,
      epoch: Math.floor(
        new Date(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), now.getUTCHours(), now.getUTCMinutes(), now.getUTCSeconds()).getTime() / 1000,
      ),
    };
  }
  const t = new Date();
  return {
    year: t.getFullYear(),
    month: t.getMonth() + 1,
    day: t.getDate(),
    hour: t.getHours(),
    minute: t.getMinutes(),
    second: t.getSeconds(),
    microsecond: t.getMilliseconds() * 1000,
    epoch: Math.floor(t.getTime() / 1000),
  };
}
