// RFC 3339 strings ⇄ Protobuf Timestamp (seconds, nanos) for metav1.Time and
// MicroTime. Date keeps milliseconds only, so the fraction is parsed by hand
// to keep MicroTime's microseconds exact. Output is UTC, as Go marshals both.

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Go's zero time (0001-01-01T00:00:00Z) in Unix seconds: Go writes no Time for it, and it means unset. */
export const ZERO_TIME_SECONDS = -62135596800;

export interface Timestamp {
  seconds: number;
  nanos: number;
}

function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(year: number, month: number): number {
  if (month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) return 29;
  return DAYS[month - 1]!;
}

/** The last input and its result: objects in a list share most of their timestamps. */
let lastInput = "";
let lastResult: Readonly<Timestamp> | undefined;

/** Parses an RFC 3339 timestamp; undefined when malformed. The result is shared: do not change it. */
export function parseRfc3339(s: string): Readonly<Timestamp> | undefined {
  if (s === lastInput) return lastResult;
  const result = parseRfc3339Uncached(s);
  lastInput = s;
  lastResult = result;
  return result;
}

function parseRfc3339Uncached(s: string): Timestamp | undefined {
  // Fast path for what servers write: `2006-01-02T15:04:05Z`, years 1000-9999.
  if (s.length === 20 && s.charCodeAt(19) === 90 /* Z */ && s.charCodeAt(10) === 84 /* T */ && s[4] === "-" && s[7] === "-" && s[13] === ":" && s[16] === ":") {
    const y = digits(s, 0, 4);
    const mo = digits(s, 5, 2);
    const d = digits(s, 8, 2);
    const h = digits(s, 11, 2);
    const mi = digits(s, 14, 2);
    const sec = digits(s, 17, 2);
    if (y >= 1000 && mo >= 1 && mo <= 12 && d >= 1 && d <= daysIn(y, mo) && h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && sec >= 0 && sec <= 59) {
      return { seconds: Date.UTC(y, mo - 1, d, h, mi, sec) / 1000, nanos: 0 };
    }
  }
  const m = RFC3339.exec(s);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, sec, frac, , sign, oh, om] = m;
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(sec), 0);
  const ms = date.getTime();
  if (Number.isNaN(ms) || date.getUTCMonth() !== Number(mo) - 1 || date.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59 || Number(sec) > 59) return undefined;
  let seconds = ms / 1000;
  if (sign !== undefined) {
    const offset = (Number(oh) * 60 + Number(om)) * 60;
    seconds += sign === "+" ? -offset : offset;
  }
  const nanos = frac === undefined ? 0 : Number(frac.slice(0, 9).padEnd(9, "0"));
  return { seconds, nanos };
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

// Objects repeat their timestamps (conditions, statuses, list items written together):
// a small direct-mapped cache of formatted seconds saves most of the formatting.
const cacheSeconds = new Float64Array(256).fill(NaN);
const cacheText: string[] = new Array<string>(256).fill("");

/** `2006-01-02T15:04:05Z`, or with `.000000` microseconds when `micro`. */
export function formatRfc3339(seconds: number, nanos: number, micro: boolean): string {
  if (!micro) {
    const slot = seconds & 255;
    if (cacheSeconds[slot] === seconds) return cacheText[slot]!;
    const text = formatUncached(seconds, 0, false);
    cacheSeconds[slot] = seconds;
    cacheText[slot] = text;
    return text;
  }
  return formatUncached(seconds, nanos, true);
}

function formatUncached(seconds: number, nanos: number, micro: boolean): string {
  const date = new Date(seconds * 1000);
  if (seconds >= -30610224000 && seconds < 253402300800) {
    // Years 1000-9999: toISOString has the same shape, and is native.
    const iso = date.toISOString();
    return micro ? `${iso.slice(0, 19)}.${pad(Math.floor(nanos / 1000), 6)}Z` : `${iso.slice(0, 19)}Z`;
  }
  const year = date.getUTCFullYear();
  const base =
    `${year < 0 ? "-" + pad(-year, 4) : pad(year, 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}` +
    `T${pad(date.getUTCHours(), 2)}:${pad(date.getUTCMinutes(), 2)}:${pad(date.getUTCSeconds(), 2)}`;
  return micro ? `${base}.${pad(Math.floor(nanos / 1000), 6)}Z` : `${base}Z`;
}
