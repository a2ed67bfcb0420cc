import { test } from "node:test";
import assert from "node:assert/strict";
import { isValidGroupSuffix, namingFor } from "./naming.js";

test("orch names by default, upstream names for k8s.io", () => {
  const orch = namingFor();
  assert.equal(orch.coordinationGroup, "coordination.orch.io");
  assert.equal(orch.systemNamespace, "orch-system");
  assert.equal(orch.nodeLeaseNamespace, "orch-node-lease");
  assert.equal(orch.protobufMediaType, "application/vnd.orch.protobuf");
  assert.equal(orch.initialEventsEndAnnotation, "orch.io/initial-events-end");
  const k8s = namingFor("k8s.io");
  assert.equal(k8s.coordinationGroup, "coordination.k8s.io");
  assert.equal(k8s.keyDomain, "kubernetes.io");
  assert.equal(k8s.systemNamespace, "kube-system");
  assert.equal(k8s.protobufMediaType, "application/vnd.kubernetes.protobuf");
  assert.equal(k8s.agentName, "kubelet");
  assert.equal(k8s.initialEventsEndAnnotation, "k8s.io/initial-events-end");
});

test("group suffixes must be DNS subdomains with a dot", () => {
  assert.ok(isValidGroupSuffix("orch.io"));
  assert.ok(isValidGroupSuffix("k8s.io"));
  assert.ok(!isValidGroupSuffix("orch"));
  assert.ok(!isValidGroupSuffix("Orch.io"));
  assert.ok(!isValidGroupSuffix("-a.io"));
});
