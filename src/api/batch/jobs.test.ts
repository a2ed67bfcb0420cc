import { test } from "node:test";
import assert from "node:assert/strict";
import { findSubresource } from "../subresources/index.js";
import type { ApiObject } from "../../machinery/index.js";
import { namingFor } from "../../machinery/naming.js";
import { create, update, template, NOW, ctx } from "../apps/testing.js";
import { jobs } from "./jobs.js";
import { countIndexes } from "./job-spec.js";

const def = jobs(namingFor());
const UID = "11111111-2222-3333-4444-555555555555";
const job = (spec: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name: "pi", namespace: "default", ...extra },
  spec: { template: template({ app: "pi" }, { restartPolicy: "Never" }), ...spec },
});
const specOf = (o: ApiObject) => o["spec"] as Record<string, unknown>;

test("jobs: declaration", () => {
  assert.equal(def.group, "batch");
  assert.deepEqual(def.categories, ["all"]);
  assert.ok(findSubresource(def, "status"));
  assert.equal(findSubresource(def, "scale"), undefined);
});

test("jobs: defaults and the generated selector", () => {
  const { obj, errors } = create(def, job());
  assert.deepEqual(errors, []);
  const spec = specOf(obj);
  assert.equal(spec["completions"], 1);
  assert.equal(spec["parallelism"], 1);
  assert.equal(spec["backoffLimit"], 6);
  assert.equal(spec["completionMode"], "NonIndexed");
  assert.equal(spec["suspend"], false);
  assert.equal(spec["podReplacementPolicy"], "TerminatingOrFailed");
  assert.deepEqual(spec["selector"], { matchLabels: { "batch.orch.io/controller-uid": UID } });
  assert.deepEqual((spec["template"] as { metadata: unknown }).metadata, {
    labels: {
      app: "pi",
      "job-name": "pi",
      "batch.orch.io/job-name": "pi",
      "controller-uid": UID,
      "batch.orch.io/controller-uid": UID,
    },
  });
  assert.deepEqual(obj.metadata.labels, { app: "pi" }); // the Job's labels come from the user's template labels
  assert.deepEqual(obj["status"], {});
  // Upstream names with --api-group-suffix=k8s.io.
  const upstream = create(jobs(namingFor("k8s.io")), job(), { ...ctx, naming: namingFor("k8s.io") }).obj;
  assert.deepEqual(specOf(upstream)["selector"], { matchLabels: { "batch.kubernetes.io/controller-uid": UID } });
  // Only parallelism set: completions stay unset.
  assert.equal(specOf(create(def, job({ parallelism: 3 })).obj)["completions"], undefined);
  // Per-index limits make the global limit unlimited; a failure policy wants Failed replacements.
  const indexed = specOf(create(def, job({ completionMode: "Indexed", completions: 3, backoffLimitPerIndex: 1 })).obj);
  assert.equal(indexed["backoffLimit"], 2147483647);
  const pfp = specOf(create(def, job({ podFailurePolicy: { rules: [{ action: "Ignore", onPodConditions: [{ type: "DisruptionTarget" }] }] } })).obj);
  assert.equal(pfp["podReplacementPolicy"], "Failed");
  assert.deepEqual((pfp["podFailurePolicy"] as { rules: { onPodConditions: unknown }[] }).rules[0]!.onPodConditions, [{ type: "DisruptionTarget", status: "True" }]);
});

test("jobs: generateName becomes the name before the labels are made", () => {
  const { obj, errors } = create(def, { ...job(), metadata: { generateName: "pi-", namespace: "default" } });
  assert.deepEqual(errors, []);
  assert.match(obj.metadata.name!, /^pi-[a-z0-9]{5}$/);
  assert.equal((specOf(obj)["template"] as { metadata: { labels: Record<string, string> } }).metadata.labels["job-name"], obj.metadata.name);
});

