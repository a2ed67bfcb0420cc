import { test } from "node:test";
import assert from "node:assert/strict";
import { makeNode, makePod } from "../../testing/objects.js";
import { nodeInfo, reasons } from "../../testing/cluster.js";
import { nodePorts } from "./index.js";

const withPort = (name: string, hostPort: number, extra: Record<string, unknown> = {}) => {
  const p = makePod(name);
  p.spec!.containers![0]!.ports = [{ containerPort: 80, hostPort, ...extra }];
  return p;
};

test("NodePorts: a host port in use (same protocol; 0.0.0.0 clashes with any IP) keeps the pod off the node", () => {
  const nodes = [
    nodeInfo(makeNode("busy"), [withPort("a", 8080)]),
    nodeInfo(makeNode("udp"), [withPort("b", 8080, { protocol: "UDP" })]),
    nodeInfo(makeNode("other-ip"), [withPort("c", 8080, { hostIP: "10.0.0.1" })]),
    nodeInfo(makeNode("free")),
  ];
  const fail = "Unschedulable: node(s) didn't have free ports for the requested pod ports";
  assert.deepEqual(reasons(nodePorts, withPort("p", 8080), nodes), { busy: fail, udp: "fits", "other-ip": fail, free: "fits" });
  assert.deepEqual(reasons(nodePorts, withPort("p", 8080, { hostIP: "10.0.0.2" }), nodes), { busy: fail, udp: "fits", "other-ip": "fits", free: "fits" });
  assert.equal(reasons(nodePorts, makePod("none"), nodes)["busy"], "skip");
});
