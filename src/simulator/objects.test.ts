import { test } from "node:test";
import assert from "node:assert/strict";
import { namingFor } from "../machinery/naming.js";
import { PodIPs, leaseObject, nodeIP, nodeObject, podCIDR, runningStatus, succeededStatus } from "./objects.js";

const SHAPE = { cpu: "8", memory: "16Gi", pods: "110", ephemeralStorage: "100Gi", agentVersion: "v1.23.16" };

test("objects: per-node pod ranges and node addresses are distinct", () => {
  assert.equal(podCIDR(0), "10.128.0.0/24");
  assert.equal(podCIDR(257), "10.129.1.0/24");
  assert.equal(nodeIP(0), "10.64.0.1");
  assert.equal(nodeIP(255), "10.64.1.0");
  const ips = new Set(Array.from({ length: 5000 }, (_, i) => nodeIP(i)));
  const cidrs = new Set(Array.from({ length: 5000 }, (_, i) => podCIDR(i)));
  assert.equal(ips.size, 5000);
  assert.equal(cidrs.size, 5000);
});

test("objects: pod addresses are handed out once, reused after release, and claimed on restart", () => {
  const ips = new PodIPs("10.128.3.0/24");
  const a = ips.take()!;
  const b = ips.take()!;
  assert.deepEqual([a, b], ["10.128.3.2", "10.128.3.3"]);
  ips.release(a);
  assert.equal(ips.take(), a);
  assert.equal(ips.claim("10.128.3.9"), true);
  assert.equal(ips.claim("10.128.3.9"), false, "already used");
  assert.equal(ips.claim("10.128.4.9"), false, "not of this range");
  const taken = new Set<string>();
  for (let ip = ips.take(); ip !== undefined; ip = ips.take()) taken.add(ip);
  assert.equal(taken.has("10.128.3.9"), false);
  assert.equal(ips.inUse, 253);
});

test("objects: node labels follow the naming table (kubernetes.io on the k8s.io profile)", () => {
  const orch = nodeObject(namingFor(), SHAPE, 0, "n0", 0);
  assert.equal(orch.metadata.labels?.["orch.io/hostname"], "n0");
  const k8s = nodeObject(namingFor("k8s.io"), SHAPE, 0, "n0", 0);
  assert.equal(k8s.metadata.labels?.["kubernetes.io/hostname"], "n0");
  assert.equal(k8s.metadata.labels?.["kubernetes.io/os"], "linux");
  assert.equal(k8s.status?.conditions?.find((c) => c.type === "Ready")?.status, "True");
  const lease = leaseObject(namingFor("k8s.io"), "n0", "uid-1", 40, Date.parse("2026-01-01T00:00:00.123Z"));
  assert.equal(lease.apiVersion, "coordination.k8s.io/v1");
  assert.equal(lease.metadata.namespace, "kube-node-lease");
  assert.equal(lease.spec?.renewTime, "2026-01-01T00:00:00.123000Z");
  assert.equal(lease.metadata.ownerReferences?.[0]?.uid, "uid-1");
});

test("objects: running then succeeded pod status, per container", () => {
  const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p", uid: "u1" }, spec: { initContainers: [{ name: "init", image: "busybox" }], containers: [{ name: "a", image: "nginx" }, { name: "b", image: "redis" }] } };
  const running = runningStatus(pod, "10.64.0.1", "10.128.0.2", Date.parse("2026-01-01T00:00:00Z"));
  assert.equal(running.phase, "Running");
  assert.deepEqual(running.podIPs, [{ ip: "10.128.0.2" }]);
  assert.deepEqual(running.containerStatuses?.map((s) => [s.name, s.ready, s.started, !!s.state?.running]), [["a", true, true, true], ["b", true, true, true]]);
  assert.equal(running.initContainerStatuses?.[0]?.state?.terminated?.exitCode, 0);
  assert.equal(running.conditions?.find((c) => c.type === "Ready")?.status, "True");
  const done = succeededStatus({ ...pod, status: running }, Date.parse("2026-01-01T00:01:00Z"));
  assert.equal(done.phase, "Succeeded");
  assert.deepEqual(done.containerStatuses?.map((s) => [s.state?.terminated?.reason, s.state?.terminated?.startedAt]), [["Completed", "2026-01-01T00:00:00Z"], ["Completed", "2026-01-01T00:00:00Z"]]);
  assert.equal(done.conditions?.find((c) => c.type === "Ready")?.reason, "PodCompleted");
});