test("jobs: validation messages", () => {
  const cases: [string, Record<string, unknown>, string[]][] = [
    ["no restart policy", { template: template({ app: "pi" }) }, ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"']],
    ["Always", { template: template({ app: "pi" }, { restartPolicy: "Always" }) }, ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"']],
    ["bogus restart", { template: template({ app: "pi" }, { restartPolicy: "Sometimes" }) }, [
      // The pod spec's own rule, then the Job's, as upstream reports both.
      'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
      'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "OnFailure", "Never"',
    ]],
    ["negatives", { parallelism: -1, backoffLimit: -2, activeDeadlineSeconds: -3 }, [
      "spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
      "spec.activeDeadlineSeconds: Invalid value: -3: must be greater than or equal to 0",
      "spec.backoffLimit: Invalid value: -2: must be greater than or equal to 0",
    ]],
    ["bad completion mode", { completionMode: "Sometimes" }, ['spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"']],
    ["per-index limit without Indexed", { backoffLimitPerIndex: 1 }, ["spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode"]],
    ["indexed without completions", { completionMode: "Indexed", parallelism: 2 }, ["spec.completions: Required value: when completion mode is Indexed"]],
    ["pod failure policy with OnFailure", {
      template: template({ app: "pi" }, { restartPolicy: "OnFailure" }),
      podFailurePolicy: { rules: [{ action: "FailJob", onExitCodes: { operator: "In", values: [1] } }] },
    }, ['spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified']],
    ["pod failure policy rules", {
      podFailurePolicy: { rules: [
        { action: "Explode", onExitCodes: { operator: "In", values: [0, 3, 3, 2] } },
        { action: "Ignore" },
        { action: "FailIndex", onPodConditions: [{ type: "Ready", status: "Maybe" }] },
      ] },
    }, [
      'spec.podFailurePolicy.rules[0].action: Unsupported value: "Explode": supported values: "Count", "FailIndex", "FailJob", "Ignore"',
      "spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator",
      "spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 3",
      "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [0,3,3,2]: must be ordered",
      "spec.podFailurePolicy.rules[1]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
      'spec.podFailurePolicy.rules[2].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set',
      'spec.podFailurePolicy.rules[2].onPodConditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
    ]],
    ["replacement policy with failure policy", {
      podReplacementPolicy: "TerminatingOrFailed",
      podFailurePolicy: { rules: [{ action: "Count", onExitCodes: { operator: "NotIn", values: [0] } }] },
    }, ['spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"']],
    ["success policy", { successPolicy: { rules: [{}] } }, [
      "spec.successPolicy: Invalid value: {\"rules\":[{}]}: requires indexed completion mode",
      "spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes must be specified",
    ]],
    ["manual selector mismatch", { manualSelector: true, selector: { matchLabels: { app: "other" } } }, [
      'spec.template.metadata.labels: Invalid value: {"app":"pi"}: `selector` does not match template `labels`',
    ]],
    ["user set the generated label", { template: template({ app: "pi", "controller-uid": "x" }, { restartPolicy: "Never" }) }, [
      `spec.template.metadata.labels[controller-uid]: Invalid value: {"app":"pi","batch.orch.io/controller-uid":"${UID}","batch.orch.io/job-name":"pi","controller-uid":"x","job-name":"pi"}: must be '${UID}'`,
    ]],
    ["selector not generated", { selector: { matchLabels: { app: "pi" } } }, [
      'spec.selector: Invalid value: {"matchLabels":{"app":"pi","batch.orch.io/controller-uid":"' + UID + '"}}: `selector` not auto-generated',
    ]],
  ];
  for (const [name, spec, want] of cases) assert.deepEqual(create(def, job(spec)).errors, want, name);
  assert.deepEqual(create(def, job({ completionMode: "Indexed", completions: 100 }), ctx).errors, []);
  const long = create(def, { ...job({ completionMode: "Indexed", completions: 100 }), metadata: { name: "a".repeat(61), namespace: "d" } });
  assert.ok(long.errors.some((e) => e.endsWith(`will not able to create pod with invalid DNS label: ${"a".repeat(61)}-99`)), long.errors.join("\n"));
});

test("jobs: immutable template unless suspended and never started", () => {
  const { obj: old } = create(def, job());
  const next = structuredClone(old);
  (specOf(next)["template"] as { spec: Record<string, unknown> }).spec["nodeSelector"] = { zone: "a" };
  const errs = update(def, next, old);
  assert.equal(errs.length, 1);
  assert.match(errs[0]!, /^spec\.template: Invalid value: \{.*\}: field is immutable$/);
  // Suspended and never started: scheduling directives and labels may change, the containers may not.
  const suspended = create(def, job({ suspend: true })).obj;
  const moved = structuredClone(suspended);
  const t = specOf(moved)["template"] as { metadata: { annotations?: Record<string, string> }; spec: Record<string, unknown> };
  t.spec["nodeSelector"] = { zone: "a" };
  t.spec["tolerations"] = [{ key: "k", operator: "Exists" }];
  t.spec["affinity"] = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } };
  t.metadata.annotations = { note: "x" };
  assert.deepEqual(update(def, moved, suspended), []);
  t.spec["containers"] = [{ name: "web", image: "nginx:2" }];
  assert.equal(update(def, moved, suspended).length, 1);
  const started = structuredClone(suspended);
  started["status"] = { startTime: "2026-01-02T03:01:00Z" };
  const again = structuredClone(moved);
  assert.equal(update(def, again, started).length, 1);
});

