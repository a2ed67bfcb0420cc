import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MetricsRegistry, NATIVE_MAX_BUCKETS, validateShowHiddenMetricsVersion } from "./index.js";
import { decodeMetricFamilies } from "./testing.js";

describe("MetricsRegistry", () => {
  it("exposes counters, gauges and histograms in text format 0.0.4 with stability in the help", () => {
    const r = new MetricsRegistry();
    const c = r.counter({ name: "x_total", help: "Xs.", labelNames: ["a"], stabilityLevel: "STABLE" });
    c.inc({ a: "1" });
    c.inc({ a: "1" }, 5);
    const g = r.gauge({ name: "g", help: "A gauge.", labelNames: ["a"] });
    g.set({ a: "q\"\\\n" }, 3);
    g.inc({ a: "q\"\\\n" });
    g.dec({ a: "q\"\\\n" }, 2);
    const h = r.histogram({ name: "h_seconds", help: "H.", buckets: [0.1, 1, 10] });
    h.observe({}, 0.25);
    h.observe(undefined, 20);
    const text = r.expose();
    assert.match(text, /# HELP x_total \[STABLE\] Xs\.\n# TYPE x_total counter\nx_total\{a="1"\} 6\n/);
    assert.match(text, /# HELP g \[ALPHA\] A gauge\.\n# TYPE g gauge\ng\{a="q\\"\\\\\\n"\} 2\n/);
    assert.ok(text.includes(
      'h_seconds_bucket{le="0.1"} 0\nh_seconds_bucket{le="1"} 1\nh_seconds_bucket{le="10"} 1\nh_seconds_bucket{le="+Inf"} 2\nh_seconds_sum 20.25\nh_seconds_count 2\n',
    ), text);
    assert.match(text, /registered_metrics_total\{stability_level="STABLE",deprecated_version=""\} 1\n/);
    assert.match(text, /registered_metrics_total\{stability_level="ALPHA",deprecated_version=""\} 2\n/);
  });

  it("returns the existing metric when a name is registered twice, and refuses another kind", () => {
    const r = new MetricsRegistry();
    const a = r.counter({ name: "x_total", help: "x" });
    assert.equal(r.counter({ name: "x_total", help: "x" }), a);
    assert.throws(() => r.gauge({ name: "x_total", help: "x" }), /already registered as a counter/);
  });

  it("rejects unknown and missing labels, negative counter increments and bad names", () => {
    const r = new MetricsRegistry();
    const c = r.counter({ name: "x_total", help: "x", labelNames: ["a"] });
    assert.throws(() => c.inc({ b: "1" }), /unknown label "b"/);
    assert.throws(() => c.inc({}), /missing label "a"/);
    assert.throws(() => c.inc({ a: "1" }, -1), /cannot add -1/);
    assert.throws(() => r.counter({ name: "bad-name", help: "x" }), /invalid metric name/);
    assert.throws(() => r.histogram({ name: "h", help: "x", labelNames: ["le"] }), /reserved/);
  });

  it("hides deprecated metrics after their grace period and shows them for the previous version", () => {
    const hidden = new MetricsRegistry({ version: "1.36" });
    const old = hidden.gauge({ name: "old", help: "Old.", deprecatedVersion: "1.34.0" });
    old.set({}, 1);
    const stable = hidden.gauge({ name: "old_stable", help: "Old.", stabilityLevel: "STABLE", deprecatedVersion: "1.34.0" });
    stable.set({}, -1);
    let text = hidden.expose();
    assert.ok(!/^old /m.test(text), "alpha deprecated in 1.34 is hidden in 1.36");
    assert.match(text, /# HELP old_stable \[STABLE\] \(Deprecated since 1\.34\.0\) Old\.\nold_stable -1|old_stable -1/);
    assert.match(text, /^hidden_metrics_total 1$/m);
    assert.match(text, /registered_metrics_total\{stability_level="STABLE",deprecated_version="1.34.0"\} 1/);

    const shown = new MetricsRegistry({ version: "1.36", showHiddenMetricsForVersion: "1.35" });
    shown.gauge({ name: "old", help: "Old.", deprecatedVersion: "1.34.0" }).set({}, 1);
    text = shown.expose();
    assert.match(text, /^old 1$/m);
    assert.match(text, /^hidden_metrics_total 0$/m);
    assert.equal(validateShowHiddenMetricsVersion("1.33", "1.36"),
      "--show-hidden-metrics-for-version must be omitted or have the value '1.35'. Only the previous minor version is allowed");
    assert.throws(() => new MetricsRegistry({ showHiddenMetricsForVersion: "1.2" }), /Only the previous minor version/);
  });

  it("--disabled-metrics: a disabled metric records and exposes nothing and is counted", () => {
    const r = new MetricsRegistry({ disabledMetrics: ["off_total"] });
    const off = r.counter({ name: "off_total", help: "x" });
    off.inc();
    const text = r.expose();
    assert.ok(!text.includes("off_total "));
    assert.match(text, /^disabled_metrics_total 1$/m);
    assert.equal(r.isExposed("off_total"), false);
  });

  it("exposes OpenMetrics 1.0 with _total samples, float bounds and # EOF", () => {
    const r = new MetricsRegistry();
    r.counter({ name: "req_total", help: "R." }).inc();
    r.histogram({ name: "h", help: "H.", buckets: [1] }).observe({}, 0.5);
    const om = r.exposeAs("openmetrics");
    assert.match(om, /# TYPE req counter\n# HELP req \[ALPHA\] R\.\nreq_total 1\n/);
    assert.match(om, /h_bucket\{le="1.0"\} 1\n/);
    assert.ok(om.endsWith("# EOF\n"));
  });

  it("summaries, timing-ratio histograms and custom collectors", () => {
    let now = 0;
    const r = new MetricsRegistry();
    const s = r.summary({ name: "s", help: "S.", quantiles: [0.5] });
    for (let i = 1; i <= 100; i++) s.observe({}, i);
    r.collector({ name: "objects", help: "O.", kind: "gauge", labelNames: ["resource"], collect: () => [{ labels: { resource: "pods" }, value: -1 }] });
    const ratio = r.timingRatioHistogram({ name: "ratio", help: "T.", buckets: [0.5, 1], initialDenominator: 4, now: () => now });
    ratio.set({}, 1); // 1/4 from t=0
    now = 10;
    ratio.set({}, 3); // 3/4 from t=10
    now = 15;
    const text = r.expose();
    assert.match(text, /^s\{quantile="0.5"\} 50$/m);
    assert.match(text, /^s_count 100$/m);
    assert.match(text, /^objects\{resource="pods"\} -1$/m);
    // 10 s at 0.25 (<= 0.5), 5 s at 0.75 (<= 1).
    assert.match(text, /^ratio_bucket\{le="0.5"\} 10$/m);
    assert.match(text, /^ratio_bucket\{le="1"\} 15$/m);
    assert.match(text, /^ratio_sum 6.25$/m);
    assert.match(text, /^ratio_count 15$/m);
  });

  it("keeps native buckets only with the gate, and at most 160 per histogram", () => {
    const off = new MetricsRegistry();
    off.histogram({ name: "h", help: "H." }).observe({}, 1);
    assert.equal(off.collect().find((f) => f.name === "h")!.series[0]!.native, undefined);

    const on = new MetricsRegistry({ nativeHistograms: true });
    const h = on.histogram({ name: "h", help: "H.", labelNames: ["a"] });
    for (let i = 0; i < 100_000; i++) h.observe({ a: "x" }, Math.exp((i % 5000) / 100) * 1e-6);
    h.observe({ a: "x" }, 0);
    h.observe({ a: "x" }, -3);
    const native = on.collect().find((f) => f.name === "h")!.series[0]!.native!;
    const buckets = native.positiveCounts.length + native.negativeCounts.length;
    assert.ok(buckets <= NATIVE_MAX_BUCKETS, `${buckets} buckets`);
    assert.ok(native.schema < 3, "resolution was reduced");
    assert.equal(native.zeroCount, 1);
    assert.equal(native.positiveCounts.reduce((a, b) => a + b, 0), 100_000);
    assert.deepEqual(native.negativeCounts, [1]);
    // Text keeps classic buckets only.
    assert.ok(!on.expose().includes("schema"));
  });

  it("encodes the delimited protobuf exposition with classic and native buckets", () => {
    const r = new MetricsRegistry({ nativeHistograms: true });
    r.counter({ name: "c_total", help: "C.", labelNames: ["a"] }).inc({ a: "b" }, 2);
    const h = r.histogram({ name: "h", help: "H.", buckets: [1, 2] });
    h.observe({}, 0.5);
    h.observe({}, 1.5);
    h.observe({}, 4);
    const families = decodeMetricFamilies(r.exposeAs("protobuf"));
    const c = families.find((f) => f.name === "c_total")!;
    assert.equal(c.type, 0);
    assert.deepEqual(c.metric[0]!.label, [{ name: "a", value: "b" }]);
    assert.equal(c.metric[0]!.counter!.value, 2);
    const hist = families.find((f) => f.name === "h")!.metric[0]!.histogram!;
    assert.equal(hist.sampleCount, 3);
    assert.equal(hist.sampleSum, 6);
    assert.deepEqual(hist.bucket.map((b) => [b.upperBound, b.cumulativeCount]), [[1, 1], [2, 2]]);
    assert.equal(hist.schema, 3);
    assert.ok(hist.zeroThreshold > 0);
    // Buckets of 0.5 (index -8), 1.5 (index 5), 4 (index 16) at schema 3, decoded back from spans and deltas.
    assert.deepEqual(hist.positiveBuckets, [[-8, 1], [5, 1], [16, 1]]);
  });
});
