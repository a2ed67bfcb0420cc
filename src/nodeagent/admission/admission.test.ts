import { test } from "node:test";
import assert from "node:assert/strict";
import type { Pod } from "../../api/core/types.js";
import { admitPod, podRequests } from "./admission.js";

const pod = (cpu: string, memory = "0"): Pod => ({ apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [{ name: "c", resources: { requests: { cpu, memory } } }] } });
const node = new Map([["cpu", 2], ["memory", 1024 ** 3], ["pods", 3]]);

test("admission: pods that do not fit fail with upstream's reasons and messages", () => {
  assert.equal(admitPod(pod("500m"), [pod("1")], node), undefined);
  assert.deepEqual(admitPod(pod("1500m"), [pod("1")], node), { reason: "OutOfcpu", message: "Node didn't have enough resource: cpu, requested: 1500m, used: 1000m, capacity: 2000m" });
  assert.equal(admitPod(pod("0", "2Gi"), [], node)?.reason, "OutOfmemory");
  assert.deepEqual(admitPod(pod("0"), [pod("0"), pod("0"), pod("0")], node), { reason: "OutOfpods", message: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3" });
});

test("admission: the effective request is max(init, sum of containers) plus overhead", () => {
  const p: Pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: {
    initContainers: [{ name: "i", resources: { requests: { cpu: "3" } } }],
    containers: [{ name: "a", resources: { requests: { cpu: "1" } } }, { name: "b", resources: { requests: { cpu: "1" } } }],
    overhead: { cpu: "250m" },
  } };
  assert.equal(podRequests(p).get("cpu"), 3.25);
});

test("admission: a host port another pod holds (same protocol, overlapping address) fails with NodePorts", () => {
  const withPort = (hostPort: number, protocol?: string, hostIP?: string): Pod => ({
    apiVersion: "v1", kind: "Pod", metadata: { name: "p" },
    spec: { containers: [{ name: "c", ports: [{ containerPort: 80, hostPort, ...(protocol ? { protocol } : {}), ...(hostIP ? { hostIP } : {}) }] }] },
  });
  assert.deepEqual(admitPod(withPort(21017), [withPort(21017)], node), { reason: "NodePorts", message: "Predicate NodePorts failed" });
  assert.equal(admitPod(withPort(21017, "UDP"), [withPort(21017)], node), undefined, "another protocol");
  assert.equal(admitPod(withPort(21018), [withPort(21017)], node), undefined, "another port");
  assert.equal(admitPod(withPort(21017, "TCP", "127.0.0.1"), [withPort(21017, "TCP", "127.0.0.2")], node), undefined, "other addresses");
  assert.equal(admitPod(withPort(21017, "TCP", "127.0.0.1"), [withPort(21017)], node)?.reason, "NodePorts", "0.0.0.0 holds every address");
  assert.equal(admitPod(pod("0"), [withPort(21017)], node), undefined, "no host port asked");
});
