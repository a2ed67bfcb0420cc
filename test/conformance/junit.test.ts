import assert from "node:assert/strict";
import { test } from "node:test";
import { focusFor, mergeShards, parseJUnit } from "./junit.js";
import { writeReport } from "./report.js";

// A report as ginkgo v1's JUnit reporter writes it for e2e.test.
const XML = `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Kubernetes e2e suite" tests="3" failures="1" errors="0" time="12.5">
  <testcase name="[sig-api-machinery] Watchers should observe add, update, and delete watch notifications on configmaps [Conformance]" classname="Kubernetes e2e suite" time="3.25"></testcase>
  <testcase name="[sig-apps] ReplicationController should serve a basic image on each replica with a public image  [Conformance]" classname="Kubernetes e2e suite" time="300.1">
    <failure type="Failure">/workspace/test/e2e/apps/rc.go:71&#xA;Unexpected error:&#xA;    &lt;*errors.StatusError&gt;: the server could not find the requested resource</failure>
  </testcase>
  <testcase name="[sig-node] Pods should be updated [NodeConformance] [Conformance]" classname="Kubernetes e2e suite" time="0">
    <skipped></skipped>
  </testcase>
</testsuite>`;

test("parseJUnit reads passed, failed (with the unescaped message) and skipped specs", () => {
  const specs = parseJUnit(XML);
  assert.deepEqual(specs.map((s) => s.result), ["passed", "failed", "skipped"]);
  assert.equal(specs[0]!.seconds, 3.25);
  assert.match(specs[1]!.message!, /<\*errors\.StatusError>: the server could not find/);
  assert.match(specs[1]!.name, /public image  \[Conformance\]$/);
});

test("focusFor escapes the names' regular-expression characters so each matches only itself", () => {
  const names = ["[sig-apps] Job should run (a) job [Conformance]", "a.b*c"];
  const re = new RegExp(`^(?:${focusFor(names)})$`);
  for (const n of names) assert.ok(re.test(n), n);
  assert.ok(!re.test("[sig-apps] Job should run a job [Conformance]"));
  assert.ok(!re.test("aXbbc"));
});

test("the report counts passed, failed and not run, and names what failed", () => {
  const specs = parseJUnit(XML);
  const selected = specs.map((s) => s.name);
  const md = writeReport(
    { date: new Date("2026-11-28T00:00:00Z"), minutes: 5, commit: "abc1234", e2eVersion: "v1.23.16", runtime: "embedded", focus: "\\[Conformance\\]", total: 346 },
    specs,
    [{ name: "[sig-x] needs a cloud [Conformance]", reason: "a cloud provider" }],
    selected,
  );
  assert.match(md, /\| \*\*passed\*\* \| \*\*1\*\* \|/);
  assert.match(md, /\| failed \| 1 \|/);
  assert.match(md, /\| selected but not run \(a shard stopped early\) \| 1 \|/);
  assert.match(md, /\| failed \| 300 \| Unexpected error: <\*errors\.StatusError>: the server could not find the requested resource \|/);
  assert.match(md, /\| \[sig-x\] needs a cloud \[Conformance\] \| a cloud provider \|/);
});

test("mergeShards: a spec's own shard's outcome wins over the skips the other shards report for it", () => {
  const spec = (name: string, result: "passed" | "failed" | "skipped") => ({ name, result, seconds: 0 });
  const merged = mergeShards([spec("a", "skipped"), spec("b", "failed"), spec("a", "passed"), spec("b", "skipped"), spec("c", "skipped")]);
  assert.deepEqual(Object.fromEntries(merged.map((s) => [s.name, s.result])), { a: "passed", b: "failed", c: "skipped" });
});
