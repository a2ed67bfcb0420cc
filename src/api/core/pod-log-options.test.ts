import { test } from "node:test";
import assert from "node:assert/strict";
import { LogOptionsError, parsePodLogOptions, podLogQuery, validatePodLogOptions } from "./pod-log-options.js";

const parse = (q: string) => parsePodLogOptions(new URLSearchParams(q));

test("parsePodLogOptions: upstream's bools (absent, 0, false, f are false), ints and RFC 3339 times", () => {
  assert.deepEqual(parse("container=c&follow=true&previous=1&timestamps=F&tailLines=10&limitBytes=5&sinceSeconds=3"), {
    container: "c", follow: true, previous: true, timestamps: false, insecureSkipTLSVerifyBackend: false, tailLines: 10, limitBytes: 5, sinceSeconds: 3,
  });
  assert.equal(parse("sinceTime=2026-01-02T03:04:05Z").sinceTime, Date.UTC(2026, 0, 2, 3, 4, 5));
  assert.equal(parse("follow=yes").follow, true);
  assert.equal(parse("").follow, false);
});

test("parsePodLogOptions: the agent's legacy tail parameter; all means no limit", () => {
  assert.equal(parse("tail=4").tailLines, 4);
  assert.equal(parse("tail=all&tailLines=4").tailLines, undefined);
});

test("parsePodLogOptions: a value that does not decode is a LogOptionsError with strconv's message", () => {
  assert.throws(() => parse("tailLines=abc"), (e: Error) => e instanceof LogOptionsError && e.message === 'strconv.ParseInt: parsing "abc": invalid syntax');
  assert.throws(() => parse("limitBytes=1.5"), LogOptionsError);
  assert.throws(() => parse("sinceTime=yesterday"), LogOptionsError);
});

test("validatePodLogOptions: negative tail, non-positive limit and since, both since forms", () => {
  const fields = (q: string) => validatePodLogOptions(parse(q)).map((e) => `${e.field}: ${e.detail}`);
  assert.deepEqual(fields("tailLines=0&limitBytes=1&sinceSeconds=1"), []);
  assert.deepEqual(fields("tailLines=-1"), ["tailLines: must be greater than or equal to 0"]);
  assert.deepEqual(fields("limitBytes=0"), ["limitBytes: must be greater than 0"]);
  assert.deepEqual(fields("sinceSeconds=0"), ["sinceSeconds: must be greater than 0"]);
  assert.deepEqual(fields("sinceSeconds=5&sinceTime=2026-01-02T03:04:05Z"), [": at most one of `sinceTime` or `sinceSeconds` may be specified"]);
});

test("podLogQuery: what the API server sends the agent (no container, no insecureSkipTLSVerifyBackend)", () => {
  const q = podLogQuery(parse("container=c&follow=1&tailLines=2&sinceTime=2026-01-02T03:04:05.500Z&insecureSkipTLSVerifyBackend=true"));
  assert.equal(q.toString(), "follow=true&sinceTime=2026-01-02T03%3A04%3A05Z&tailLines=2");
});
