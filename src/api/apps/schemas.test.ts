import { test } from "node:test";
import assert from "node:assert/strict";
import { SchemaRegistry, type TypeDef } from "../../machinery/schema.js";
import { APPS_TYPES } from "./schemas.js";
import { BATCH_TYPES } from "../batch/schemas.js";
import { COORDINATION_TYPES } from "../coordination/schemas.js";
import { AUTOSCALING_TYPES } from "../autoscaling/schemas.js";
import { appsModule } from "./index.js";
import { batchModule } from "../batch/index.js";
import { coordinationModule } from "../coordination/index.js";
import { autoscalingModule } from "../autoscaling/index.js";
import { registerCoreSchemas } from "../core/schemas.js";
import { PVC_TYPES, registerPvcSchemas } from "./pvc-schemas.js";

const ALL: TypeDef[] = [...APPS_TYPES, ...BATCH_TYPES, ...COORDINATION_TYPES, ...AUTOSCALING_TYPES];
const byName = new Map(ALL.map((t) => [t.name, t]));

function fieldOf(path: string) {
  const dot = path.lastIndexOf(".");
  const def = byName.get(path.slice(0, dot));
  assert.ok(def, `no type ${path.slice(0, dot)}`);
  const f = def.fields[path.slice(dot + 1)];
  assert.ok(f, `no field ${path}`);
  return f;
}

// Field numbers from upstream's generated.proto files (k8s.io/api v0.33).
const TAGS: [string, number][] = [
  ["io.k8s.api.apps.v1.DeploymentSpec.replicas", 1],
  ["io.k8s.api.apps.v1.DeploymentSpec.strategy", 4],
  ["io.k8s.api.apps.v1.DeploymentSpec.paused", 7],
  ["io.k8s.api.apps.v1.DeploymentSpec.progressDeadlineSeconds", 9],
  ["io.k8s.api.apps.v1.DeploymentStatus.readyReplicas", 7],
  ["io.k8s.api.apps.v1.DeploymentStatus.conditions", 6],
  ["io.k8s.api.apps.v1.DeploymentStatus.collisionCount", 8],
  ["io.k8s.api.apps.v1.DeploymentStatus.terminatingReplicas", 9],
  ["io.k8s.api.apps.v1.DeploymentCondition.lastUpdateTime", 6],
  ["io.k8s.api.apps.v1.DeploymentCondition.lastTransitionTime", 7],
  ["io.k8s.api.apps.v1.DeploymentCondition.reason", 4],
  ["io.k8s.api.apps.v1.RollingUpdateDeployment.maxSurge", 2],
  ["io.k8s.api.apps.v1.ReplicaSetSpec.minReadySeconds", 4],
  ["io.k8s.api.apps.v1.ReplicaSetSpec.template", 3],
  ["io.k8s.api.apps.v1.ReplicaSetStatus.readyReplicas", 4],
  ["io.k8s.api.apps.v1.ReplicaSetStatus.availableReplicas", 5],
  ["io.k8s.api.apps.v1.ReplicaSetStatus.terminatingReplicas", 7],
  ["io.k8s.api.apps.v1.DaemonSetSpec.selector", 1],
  ["io.k8s.api.apps.v1.DaemonSetSpec.revisionHistoryLimit", 6],
  ["io.k8s.api.apps.v1.DaemonSetStatus.numberReady", 4],
  ["io.k8s.api.apps.v1.DaemonSetStatus.numberUnavailable", 8],
  ["io.k8s.api.apps.v1.DaemonSetStatus.conditions", 10],
  ["io.k8s.api.apps.v1.StatefulSetSpec.volumeClaimTemplates", 4],
  ["io.k8s.api.apps.v1.StatefulSetSpec.serviceName", 5],
  ["io.k8s.api.apps.v1.StatefulSetSpec.persistentVolumeClaimRetentionPolicy", 10],
  ["io.k8s.api.apps.v1.StatefulSetSpec.ordinals", 11],
  ["io.k8s.api.apps.v1.StatefulSetStatus.collisionCount", 9],
  ["io.k8s.api.apps.v1.StatefulSetStatus.availableReplicas", 11],
  ["io.k8s.api.apps.v1.RollingUpdateStatefulSetStrategy.maxUnavailable", 2],
  ["io.k8s.api.apps.v1.StatefulSetOrdinals.start", 1],
  ["io.k8s.api.apps.v1.ControllerRevision.revision", 3],
  ["io.k8s.api.batch.v1.JobSpec.activeDeadlineSeconds", 3],
  ["io.k8s.api.batch.v1.JobSpec.selector", 4],
  ["io.k8s.api.batch.v1.JobSpec.manualSelector", 5],
  ["io.k8s.api.batch.v1.JobSpec.backoffLimit", 7],
  ["io.k8s.api.batch.v1.JobSpec.ttlSecondsAfterFinished", 8],
  ["io.k8s.api.batch.v1.JobSpec.podFailurePolicy", 11],
  ["io.k8s.api.batch.v1.JobSpec.podReplacementPolicy", 14],
  ["io.k8s.api.batch.v1.JobSpec.managedBy", 15],
  ["io.k8s.api.batch.v1.JobSpec.successPolicy", 16],
  ["io.k8s.api.batch.v1.JobStatus.uncountedTerminatedPods", 8],
  ["io.k8s.api.batch.v1.JobStatus.ready", 9],
  ["io.k8s.api.batch.v1.JobStatus.failedIndexes", 10],
  ["io.k8s.api.batch.v1.JobStatus.terminating", 11],
  ["io.k8s.api.batch.v1.JobCondition.lastProbeTime", 3],
  ["io.k8s.api.batch.v1.CronJobSpec.timeZone", 8],
  ["io.k8s.api.batch.v1.CronJobSpec.jobTemplate", 5],
  ["io.k8s.api.batch.v1.CronJobSpec.failedJobsHistoryLimit", 7],
  ["io.k8s.api.batch.v1.CronJobStatus.lastScheduleTime", 4],
  ["io.k8s.api.batch.v1.CronJobStatus.lastSuccessfulTime", 5],
  ["io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement.values", 3],
  ["io.k8s.api.batch.v1.SuccessPolicyRule.succeededCount", 2],
  ["io.k8s.api.coordination.v1.LeaseSpec.renewTime", 4],
  ["io.k8s.api.coordination.v1.LeaseSpec.preferredHolder", 7],
  ["io.k8s.api.coordination.v1beta1.LeaseSpec.strategy", 6],
  ["io.k8s.api.autoscaling.v1.ScaleStatus.selector", 2],
  ["io.k8s.api.autoscaling.v1.Scale.status", 3],
];

