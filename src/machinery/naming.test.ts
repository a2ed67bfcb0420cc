import { test } from "node:test";
import assert from "node:assert/strict";
import { componentName, isValidGroupSuffix, namingFor, providerName, workloadKeys } from "./naming.js";

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

test("workload keys: orch.io by default, upstream's with k8s.io", () => {
  const orch = workloadKeys(namingFor());
  assert.equal(orch.deploymentRevision, "deployment.orch.io/revision");
  assert.equal(orch.statefulSetPodName, "statefulset.orch.io/pod-name");
  assert.equal(orch.podIndex, "apps.orch.io/pod-index");
  assert.equal(orch.taintNotReady, "node.orch.io/not-ready");
  const k8s = workloadKeys(namingFor("k8s.io"));
  assert.equal(k8s.deploymentRevision, "deployment.kubernetes.io/revision");
  assert.equal(k8s.desiredReplicas, "deployment.kubernetes.io/desired-replicas");
  assert.equal(k8s.statefulSetPodName, "statefulset.kubernetes.io/pod-name");
  assert.equal(k8s.podIndex, "apps.kubernetes.io/pod-index");
  assert.equal(k8s.podDeletionCost, "controller.kubernetes.io/pod-deletion-cost");
  assert.equal(k8s.revisionHash, "controller.kubernetes.io/hash");
  assert.equal(k8s.taintUnschedulable, "node.kubernetes.io/unschedulable");
});

test("component names (user agents, field managers) and the kubernetes service's provider follow the table", () => {
  const orch = namingFor();
  assert.deepEqual(["controller-manager", "scheduler", "nodeagent", "proxy"].map((c) => componentName(orch, c as "proxy")), ["orch-controller-manager", "orch-scheduler", "orch-nodeagent", "orch-proxy"]);
  assert.equal(providerName(orch), "orch");
  const k8s = namingFor("k8s.io");
  assert.deepEqual(["controller-manager", "scheduler", "nodeagent", "proxy"].map((c) => componentName(k8s, c as "proxy")), ["kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy"]);
  assert.equal(providerName(k8s), "kubernetes");
  assert.equal(componentName(namingFor("example.com"), "scheduler"), "example-scheduler");
});
