import { test } from "node:test";
import assert from "node:assert/strict";
import { formatDuration, parseDuration } from "./duration.js";

test("parseDuration reads Go durations into milliseconds", () => {
  const cases: Array<[string, number]> = [
    ["0", 0],
    ["0s", 0],
    ["5m", 300_000],
    ["10s", 10_000],
    ["1h30m", 5_400_000],
    ["250ms", 250],
    ["1.5s", 1500],
    [".5s", 500],
    ["1.5h", 5_400_000],
    ["2h45m30.5s", 9_930_500],
    ["100us", 0.1],
    ["100\u00b5s", 0.1],
    ["100\u03bcs", 0.1],
    ["1500000ns", 1.5],
    ["-1m", -60_000],
    ["+10s", 10_000],
  ];
  for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
});

test("parseDuration rejects what Go rejects", () => {
  for (const text of ["", "5", "-", "s", "5x", "1.2.3s", "5 m", "m5", ".s", "1h 30m", "abc"]) {
    assert.throws(() => parseDuration(text), /duration/, JSON.stringify(text));
  }
});

test("formatDuration prints like Go's Duration.String", () => {
  const cases: Array<[number, string]> = [
    [0, "0s"],
    [300_000, "5m0s"],
    [3_600_000, "1h0m0s"],
    [5_400_000, "1h30m0s"],
    [90_500, "1m30.5s"],
    [10_000, "10s"],
    [250, "250ms"],
    [2.5, "2.5ms"],
    [0.0015, "1.5\u00b5s"],
    [0.000001, "1ns"],
    [-60_000, "-1m0s"],
  ];
  for (const [ms, text] of cases) assert.equal(formatDuration(ms), text, String(ms));
});

test("formatDuration output parses back to the same value", () => {
  for (const ms of [0, 1, 999, 1000, 61_001, 86_400_000, 0.25]) {
    assert.equal(parseDuration(formatDuration(ms)), ms);
  }
});
