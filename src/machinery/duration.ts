// Go-style durations ("5m", "1h30m", "250ms", "1.5s"), as upstream flags,
// config files and CronJob schedules (`@every 90s`) spell them. Values are milliseconds (what Node timers take);
// formatDuration prints them back the way Go's time.Duration.String() does.

const NS_PER_UNIT: Readonly<Record<string, number>> = {
  ns: 1,
  us: 1e3,
  "\u00b5s": 1e3, // micro sign, what Go prints
  "\u03bcs": 1e3, // Greek mu, also accepted by Go
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

const PART = /^(\d*)(?:\.(\d*))?([a-z\u00b5\u03bc]+)/;

/** Parses a Go duration; returns milliseconds, or throws an Error saying why not. */
export function parseDuration(text: string): number {
  let rest = text;
  let sign = 1;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    if (rest[0] === "-") sign = -1;
    rest = rest.slice(1);
  }
  // Go accepts a bare zero without a unit, and nothing else unitless.
  if (rest === "0") return 0;
  if (rest === "") throw new Error(`invalid duration "${text}"`);
  let ns = 0;
  while (rest !== "") {
    const m = PART.exec(rest);
    if (!m) throw new Error(`invalid duration "${text}"`);
    const [whole, intPart = "", fracPart, unit = ""] = m;
    if (intPart === "" && (fracPart === undefined || fracPart === "")) {
      throw new Error(`invalid duration "${text}"`);
    }
    const scale = NS_PER_UNIT[unit];
    if (scale === undefined) throw new Error(`unknown unit "${unit}" in duration "${text}"`);
    ns += Number(`${intPart || "0"}.${fracPart ?? ""}0`) * scale;
    rest = rest.slice(whole.length);
  }
  if (!Number.isFinite(ns)) throw new Error(`invalid duration "${text}"`);
  return (sign * ns) / 1e6;
}

/** Go's Duration.String(): "5m0s", "1h30m0s", "250ms", "1.5µs", "0s". */
export function formatDuration(ms: number): string {
  let ns = Math.round(ms * 1e6);
  if (ns === 0) return "0s";
  const sign = ns < 0 ? "-" : "";
  ns = Math.abs(ns);
  if (ns < 1e9) {
    // Below one second Go switches to the largest unit that keeps a whole part.
    const [unit, scale] = ns < 1e3 ? ["ns", 1] : ns < 1e6 ? ["\u00b5s", 1e3] : ["ms", 1e6];
    return `${sign}${withFraction(ns, scale)}${unit}`;
  }
  const hours = Math.floor(ns / 3600e9);
  ns -= hours * 3600e9;
  const minutes = Math.floor(ns / 60e9);
  ns -= minutes * 60e9;
  let out = sign;
  if (hours > 0) out += `${hours}h`;
  if (hours > 0 || minutes > 0) out += `${minutes}m`;
  return `${out}${withFraction(ns, 1e9)}s`;
}

function withFraction(value: number, scale: number): string {
  const whole = Math.floor(value / scale);
  const frac = value - whole * scale;
  if (frac === 0) return String(whole);
  const digits = String(scale).length - 1;
  return `${whole}.${String(frac).padStart(digits, "0").replace(/0+$/, "")}`;
}
