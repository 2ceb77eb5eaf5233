// Test preload (`node --import ./test/hooks/clock-ahead.mjs --test ...`): the process clock
// reads 400 days after the real one. A test that depends on today's date (a render that reads
// strftime_now without a pinned clock, a fixture dated by the day it was made) fails under it,
// so CI finds such a time bomb before a user does. Only the wall clock moves: timers and
// performance.now() are untouched, and `new Date(x)` with an argument means what it says.
const AHEAD_MS = 400 * 86_400_000;
const RealDate = globalThis.Date;
class AheadDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + AHEAD_MS);
    else super(...args);
  }
  static now() {
    return RealDate.now() + AHEAD_MS;
  }
}
globalThis.Date = AheadDate;
