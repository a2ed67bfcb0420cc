import { test } from "node:test";
import assert from "node:assert/strict";
import { makeNode, makePod } from "../../testing/objects.js";
import { nodeInfo, reasons } from "../../testing/cluster.js";
import { interPodAffinity } from "./index.js";

const term = (labels: Record<string, string>, topologyKey = "zone") => ({ labelSelector: { matchLabels: labels }, topologyKey });
const withAffinity = (name: string, labels: Record<string, string>, affinity: Record<string, unknown>) => makePod(name, { labels, spec: { affinity } });

test("InterPodAffinity: required affinity needs a matching pod in the domain; the first pod of a group may go anywhere", () => {
  const nodes = [
    nodeInfo(makeNode("a1", { labels: { zone: "a" } }), [makePod("cache", { labels: { app: "cache" } })]),
    nodeInfo(makeNode("a2", { labels: { zone: "a" } })),
    nodeInfo(makeNode("b1", { labels: { zone: "b" } })),
  ];
  const miss = "UnschedulableAndUnresolvable: node(s) didn't match pod affinity rules";
  const nearCache = withAffinity("web", { app: "web" }, { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "cache" })] } });
  assert.deepEqual(reasons(interPodAffinity, nearCache, nodes), { a1: "fits", a2: "fits", b1: miss });
  const first = withAffinity("g1", { group: "g" }, { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ group: "g" })] } });
  assert.deepEqual(reasons(interPodAffinity, first, nodes), { a1: "fits", a2: "fits", b1: "fits" });
  assert.deepEqual(reasons(interPodAffinity, makePod("plain"), nodes), { a1: "skip", a2: "skip", b1: "skip" });
});

test("InterPodAffinity: the pod's anti-affinity, and existing pods' anti-affinity against it", () => {
  const guard = withAffinity("guard", { app: "guard" }, { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "noisy" }, "orch.io/hostname")] } });
  const nodes = [
    nodeInfo(makeNode("a1", { labels: { zone: "a" } }), [makePod("web1", { labels: { app: "web" } })]),
    nodeInfo(makeNode("b1", { labels: { zone: "b" } }), [guard]),
    nodeInfo(makeNode("c1", { labels: { zone: "c" } })),
  ];
  const spreadWeb = withAffinity("web2", { app: "web" }, { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app: "web" })] } });
  assert.deepEqual(reasons(interPodAffinity, spreadWeb, nodes), { a1: "Unschedulable: node(s) didn't match pod anti-affinity rules", b1: "fits", c1: "fits" });
  assert.deepEqual(reasons(interPodAffinity, makePod("noisy", { labels: { app: "noisy" } }), nodes), {
    a1: "fits",
    b1: "Unschedulable: node(s) didn't satisfy existing pods anti-affinity rules",
    c1: "fits",
  });
});
