// The API server's metrics over real HTTPS and a real lmdb store: every
// stable metric of seed 002 with exactly its label names (against the table
// transcribed from the seed), the request labels upstream uses, object
// counts, the store size, streaming-list latency, the admission hooks, and
// `promtool check metrics` on the exposition.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MetricsRegistry } from "../component/metrics/index.js";
import { stableMetricsOf } from "../component/metrics/stable-metrics.js";
import {
  assertDeclaresMetric, assertExposesMetric, parseExposition, promtoolCheckMetrics, promtoolSkipReason, type ParsedFamily,
} from "../component/metrics/testing.js";
import { AdmissionChain } from "./admission/index.js";
import { AdmissionMetrics } from "./admission-metrics.js";
import { sampleApi } from "./testing/sample-api.js";
import { startTestServer, type TestServer } from "./testing/harness.js";

const W = "/apis/samples.orch.io/v1/namespaces/default/widgets";
const widget = (name: string) => ({ apiVersion: "samples.orch.io/v1", kind: "Widget", metadata: { name }, spec: { color: "red" } });

function sample(families: Map<string, ParsedFamily>, name: string, labels: Record<string, string>, sampleName = name): number | undefined {
  const f = families.get(name);
  const s = f?.samples.find((x) => x.name === sampleName && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  return s?.value;
}

describe("API server metrics", () => {
  let t: TestServer;
  let families: Map<string, ParsedFamily>;
  let text: string;

  before(async () => {
    t = await startTestServer({ modules: [sampleApi], gates: { NativeHistograms: "true" } });
    assert.equal((await t.request("POST", W, { body: widget("a") })).status, 201);
    assert.equal((await t.request("POST", `${W}?dryRun=All`, { body: widget("b") })).status, 201);
    assert.equal((await t.request("GET", `${W}/a`)).status, 200);
    assert.equal((await t.request("GET", `${W}/missing`)).status, 404);
    assert.equal((await t.request("GET", W)).status, 200);
    assert.equal((await t.request("GET", "/apis/samples.orch.io/v1/widgets")).status, 200);
    const watch = await t.watch(`${W}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
    await watch.next(2); // the object, then the initial-events-end bookmark
    text = (await t.request("GET", "/metrics")).text;
    families = parseExposition(text);
    assert.equal(sample(families, "apiserver_longrunning_requests", { verb: "WATCH", resource: "widgets" }), 1, "the open watch is long-running");
    watch.close();
    // Wait for the server to see the watch end (no sleep: poll the gauge).
    for (let i = 0; i < 100; i++) {
      text = (await t.request("GET", "/metrics")).text;
      families = parseExposition(text);
      if (sample(families, "apiserver_longrunning_requests", { verb: "WATCH", resource: "widgets" }) === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await t.request("GET", "/healthz");
    text = (await t.request("GET", "/metrics")).text;
    families = parseExposition(text);
  });
  after(async () => t?.close());

  test("every stable metric of the seed's table: exposed with exactly its labels, or declared with them until it has samples", () => {
    const declaredOnly = new Set([
      // orch serves no deprecated API versions yet.
      "apiserver_requested_deprecated_apis",
      // Recorded by the admission chain once it is wired (AdmissionMetrics), and orch has no webhooks.
      "apiserver_admission_controller_admission_duration_seconds",
      "apiserver_admission_step_admission_duration_seconds",
      "apiserver_admission_webhook_admission_duration_seconds",
    ]);
    const table = stableMetricsOf("orch-apiserver");
    assert.equal(table.length, 11);
    for (const m of table) {
      if (declaredOnly.has(m.name)) assertDeclaresMetric(t.server.metrics, m);
      else assertExposesMetric(families, m);
    }
    assert.match(text, /# HELP apiserver_request_total \[STABLE\] /);
    assert.match(text, /# HELP apiserver_storage_objects \[STABLE\] \(Deprecated since 1\.34\.0\) /);
  });

  test("requests are labelled as upstream labels them", () => {
    const base = { component: "apiserver", group: "samples.orch.io", version: "v1", resource: "widgets", subresource: "" };
    assert.equal(sample(families, "apiserver_request_total", { ...base, verb: "POST", scope: "namespace", dry_run: "", code: "201" }), 1);
    assert.equal(sample(families, "apiserver_request_total", { ...base, verb: "POST", scope: "namespace", dry_run: "All", code: "201" }), 1);
    assert.equal(sample(families, "apiserver_request_total", { ...base, verb: "GET", scope: "resource", code: "200" }), 1);
    assert.equal(sample(families, "apiserver_request_total", { ...base, verb: "GET", scope: "resource", code: "404" }), 1);
    assert.equal(sample(families, "apiserver_request_total", { ...base, verb: "LIST", scope: "namespace", code: "200" }), 1);
    assert.equal(sample(families, "apiserver_request_total", { ...base, verb: "LIST", scope: "cluster", code: "200" }), 1);
    assert.equal(sample(families, "apiserver_request_total", { ...base, verb: "WATCH", scope: "namespace", code: "200" }), 1);
    assert.equal(sample(families, "apiserver_request_total", { verb: "GET", resource: "", subresource: "/healthz", code: "200" }), 1);
    assert.equal(sample(families, "apiserver_request_duration_seconds", { ...base, verb: "GET", scope: "resource" }, "apiserver_request_duration_seconds_count"), 2);
    assert.equal(sample(families, "apiserver_request_duration_seconds", { verb: "WATCH" }, "apiserver_request_duration_seconds_count"), undefined, "watches stay out of the latency histogram");
    assert.ok((sample(families, "apiserver_response_sizes", { ...base, verb: "GET", scope: "resource" }, "apiserver_response_sizes_sum") ?? 0) > 100);
    assert.equal(sample(families, "apiserver_current_inflight_requests", { request_kind: "readOnly" }), 1, "the scrape itself");
    assert.equal(sample(families, "apiserver_current_inflight_requests", { request_kind: "mutating" }), 0);
    assert.equal(sample(families, "field_validation_request_duration_seconds", { field_validation: "Warn", status: "201" }, "field_validation_request_duration_seconds_count"), 2);
    assert.equal(sample(families, "apiserver_watch_list_duration_seconds", { group: "samples.orch.io", resource: "widgets", scope: "namespace", version: "v1" }, "apiserver_watch_list_duration_seconds_count"), 1);
    // Creates go through the server's admission chain (the two widgets here, and the system namespaces made at start):
    // both phases of each are timed, and NamespaceLifecycle for the two namespaced ones.
    const step = (type: string) => sample(families, "apiserver_admission_step_admission_duration_seconds", { operation: "CREATE", rejected: "false", type }, "apiserver_admission_step_admission_duration_seconds_count");
    assert.ok((step("admit") ?? 0) >= 2);
    assert.equal(step("validate"), step("admit"));
    assert.equal(sample(families, "apiserver_admission_controller_admission_duration_seconds", { name: "NamespaceLifecycle", operation: "CREATE", rejected: "false", type: "admit" }, "apiserver_admission_controller_admission_duration_seconds_count"), 2);
  });

  test("object counts and the store size are read from storage", () => {
    assert.equal(sample(families, "apiserver_storage_objects", { resource: "namespaces" }), 4, "default and the three system namespaces, counted at start");
    assert.equal(sample(families, "apiserver_resource_objects", { group: "", resource: "namespaces" }), 4);
    assert.ok((sample(families, "apiserver_storage_size_bytes", { storage_cluster_id: "lmdb" }) ?? 0) > 0);
  });

  test("the API server's /metrics passes promtool check metrics", async (ctx) => {
    const skip = promtoolSkipReason();
    if (skip !== undefined) return ctx.skip(skip);
    const r = await promtoolCheckMetrics(text);
    assert.equal(r.code, 0, r.output);
  });
});

test("admission hooks: plugins and phases land in the stable admission histograms with rejected and type", async () => {
  const registry = new MetricsRegistry();
  const am = new AdmissionMetrics(registry);
  const chain = new AdmissionChain({
    mutating: [{ name: "AlwaysFine", admit: () => {} }],
    validating: [{ name: "Refuser", validate: () => { throw new Error("no"); } }],
    timing: am,
  });
  const attrs = { operation: "CREATE", resource: { group: "", resource: "pods" }, kind: "Pod", subresource: undefined, namespace: "default", name: "p", object: undefined, oldObject: undefined, dryRun: false } as const;
  await chain.admit(attrs);
  await assert.rejects(chain.validate(attrs), /no/);
  const f = parseExposition(registry.expose());
  assert.equal(sample(f, "apiserver_admission_controller_admission_duration_seconds", { name: "AlwaysFine", operation: "CREATE", rejected: "false", type: "admit" }, "apiserver_admission_controller_admission_duration_seconds_count"), 1);
  assert.equal(sample(f, "apiserver_admission_controller_admission_duration_seconds", { name: "Refuser", rejected: "true", type: "validate" }, "apiserver_admission_controller_admission_duration_seconds_count"), 1);
  assert.equal(sample(f, "apiserver_admission_step_admission_duration_seconds", { operation: "CREATE", rejected: "true", type: "validate" }, "apiserver_admission_step_admission_duration_seconds_count"), 1);
  for (const m of stableMetricsOf("orch-apiserver").filter((s) => s.name.includes("admission_") && !s.name.includes("webhook"))) assertExposesMetric(f, m);
});
