import { test } from "node:test";
import assert from "node:assert/strict";
import { scaleAccess } from "../subresources/index.js";
import type { ApiObject } from "../../machinery/index.js";
import { deployments } from "./deployments.js";
import { create, update, template, NOW } from "./testing.js";

const base = (spec: Record<string, unknown> = {}) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "default" },
  spec: { selector: { matchLabels: { app: "web" } }, template: template({ app: "web" }), ...spec },
});

test("deployments: declaration", () => {
  assert.equal(deployments.group, "apps");
  assert.deepEqual(deployments.versions, ["v1"]);
  assert.deepEqual(deployments.shortNames, ["deploy"]);
  assert.deepEqual(deployments.categories, ["all"]);
  assert.deepEqual(deployments.subresources?.map((s) => s.name), ["scale", "status"]);
  assert.equal(deployments.schema, "io.k8s.api.apps.v1.Deployment");
});

test("deployments: upstream defaults", () => {
  const { obj, errors } = create(deployments, base());
  assert.deepEqual(errors, []);
  const spec = obj["spec"] as Record<string, unknown>;
  assert.equal(spec["replicas"], 1);
  assert.deepEqual(spec["strategy"], { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } });
  assert.equal(spec["revisionHistoryLimit"], 10);
  assert.equal(spec["progressDeadlineSeconds"], 600);
  assert.equal((spec["template"] as { spec: { restartPolicy: string } }).spec.restartPolicy, "Always");
  assert.deepEqual(obj["status"], {});
  // Recreate gets no rollingUpdate block; explicit values are kept.
  const recreate = create(deployments, base({ replicas: 0, strategy: { type: "Recreate" } }));
  assert.deepEqual((recreate.obj["spec"] as Record<string, unknown>)["strategy"], { type: "Recreate" });
  assert.equal((recreate.obj["spec"] as Record<string, unknown>)["replicas"], 0);
});

test("deployments: validation messages", () => {
  const cases: [string, Record<string, unknown>, string[]][] = [
    ["negative replicas", { replicas: -1 }, ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]],
    [
      "missing selector",
      { selector: undefined },
      // A missing selector selects nothing, so the template check fails too, as upstream reports it.
      ["spec.selector: Required value", 'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`'],
    ],
    ["empty selector", { selector: {} }, ["spec.selector: Invalid value: {}: empty selector is invalid for deployment"]],
    [
      "selector does not match",
      { selector: { matchLabels: { app: "other" } } },
      ['spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`'],
    ],
    [
      "bad operator",
      { selector: { matchExpressions: [{ key: "app", operator: "Is" }] } },
      [
        'spec.selector.matchExpressions[0].operator: Invalid value: "Is": not a valid selector operator',
        'spec.selector: Invalid value: {"matchExpressions":[{"key":"app","operator":"Is"}]}: invalid label selector',
      ],
    ],
    ["In without values", { selector: { matchExpressions: [{ key: "app", operator: "In" }] } }, [
      "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      'spec.selector: Invalid value: {"matchExpressions":[{"key":"app","operator":"In"}]}: invalid label selector',
    ]],
    ["restart policy", { template: template({ app: "web" }, { restartPolicy: "Never" }) }, ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"']],
    ["active deadline", { template: template({ app: "web" }, { activeDeadlineSeconds: 5 }) }, ["spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported"]],
    ["both zero", { strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: "0%" } } }, [
      "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0",
    ]],
    ["over 100%", { strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "150%" } } }, [
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "150%": must not be greater than 100%',
    ]],
    ["bad percent", { strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "10 percent" } } }, [
      "spec.strategy.rollingUpdate.maxSurge: Invalid value: \"10 percent\": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
    ]],
    ["recreate with rollingUpdate", { strategy: { type: "Recreate", rollingUpdate: {} } }, [
      "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
    ]],
    ["unknown strategy", { strategy: { type: "BlueGreen" } }, ['spec.strategy.type: Unsupported value: "BlueGreen": supported values: "Recreate", "RollingUpdate"']],
    ["deadline", { minReadySeconds: 700 }, ["spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds"]],
    ["history", { revisionHistoryLimit: -2 }, ["spec.revisionHistoryLimit: Invalid value: -2: must be greater than or equal to 0"]],
  ];
  for (const [name, spec, want] of cases) assert.deepEqual(create(deployments, base(spec)).errors, want, name);
});

test("deployments: the selector is immutable, the rest may change", () => {
  const { obj: old } = create(deployments, base());
  const scaled = structuredClone(old) as ApiObject;
  (scaled["spec"] as Record<string, unknown>)["replicas"] = 5;
  assert.deepEqual(update(deployments, scaled, old), []);
  const moved = structuredClone(old) as ApiObject;
  const spec = moved["spec"] as Record<string, unknown>;
  spec["selector"] = { matchLabels: { app: "web", tier: "a" } };
  spec["template"] = template({ app: "web", tier: "a" });
  assert.deepEqual(update(deployments, moved, old), ['spec.selector: Invalid value: {"matchLabels":{"app":"web","tier":"a"}}: field is immutable']);
});

test("deployments: table cells", () => {
  const { obj } = create(deployments, base({ replicas: 3 }));
  obj["status"] = { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 };
  const table = deployments.table!;
  assert.deepEqual(
    table.columns.map((c) => [c.name, c.priority]),
    [["Name", 0], ["Ready", 0], ["Up-to-date", 0], ["Available", 0], ["Age", 0], ["Containers", 1], ["Images", 1], ["Selector", 1]],
  );
  assert.deepEqual(table.cells(obj, NOW), ["web", "2/3", 3, 2, "4m5s", "web", "nginx:1.27", "app=web"]);
});

test("deployments: scale reads spec/status replicas and renders the selector", () => {
  const { obj } = create(deployments, base({
    selector: { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "In", values: ["b", "a"] }] },
    template: template({ app: "web", tier: "a" }),
  }));
  obj["status"] = { replicas: 4 };
  const scale = scaleAccess(deployments)!;
  assert.equal(scale.specReplicas(obj), 1);
  assert.equal(scale.statusReplicas(obj), 4);
  assert.equal(scale.selector(obj), "app=web,tier in (a,b)");
  scale.setSpecReplicas(obj, 7);
  assert.equal((obj["spec"] as { replicas: number }).replicas, 7);
});
