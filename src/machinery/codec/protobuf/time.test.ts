import { test } from "node:test";
import assert from "node:assert/strict";
import { formatRfc3339, parseRfc3339, ZERO_TIME_SECONDS } from "./time.js";

test("RFC 3339 parses to Unix seconds and nanos, any offset, any fraction", () => {
  assert.deepEqual(parseRfc3339("1970-01-01T00:00:00Z"), { seconds: 0, nanos: 0 });
  assert.deepEqual(parseRfc3339("2024-01-02T03:04:05Z"), { seconds: 1704164645, nanos: 0 });
  assert.deepEqual(parseRfc3339("2024-01-02T03:04:05.123456Z"), { seconds: 1704164645, nanos: 123456000 });
  assert.deepEqual(parseRfc3339("2024-01-02T03:04:05.123456789123Z"), { seconds: 1704164645, nanos: 123456789 });
  assert.deepEqual(parseRfc3339("2024-01-02T05:04:05+02:00"), { seconds: 1704164645, nanos: 0 });
  assert.deepEqual(parseRfc3339("2024-01-01T22:04:05-05:00"), { seconds: 1704164645, nanos: 0 });
  assert.deepEqual(parseRfc3339("2024-02-29T00:00:00Z"), { seconds: 1709164800, nanos: 0 });
  assert.deepEqual(parseRfc3339("1900-03-01T00:00:00z"), { seconds: -2203891200, nanos: 0 });
  assert.deepEqual(parseRfc3339("0001-01-01T00:00:00Z"), { seconds: ZERO_TIME_SECONDS, nanos: 0 });
  assert.deepEqual(parseRfc3339("0099-12-31T23:59:59Z"), { seconds: -59011459201, nanos: 0 });
  for (const bad of ["", "2024-01-02", "2024-01-02 03:04:05Z", "2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "2024-01-02T24:00:00Z", "2024-01-02T03:04:05", "yesterday"]) {
    assert.equal(parseRfc3339(bad), undefined, bad);
  }
});

test("formats UTC at seconds (Time) or microseconds (MicroTime), as Go marshals them", () => {
  assert.equal(formatRfc3339(1704164645, 999999999, false), "2024-01-02T03:04:05Z");
  assert.equal(formatRfc3339(1704164645, 123456789, true), "2024-01-02T03:04:05.123456Z");
  assert.equal(formatRfc3339(1704164645, 0, true), "2024-01-02T03:04:05.000000Z");
  assert.equal(formatRfc3339(-2203891200, 0, false), "1900-03-01T00:00:00Z");
  assert.equal(formatRfc3339(ZERO_TIME_SECONDS, 0, false), "0001-01-01T00:00:00Z");
  assert.equal(formatRfc3339(-59011459201, 0, false), "0099-12-31T23:59:59Z");
  for (let s = -62135596800; s < 253402300800; s += 987654321) assert.deepEqual(parseRfc3339(formatRfc3339(s, 0, false)), { seconds: s, nanos: 0 });
});
