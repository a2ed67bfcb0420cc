import { test } from "node:test";
import assert from "node:assert/strict";
import { CronParseError, parseCronSchedule } from "./cron.js";

test("cron: valid schedules and what they expand to", () => {
  assert.deepEqual(parseCronSchedule("*/15 0-2 1,15 jan-mar mon-fri").fields, [
    [0, 15, 30, 45],
    [0, 1, 2],
    [1, 15],
    [1, 2, 3],
    [1, 2, 3, 4, 5],
  ]);
  assert.deepEqual(parseCronSchedule("@hourly").fields, parseCronSchedule("0 * * * *").fields);
  assert.deepEqual(parseCronSchedule("@weekly").fields?.[4], [0]);
  for (const ok of ["@yearly", "@annually", "@monthly", "@daily", "@midnight", "5 4 * * SUN", "0 0 ? * *", "30/10 * * * *", "  1   2 3 4 5  "]) {
    assert.ok(parseCronSchedule(ok), ok);
  }
  assert.equal(parseCronSchedule("@every 1h30m").everyMs, 5_400_000);
});

test("cron: robfig/cron's error messages", () => {
  const cases: [string, string][] = [
    ["", "empty spec string"],
    ["* * * *", "expected exactly 5 fields, found 4: [* * * *]"],
    ["* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]"],
    ["60 * * * *", "end of range (60) above maximum (59): 60"],
    ["* * 0 * *", "beginning of range (0) below minimum (1): 0"],
    ["5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"],
    ["*/0 * * * *", "step of range should be a positive number: */0"],
    ["1-2-3 * * * *", "too many hyphens: 1-2-3"],
    ["1/2/3 * * * *", "too many slashes: 1/2/3"],
    ["x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'],
    ["* * * * 7", "end of range (7) above maximum (6): 7"],
    ["@fortnightly", "unrecognized descriptor: @fortnightly"],
    ["@every soon", 'failed to parse duration @every soon: time: invalid duration "soon"'],
  ];
  for (const [spec, message] of cases) {
    assert.throws(() => parseCronSchedule(spec), (err: unknown) => err instanceof CronParseError && err.message === message, JSON.stringify(spec));
  }
});

test("cron: @every takes a Go duration", () => {
  assert.equal(parseCronSchedule("@every 90s").everyMs, 90_000);
  assert.equal(parseCronSchedule("@every 1.5h").everyMs, 5_400_000);
  assert.equal(parseCronSchedule("@every 0").everyMs, 0);
  for (const text of ["5", ""]) {
    const spec = `@every ${text}`;
    const message = `failed to parse duration ${spec}: time: invalid duration ${JSON.stringify(text)}`;
    assert.throws(() => parseCronSchedule(spec), (err: unknown) => err instanceof CronParseError && err.message === message, spec);
  }
});