test("protobuf field numbers match upstream's generated.proto", () => {
  for (const [path, tag] of TAGS) assert.equal(fieldOf(path).tag, tag, path);
});

test("field numbers are unique within each message", () => {
  for (const def of ALL) {
    const tags = Object.values(def.fields).map((f) => f.tag);
    assert.equal(new Set(tags).size, tags.length, def.name);
    assert.ok(tags.every((t) => t > 0), def.name);
  }
});

test("required fields, list types and patch strategies as upstream's OpenAPI", () => {
  for (const p of [
    "io.k8s.api.apps.v1.DeploymentSpec.selector",
    "io.k8s.api.apps.v1.DeploymentSpec.template",
    "io.k8s.api.apps.v1.ReplicaSetStatus.replicas",
    "io.k8s.api.apps.v1.DaemonSetStatus.numberMisscheduled",
    "io.k8s.api.apps.v1.StatefulSetSpec.template",
    "io.k8s.api.apps.v1.ControllerRevision.revision",
    "io.k8s.api.batch.v1.JobSpec.template",
    "io.k8s.api.batch.v1.CronJobSpec.schedule",
    "io.k8s.api.batch.v1.CronJobSpec.jobTemplate",
    "io.k8s.api.autoscaling.v1.ScaleStatus.replicas",
    "io.k8s.api.apps.v1.DeploymentList.items",
  ]) {
    assert.equal(fieldOf(p).required, true, p);
  }
  assert.notEqual(fieldOf("io.k8s.api.apps.v1.ReplicaSetSpec.template").required, true);
  assert.notEqual(fieldOf("io.k8s.api.apps.v1.StatefulSetSpec.serviceName").required, true);
  const conditions = fieldOf("io.k8s.api.apps.v1.DeploymentStatus.conditions");
  assert.deepEqual(conditions.schema, {
    type: "array",
    items: { type: "ref", name: "io.k8s.api.apps.v1.DeploymentCondition" },
    listType: "map",
    listMapKeys: ["type"],
  });
  assert.equal(conditions.patchStrategy, "merge");
  assert.equal(conditions.patchMergeKey, "type");
  assert.equal(fieldOf("io.k8s.api.apps.v1.DeploymentSpec.strategy").patchStrategy, "retainKeys");
  const jobConditions = fieldOf("io.k8s.api.batch.v1.JobStatus.conditions");
  assert.equal(jobConditions.schema.type === "array" && jobConditions.schema.listType, "atomic");
  assert.equal(jobConditions.patchStrategy, "merge");
  const vct = fieldOf("io.k8s.api.apps.v1.StatefulSetSpec.volumeClaimTemplates").schema;
  assert.deepEqual(vct, { type: "array", items: { type: "ref", name: "io.k8s.api.core.v1.PersistentVolumeClaim" }, listType: "atomic" });
  assert.deepEqual(fieldOf("io.k8s.api.coordination.v1.LeaseSpec.acquireTime").schema, { type: "ref", name: "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime" });
});

