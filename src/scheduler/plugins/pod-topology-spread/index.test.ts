import { test } from "node:test";
import assert from "node:assert/strict";
import { makeNode, makePod } from "../../testing/objects.js";
import { nodeInfo, reasons } from "../../testing/cluster.js";
import { podTopologySpread } from "./index.js";

const web = (name: string) => makePod(name, { labels: { app: "web" } });
const spread = (extra: Record<string, unknown> = {}) =>
  makePod("new", {
    labels: { app: "web" },
    spec: { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: "zone", whenUnsatisfiable: "DoNotSchedule", labelSelector: { matchLabels: { app: "web" } }, ...extra }] },
  });

test("PodTopologySpread: maxSkew over zones; nodes without the key are unresolvable; ScheduleAnyway does not filter", () => {
  const nodes = [
    nodeInfo(makeNode("a1", { labels: { zone: "a" } }), [web("w1"), web("w2")]),
    nodeInfo(makeNode("b1", { labels: { zone: "b" } }), [web("w3")]),
    nodeInfo(makeNode("c1", { labels: { zone: "c" } }), [makePod("other", { labels: { app: "db" } })]),
    nodeInfo(makeNode("nozone")),
  ];
  const skew = "Unschedulable: node(s) didn't match pod topology spread constraints";
  // Counts a=2, b=1, c=0: placing in a gives skew 3, in b 2, in c 1.
  assert.deepEqual(reasons(podTopologySpread, spread(), nodes), {
    a1: skew,
    b1: skew,
    c1: "fits",
    nozone: "UnschedulableAndUnresolvable: node(s) didn't match pod topology spread constraints (missing required label)",
  });
  assert.deepEqual(reasons(podTopologySpread, spread({ maxSkew: 2 }), nodes), { a1: skew, b1: "fits", c1: "fits", nozone: reasons(podTopologySpread, spread(), nodes)["nozone"] });
  assert.equal(reasons(podTopologySpread, spread({ whenUnsatisfiable: "ScheduleAnyway" }), nodes)["a1"], "skip");
});

test("PodTopologySpread: minDomains above the domains present makes the global minimum 0", () => {
  const nodes = [nodeInfo(makeNode("a1", { labels: { zone: "a" } }), [web("w1")]), nodeInfo(makeNode("b1", { labels: { zone: "b" } }), [web("w2")])];
  assert.deepEqual(reasons(podTopologySpread, spread(), nodes), { a1: "fits", b1: "fits" });
  const skew = "Unschedulable: node(s) didn't match pod topology spread constraints";
  assert.deepEqual(reasons(podTopologySpread, spread({ minDomains: 3 }), nodes), { a1: skew, b1: skew });
});
