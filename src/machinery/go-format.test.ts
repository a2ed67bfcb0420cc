import { test } from "node:test";
import assert from "node:assert/strict";
import { goJson, goNumber, goQuote } from "./go-format.js";

test("goQuote matches strconv.Quote", () => {
  const rows: Array<[string, string]> = [
    ["abc", `"abc"`],
    ["", `""`],
    [`a"b`, `"a\\"b"`],
    ["a\\b", `"a\\\\b"`],
    ["tab\tnl\n", `"tab\\tnl\\n"`],
    ["\x00\x7f", `"\\x00\\x7f"`],
    ["héllo", `"héllo"`],
    ["\u00a0", `"\\u00a0"`],
    ["😀", `"😀"`],
  ];
  for (const [input, want] of rows) assert.equal(goQuote(input), want, JSON.stringify(input));
});

test("goNumber matches %v", () => {
  const rows: Array<[number, string]> = [
    [-1, "-1"],
    [1000000, "1000000"],
    [0.5, "0.5"],
    [1.5e-7, "1.5e-07"],
    [1234567.5, "1.2345675e+06"],
    [0.00001, "1e-05"],
    [0.0001, "0.0001"],
  ];
  for (const [n, want] of rows) assert.equal(goNumber(n), want, String(n));
});

test("goJson sorts map keys and escapes HTML characters", () => {
  assert.equal(goJson({ b: 1, a: [true, null, "x&y"] }), `{"a":[true,null,"x\\u0026y"],"b":1}`);
  assert.equal(goJson(undefined), "null");
});
