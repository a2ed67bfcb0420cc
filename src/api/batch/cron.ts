// Cron schedules as CronJob validation reads them: upstream parses with
// robfig/cron's standard parser (five fields, or @yearly/@monthly/.../@every
// <duration>), and its error texts reach users verbatim in the Invalid
// response, so this parser reproduces them. Only validation lives here; the
// cronjob controller computes run times from the returned field sets.

import { parseDuration } from "../../machinery/index.js";

export interface CronSchedule {
  /** Allowed values per field (minute, hour, day of month, month, day of week); undefined for `@every`. */
  readonly fields?: readonly (readonly number[])[];
  /** For `@every <duration>`: the period in milliseconds. */
  readonly everyMs?: number;
}

interface Bounds {
  readonly min: number;
  readonly max: number;
  readonly names?: Readonly<Record<string, number>>;
}

const MONTHS: Record<string, number> = { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 };
const DAYS: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

const BOUNDS: readonly Bounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTHS },
  { min: 0, max: 6, names: DAYS },
];

const DESCRIPTORS: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

export class CronParseError extends Error {}

/** Parse a standard cron spec; throws CronParseError with robfig/cron's message. */
export function parseCronSchedule(spec: string): CronSchedule {
  if (spec.length === 0) throw new CronParseError("empty spec string");
  if (spec.startsWith("TZ=") || spec.startsWith("CRON_TZ=")) {
    // The location is the time zone validator's business; the rest must still parse.
    const i = spec.indexOf(" ");
    spec = i < 0 ? "" : spec.slice(i).trim();
    if (spec === "") throw new CronParseError("empty spec string");
  }
  if (spec.startsWith("@")) return parseDescriptor(spec);
  const fields = spec.split(/[ \t\n\v\f\r]+/).filter((x) => x !== "");
  if (fields.length !== 5) throw new CronParseError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(" ")}]`);
  return { fields: fields.map((f, i) => parseField(f, BOUNDS[i]!)) };
}

function parseDescriptor(spec: string): CronSchedule {
  const fixed = DESCRIPTORS[spec];
  if (fixed !== undefined) return parseCronSchedule(fixed);
  if (spec.startsWith("@every ")) {
    const text = spec.slice("@every ".length);
    let ms: number;
    try {
      ms = parseDuration(text);
    } catch (err) {
      throw new CronParseError(`failed to parse duration ${spec}: time: invalid duration ${JSON.stringify(text)}`, { cause: err });
    }
    return { everyMs: ms };
  }
  throw new CronParseError(`unrecognized descriptor: ${spec}`);
}

function parseField(text: string, bounds: Bounds): number[] {
  const values = new Set<number>();
  for (const expr of text.split(",").filter((x) => x !== "")) for (const v of parseRange(expr, bounds)) values.add(v);
  return [...values].sort((a, b) => a - b);
}

function parseRange(expr: string, bounds: Bounds): number[] {
  const rangeAndStep = expr.split("/");
  const lowAndHigh = rangeAndStep[0]!.split("-");
  let start: number;
  let end: number;
  if (lowAndHigh[0] === "*" || lowAndHigh[0] === "?") {
    start = bounds.min;
    end = bounds.max;
  } else {
    start = parseIntOrName(lowAndHigh[0]!, bounds.names);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseIntOrName(lowAndHigh[1]!, bounds.names);
    else throw new CronParseError(`too many hyphens: ${expr}`);
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = mustParseInt(rangeAndStep[1]!);
    // "N/step" means "N-max/step".
    if (lowAndHigh.length === 1) end = bounds.max;
  } else if (rangeAndStep.length > 2) {
    throw new CronParseError(`too many slashes: ${expr}`);
  }
  if (start < bounds.min) throw new CronParseError(`beginning of range (${start}) below minimum (${bounds.min}): ${expr}`);
  if (end > bounds.max) throw new CronParseError(`end of range (${end}) above maximum (${bounds.max}): ${expr}`);
  if (start > end) throw new CronParseError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new CronParseError(`step of range should be a positive number: ${expr}`);
  const out: number[] = [];
  for (let v = start; v <= end; v += step) out.push(v);
  return out;
}

function parseIntOrName(expr: string, names: Readonly<Record<string, number>> | undefined): number {
  const lower = expr.toLowerCase();
  if (names !== undefined && Object.hasOwn(names, lower)) return names[lower]!;
  return mustParseInt(expr);
}

/** Go's strconv.Atoi, then the parser's own non-negative rule. */
function mustParseInt(expr: string): number {
  if (!/^[+-]?[0-9]+$/.test(expr)) throw new CronParseError(`failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: invalid syntax`);
  const n = Number(expr);
  if (!Number.isSafeInteger(n)) throw new CronParseError(`failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: value out of range`);
  if (n < 0) throw new CronParseError(`negative number (${n}) not allowed: ${expr}`);
  return n;
}