test("v1 and v1beta1 Leases have the same fields", () => {
  const v1 = byName.get("io.k8s.api.coordination.v1.LeaseSpec")!;
  const beta = byName.get("io.k8s.api.coordination.v1beta1.LeaseSpec")!;
  assert.deepEqual(Object.keys(beta.fields), Object.keys(v1.fields));
  assert.deepEqual(
    Object.values(beta.fields).map((f) => f.tag),
    Object.values(v1.fields).map((f) => f.tag),
  );
});

test("every group registers its own types once and refs inside the four groups resolve", () => {
  const registry = new SchemaRegistry();
  for (const m of [appsModule, batchModule, coordinationModule, autoscalingModule]) m.registerSchemas(registry);
  const outside = /^io\.k8s\.(api\.core\.v1|apimachinery\.pkg\.apis\.meta\.v1)\./;
  const missing = registry.checkRefs().filter((m) => !outside.test(m.split(" → ")[1]!));
  assert.deepEqual(missing, []);
  for (const def of ALL) assert.equal(registry.get(def.name), def);
});

test("with meta and core registered, every ref of these groups resolves", () => {
  const registry = new SchemaRegistry();
  registerCoreSchemas(registry);
  for (const m of [appsModule, batchModule, coordinationModule, autoscalingModule]) m.registerSchemas(registry);
  const mine = new Set(ALL.map((d) => d.name));
  const missing = registry.checkRefs().filter((m) => mine.has(m.split(" → ")[0]!.replace(/\.[^.]+$/, "")));
  assert.deepEqual(missing, []);
});

test("the claim types StatefulSets embed: field numbers, and no clash once core declares them", () => {
  const claim = new Map(PVC_TYPES.map((d) => [d.name, d]));
  const status = claim.get("io.k8s.api.core.v1.PersistentVolumeClaimStatus")!;
  assert.deepEqual(
    Object.entries(status.fields).map(([k, v]) => [k, v.tag]),
    [["phase", 1], ["accessModes", 2], ["capacity", 3], ["conditions", 4], ["allocatedResources", 5], ["allocatedResourceStatuses", 7], ["currentVolumeAttributesClassName", 8], ["modifyVolumeStatus", 9]],
  );
  assert.equal(claim.get("io.k8s.api.core.v1.PersistentVolumeClaim")!.fields["status"]!.tag, 3);
  const registry = new SchemaRegistry();
  registry.add(PVC_TYPES[0]!);
  registerPvcSchemas(registry); // core got there first: only the rest is added
  assert.equal([...registry.all()].length, PVC_TYPES.length);
});
