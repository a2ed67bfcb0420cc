import { test } from "node:test";
import assert from "node:assert/strict";
import {
  GENERATE_NAME_ALPHABET,
  generateName,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  isValidPathSegmentName,
  isValidPathSegmentPrefix,
  maskTrailingDash,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  regexError,
} from "./names.js";

const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const NAME_PART =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

type Row = [string, string[]];

const dns1123Label: Row[] = [
  ["a", []],
  ["my-name", []],
  ["123-abc", []],
  ["a".repeat(63), []],
  ["a".repeat(64), ["must be no more than 63 characters"]],
  ["", [LABEL_MSG]],
  ["My-Name", [LABEL_MSG]],
  ["-a", [LABEL_MSG]],
  ["a-", [LABEL_MSG]],
  ["a_b", [LABEL_MSG]],
  ["a.b", ["must not contain dots"]],
  ["A".repeat(64), ["must be no more than 63 characters", LABEL_MSG]],
];

const dns1123Subdomain: Row[] = [
  ["example.com", []],
  ["a", []],
  ["a-b.c-d", []],
  ["a".repeat(253), []],
  ["a".repeat(254), ["must be no more than 253 characters"]],
  ["", [SUBDOMAIN_MSG]],
  ["a..b", [SUBDOMAIN_MSG]],
  [".a", [SUBDOMAIN_MSG]],
  ["Example.com", [SUBDOMAIN_MSG]],
];

const dns1035: Row[] = [
  ["my-svc", []],
  ["1abc", [DNS1035_MSG]],
  ["a".repeat(64), ["must be no more than 63 characters"]],
];

const qualified: Row[] = [
  ["app", []],
  ["MyName", []],
  ["my.name", []],
  ["123-abc", []],
  ["example.com/MyName", []],
  ["orch.io/hostname", []],
  ["", ["name part must be non-empty", NAME_PART]],
  ["/a", ["prefix part must be non-empty"]],
  ["Example.com/a", ["prefix part " + SUBDOMAIN_MSG]],
  ["a/", ["name part must be non-empty", NAME_PART]],
  ["-a", [NAME_PART]],
  ["a".repeat(64), ["name part must be no more than 63 characters"]],
  [
    "a/b/c",
    [
      "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ],
  ],
];

const labelValues: Row[] = [
  ["", []],
  ["v1", []],
  ["my_value", []],
  ["a".repeat(63), []],
  ["a".repeat(64), ["must be no more than 63 characters"]],
  ["-a", [LABEL_VALUE_MSG]],
  ["a b", [LABEL_VALUE_MSG]],
];

const pathSegments: Row[] = [
  ["web", []],
  [".", ["may not be '.'"]],
  ["..", ["may not be '..'"]],
  ["a/b", ["may not contain '/'"]],
  ["a%b", ["may not contain '%'"]],
  ["a/%", ["may not contain '/'", "may not contain '%'"]],
  ["...", []],
];

const suites: Array<[string, (v: string) => string[], Row[]]> = [
  ["isDNS1123Label", isDNS1123Label, dns1123Label],
  ["isDNS1123Subdomain", isDNS1123Subdomain, dns1123Subdomain],
  ["isDNS1035Label", isDNS1035Label, dns1035],
  ["isQualifiedName", isQualifiedName, qualified],
  ["isValidLabelValue", isValidLabelValue, labelValues],
  ["isValidPathSegmentName", isValidPathSegmentName, pathSegments],
];

for (const [name, fn, rows] of suites) {
  test(name, () => {
    for (const [input, want] of rows) assert.deepEqual(fn(input), want, `${name}(${JSON.stringify(input.slice(0, 20))})`);
  });
}

test("path segment prefixes may be . or .. but not contain / or %", () => {
  assert.deepEqual(isValidPathSegmentPrefix(".."), []);
  assert.deepEqual(isValidPathSegmentPrefix("a/"), ["may not contain '/'"]);
});

test("generateName prefixes may end in a dash", () => {
  assert.equal(maskTrailingDash("web-"), "wea");
  assert.equal(maskTrailingDash("web"), "web");
  assert.equal(maskTrailingDash("-"), "-");
  assert.deepEqual(nameIsDNSSubdomain("web-", true), []);
  assert.deepEqual(nameIsDNSSubdomain("web-", false), [SUBDOMAIN_MSG]);
  assert.deepEqual(nameIsDNSLabel("my-pod-", true), []);
});

test("generateName appends 5 characters from upstream's alphabet and fits 63", () => {
  const alphabet = new RegExp(`^[${GENERATE_NAME_ALPHABET}]{5}$`);
  const a = generateName("web-");
  assert.equal(a.length, 9);
  assert.ok(a.startsWith("web-"));
  assert.match(a.slice(4), alphabet);
  const long = generateName("x".repeat(100));
  assert.equal(long.length, 63);
  assert.ok(long.startsWith("x".repeat(58)));
  assert.equal(generateName("y".repeat(300), 253).length, 253);
  const seen = new Set(Array.from({ length: 200 }, () => generateName("p-")));
  assert.ok(seen.size > 190, "suffixes are random");
  for (const n of seen) assert.deepEqual(isDNS1123Label(n), []);
});

test("generateName keeps drawing fresh random bytes past its pool (4 KiB) and stays uniform", () => {
  // 5,000 names use about 27,000 random bytes: the pool is refilled several times.
  const suffixes = Array.from({ length: 5000 }, () => generateName("p-").slice(2));
  // 27^5 suffixes: 5,000 draws make 0.87 repeated pairs on average (5,000² / 2·27^5), and more than 8 has a
  // chance of about one in a million (Poisson); a reused pool repeats hundreds. (≥ 4,998 failed 6 % of runs.)
  assert.ok(new Set(suffixes).size >= 4992, "suffixes do not repeat more than chance does");
  const counts = new Map<string, number>();
  for (const s of suffixes) for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  assert.equal(counts.size, GENERATE_NAME_ALPHABET.length, "every letter of the alphabet occurs");
  const expected = (5000 * 5) / GENERATE_NAME_ALPHABET.length;
  for (const [ch, n] of counts) assert.ok(Math.abs(n - expected) < expected * 0.2, `letter ${ch}: ${n} against ${expected.toFixed(0)} expected`);
});

test("regexError formats examples like upstream", () => {
  assert.equal(regexError("bad", "x+"), "bad (regex used for validation is 'x+')");
  assert.equal(regexError("bad", "x+", "x"), "bad (e.g. 'x', regex used for validation is 'x+')");
  assert.equal(regexError("bad", "x+", "x", "xx"), "bad (e.g. 'x',  or 'xx', regex used for validation is 'x+')");
});