test("jobs: other immutable fields and elastic Indexed Jobs", () => {
  const { obj: old } = create(def, job({ completions: 2 }));
  const next = structuredClone(old);
  Object.assign(specOf(next), { completions: 3, completionMode: "Indexed", backoffLimit: 1, activeDeadlineSeconds: 10 });
  assert.deepEqual(update(def, next, old), [
    "spec.completions: Invalid value: 3: can only be modified in tandem with spec.parallelism",
    'spec.completionMode: Invalid value: "Indexed": field is immutable',
  ]);
  const { obj: indexed } = create(def, job({ completionMode: "Indexed", completions: 2, parallelism: 2 }));
  const grown = structuredClone(indexed);
  Object.assign(specOf(grown), { completions: 4, parallelism: 4 });
  assert.deepEqual(update(def, grown, indexed), []);
  const plain = structuredClone(old);
  specOf(plain)["completions"] = 5;
  assert.deepEqual(update(def, plain, old), ["spec.completions: Invalid value: 5: field is immutable"]);
});

test("jobs: table cells", () => {
  const { obj } = create(def, job({ completions: 3 }));
  assert.deepEqual(def.table!.columns.map((c) => c.name), ["Name", "Status", "Completions", "Duration", "Age", "Containers", "Images", "Selector"]);
  assert.deepEqual(def.table!.cells(obj, NOW), ["pi", "Running", "0/3", "", "4m5s", "web", "nginx:1.27", `batch.orch.io/controller-uid=${UID}`]);
  obj["status"] = {
    succeeded: 3,
    startTime: "2026-01-02T03:00:00Z",
    completionTime: "2026-01-02T03:00:42Z",
    conditions: [{ type: "Complete", status: "True" }],
  };
  assert.deepEqual(def.table!.cells(obj, NOW).slice(1, 4), ["Complete", "3/3", "42s"]);
  obj["status"] = { startTime: "2026-01-02T03:02:00Z", conditions: [{ type: "Suspended", status: "True" }] };
  assert.deepEqual(def.table!.cells(obj, NOW).slice(1, 4), ["Suspended", "0/3", "2m5s"]);
  obj["status"] = { conditions: [{ type: "Failed", status: "True" }, { type: "Complete", status: "False" }] };
  assert.equal(def.table!.cells(obj, NOW)[1], "Failed");
  const parallel = create(def, job({ parallelism: 4 })).obj;
  assert.equal(def.table!.cells(parallel, NOW)[2], "0/1 of 4");
  parallel.metadata.deletionTimestamp = "2026-01-02T03:04:00Z";
  assert.equal(def.table!.cells(parallel, NOW)[1], "Terminating");
});

test("jobs: index ranges", () => {
  assert.equal(countIndexes("1,3-5,7", 10), 5);
  assert.equal(countIndexes("", 10), 0);
  assert.equal(countIndexes("3,1", 10), "non-increasing order, previous: 3, current: 1");
  assert.equal(countIndexes("12", 10), 'too large index: "12"');
  assert.equal(countIndexes("a", 10), 'cannot convert string to integer for index: "a"');
});
