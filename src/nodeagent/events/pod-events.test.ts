import { test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import type { Event, Pod } from "../../api/core/types.js";
import { startTestServer } from "../../apiserver/testing/harness.js";
import { RestClient, loadKubeconfig } from "../../client/index.js";
import { eventually } from "../testing/eventually.js";
import { containerFieldPath, podEvents } from "./pod-events.js";

const EVENTS = { group: "", version: "v1", resource: "events", namespaced: true };

test("pod events: fieldPath names the container or init container; the same event about two containers stays two events", async () => {
  const t = await startTestServer({ modules: builtinModules() });
  const client = new RestClient(loadKubeconfig(t.server.kubeconfigPath));
  try {
    // A pod as a manifest file gives it: no kind or apiVersion.
    const pod = { metadata: { name: "p", namespace: "default", uid: "u-1" }, spec: { initContainers: [{ name: "setup" }], containers: [{ name: "a" }, { name: "b" }] } } as Pod;
    assert.equal(containerFieldPath(pod, "setup"), "spec.initContainers{setup}");
    assert.equal(containerFieldPath(pod, "a"), "spec.containers{a}");
    const events = podEvents({ client, component: "nodeagent", host: "n1" });
    for (const c of ["a", "b", "a"]) events.record(pod, c, "Normal", "Pulled", `Container image "busybox" already present on machine`);
    events.record(pod, undefined, "Warning", "FailedMount", "no volume");
    const items = await eventually(async () => {
      const list = (await client.list<Event>(EVENTS, { namespace: "default" })).items;
      return list.length === 3 && list.some((e) => e.count === 2) ? list : undefined;
    }, 10_000, "three events, one counted twice");
    const byPath = Object.fromEntries(items.map((e) => [e.involvedObject?.fieldPath ?? "", e]));
    assert.deepEqual(Object.keys(byPath).sort(), ["", "spec.containers{a}", "spec.containers{b}"]);
    assert.equal(byPath["spec.containers{a}"]!.count, 2);
    assert.deepEqual([byPath[""]!.involvedObject?.kind, byPath[""]!.involvedObject?.apiVersion, byPath[""]!.source?.host], ["Pod", "v1", "n1"]);
  } finally {
    client.close();
    await t.close();
  }
});
