// Run times of a parsed cron schedule (src/api/batch/cron.ts parses it): the
// next one after an instant, in a time zone, with robfig/cron's rules (day of
// month and day of week are ORed unless either is `*`; `@every d` counts from
// the given instant, whole seconds).

import type { CronSchedule } from "../../api/batch/cron.js";

const MINUTE = 60_000;

/** The first run time strictly after `afterMs`, in ms; undefined if none within ~5 years. */
export function nextRunAfter(schedule: CronSchedule, afterMs: number, timeZone?: string | null): number | undefined {
  if (schedule.everyMs !== undefined) {
    const every = Math.max(1000, Math.round(schedule.everyMs / 1000) * 1000);
    return Math.floor(afterMs / 1000) * 1000 + every;
  }
  const [minutes, hours, days, months, weekdays] = (schedule.fields ?? []).map((f) => new Set(f)) as Set<number>[];
  const domStar = days!.size === 31;
  const dowStar = weekdays!.size === 7;
  const dayMatches = (d: Date) => {
    const dom = days!.has(d.getUTCDate());
    const dow = weekdays!.has(d.getUTCDay());
    return domStar || dowStar ? dom && dow : dom || dow;
  };
  // Search in wall-clock time of the zone, written as if it were UTC, then convert back.
  let w = Math.floor(toWall(afterMs, timeZone) / MINUTE) * MINUTE + MINUTE;
  const limit = w + 5 * 366 * 24 * 60 * MINUTE;
  while (w < limit) {
    const d = new Date(w);
    const [y, mo, day, h] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours()];
    if (!months!.has(mo + 1)) w = Date.UTC(y, mo + 1, 1);
    else if (!dayMatches(d)) w = Date.UTC(y, mo, day + 1);
    else if (!hours!.has(h)) w = Date.UTC(y, mo, day, h + 1);
    else if (!minutes!.has(d.getUTCMinutes())) w += MINUTE;
    else {
      const t = fromWall(w, timeZone);
      if (t > afterMs) return t;
      w += MINUTE; // a wall time repeated by a DST fall-back: take the next one
    }
  }
  return undefined;
}

/**
 * The latest run time in (earliestMs, nowMs], and how many were missed
 * between (upstream's mostRecentScheduleTime); undefined when none is due.
 */
export function mostRecentRun(schedule: CronSchedule, earliestMs: number, nowMs: number, timeZone?: string | null): { time?: number; missed: number } {
  let last: number | undefined;
  let missed = 0;
  for (let t = nextRunAfter(schedule, earliestMs, timeZone); t !== undefined && t <= nowMs; t = nextRunAfter(schedule, t, timeZone)) {
    last = t;
    missed++;
    if (missed > 100_000) break; // decades of a per-minute schedule: enough to say "too many"
  }
  return last === undefined ? { missed: 0 } : { time: last, missed };
}

/** The zone's offset from UTC at instant `ms`, in ms. */
function offsetAt(ms: number, timeZone: string | null | undefined): number {
  if (!timeZone || timeZone === "UTC" || timeZone === "Etc/UTC") return 0;
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  }).formatToParts(new Date(ms));
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const wall = Date.UTC(n("year"), n("month") - 1, n("day"), n("hour"), n("minute"), n("second"));
  return wall - Math.floor(ms / 1000) * 1000;
}

function toWall(ms: number, timeZone: string | null | undefined): number {
  return ms + offsetAt(ms, timeZone);
}

function fromWall(wall: number, timeZone: string | null | undefined): number {
  const guess = wall - offsetAt(wall, timeZone);
  return wall - offsetAt(guess, timeZone);
}
