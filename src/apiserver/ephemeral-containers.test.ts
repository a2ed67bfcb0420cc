// pods/ephemeralcontainers over real HTTPS and a real lmdb store: GET, PUT
// and strategic-merge PATCH change only spec.ephemeralContainers; existing
// ones can be neither changed nor removed, fields not allowed for them are a
// 422, and the main resource refuses to touch them (upstream's behaviour).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../api/index.js";
import { startTestServer, type TestServer } from "./testing/harness.js";

const PODS = "/api/v1/namespaces/default/pods";
const STRATEGIC = { "content-type": "application/strategic-merge-patch+json" };

describe("pods/ephemeralcontainers", () => {
  let t: TestServer;
  let n = 0;
  before(async () => {
    t = await startTestServer({ modules: builtinModules() });
  });
  after(() => t.close());

  /** A fresh pod with one container `main`; returns its name. */
  async function newPod(): Promise<string> {
    const name = `p${++n}`;
    const res = await t.request("POST", PODS, { body: { apiVersion: "v1", kind: "Pod", metadata: { name }, spec: { containers: [{ name: "main", image: "nginx:1.27" }] } } });
    assert.equal(res.status, 201, res.text);
    return name;
  }
  const addDebug = (name: string, container: Record<string, unknown>) =>
    t.request("PATCH", `${PODS}/${name}/ephemeralcontainers`, { headers: STRATEGIC, body: { spec: { ephemeralContainers: [container] } } });
  /** The 422's causes as `field: message`. */
  const causes = (res: { status: number; json: any; text: string }) => {
    assert.equal(res.status, 422, res.text);
    assert.equal(res.json.reason, "Invalid");
    return (res.json.details.causes as { field: string; message: string }[]).map((c) => `${c.field}: ${c.message}`);
  };

  test("GET answers the Pod; a strategic patch adds a defaulted container and nothing else moves", async () => {
    const name = await newPod();
    const got = await t.request("GET", `${PODS}/${name}/ephemeralcontainers`);
    assert.equal(got.status, 200);
    assert.equal(got.json.kind, "Pod");
    const res = await t.request("PATCH", `${PODS}/${name}/ephemeralcontainers`, {
      headers: STRATEGIC,
      // The image change of `main` and the label ride along and must be dropped, as upstream's strategy drops them.
      body: {
        metadata: { labels: { sneaky: "yes" } },
        spec: { containers: [{ name: "main", image: "nginx:9" }], ephemeralContainers: [{ name: "dbg", image: "busybox", targetContainerName: "main", command: ["sh"] }] },
      },
    });
    assert.equal(res.status, 200, res.text);
    const eph = res.json.spec.ephemeralContainers;
    assert.equal(eph.length, 1);
    assert.deepEqual([eph[0].name, eph[0].targetContainerName, eph[0].terminationMessagePolicy, eph[0].imagePullPolicy], ["dbg", "main", "File", "Always"]);
    assert.equal(res.json.spec.containers[0].image, "nginx:1.27");
    assert.equal(res.json.metadata.labels, undefined);
    assert.equal(res.json.status.phase, "Pending");
    // A second one merges by name beside the first, in the order kubectl's patch sets.
    const second = await t.request("PATCH", `${PODS}/${name}/ephemeralcontainers`, {
      headers: STRATEGIC,
      body: { spec: { "$setElementOrder/ephemeralContainers": [{ name: "dbg" }, { name: "dbg2" }], ephemeralContainers: [{ name: "dbg2", image: "busybox" }] } },
    });
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(second.json.spec.ephemeralContainers.map((c: { name: string }) => c.name), ["dbg", "dbg2"]);
    const entry = second.json.metadata.managedFields.find((f: { subresource?: string }) => f.subresource === "ephemeralcontainers");
    assert.ok(entry, "managedFields record the subresource");
  });

  test("an existing ephemeral container can be neither changed nor removed (422)", async () => {
    const name = await newPod();
    const added = await addDebug(name, { name: "dbg", image: "busybox" });
    assert.equal(added.status, 200, added.text);
    const changed = structuredClone(added.json);
    changed.spec.ephemeralContainers[0].image = "alpine";
    const [c] = causes(await t.request("PUT", `${PODS}/${name}/ephemeralcontainers`, { body: changed }));
    assert.match(c!, /^spec\.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be changed\n/);
    assert.match(c!, /changed: image/);
    const removed = structuredClone(added.json);
    removed.spec.ephemeralContainers = [];
    assert.deepEqual(causes(await t.request("PUT", `${PODS}/${name}/ephemeralcontainers`, { body: removed })), ['spec.ephemeralContainers: Forbidden: existing ephemeral containers "dbg" may not be removed\n']);
    const res = await t.request("GET", `${PODS}/${name}`);
    assert.equal(res.json.spec.ephemeralContainers[0].image, "busybox", "nothing was lost");
  });

  test("ports, probes, resources, lifecycle, restartPolicy and subPath are not for ephemeral containers (422)", async () => {
    const name = await newPod();
    const res = await addDebug(name, {
      name: "dbg",
      image: "busybox",
      ports: [{ containerPort: 80 }],
      resources: { limits: { cpu: "1" } },
      readinessProbe: { exec: { command: ["true"] } },
      lifecycle: { preStop: { exec: { command: ["true"] } } },
      restartPolicy: "Always",
      volumeMounts: [{ name: "data", mountPath: "/data", subPath: "a" }],
    });
    const got = causes(res).filter((c) => c.includes("Ephemeral"));
    assert.deepEqual(got.sort(), [
      "spec.ephemeralContainers[0].lifecycle: Forbidden: cannot be set for an Ephemeral Container",
      "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container",
      "spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container",
      "spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container",
      "spec.ephemeralContainers[0].restartPolicy: Forbidden: cannot be set for an Ephemeral Container",
      "spec.ephemeralContainers[0].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container",
    ]);
    assert.match(res.json.message, /^Pod "p\d+" is invalid: \[/);
    const after = await t.request("GET", `${PODS}/${name}`);
    assert.equal(after.json.spec.ephemeralContainers, undefined, "a refused patch stores nothing");
  });

  test("a target that is not a container of the pod, or a name already taken, is a 422", async () => {
    const name = await newPod();
    assert.deepEqual(causes(await addDebug(name, { name: "dbg", image: "busybox", targetContainerName: "nope" })), ['spec.ephemeralContainers[0].targetContainerName: Not found: "nope"']);
    const dup = causes(await addDebug(name, { name: "main", image: "busybox" }));
    assert.ok(dup.includes(`spec.ephemeralContainers[0].name: Duplicate value: "main"`), dup.join("\n"));
  });

  test("a mirror pod (a static pod's face in the API) takes no ephemeral containers (422)", async () => {
    const res = await t.request("POST", PODS, {
      body: { apiVersion: "v1", kind: "Pod", metadata: { name: "static-node-a", annotations: { "orch.io/config.mirror": "abc" } }, spec: { containers: [{ name: "main", image: "nginx" }] } },
    });
    assert.equal(res.status, 201, res.text);
    const refused = await addDebug("static-node-a", { name: "dbg", image: "busybox" });
    assert.equal(refused.status, 422, refused.text);
    assert.match(refused.json.message, /static pods do not support ephemeral containers/);
  });

  test("the main resource refuses to add ephemeral containers on update, and on create", async () => {
    const name = await newPod();
    const current = (await t.request("GET", `${PODS}/${name}`)).json;
    current.spec.ephemeralContainers = [{ name: "dbg", image: "busybox", terminationMessagePolicy: "File" }];
    const [c] = causes(await t.request("PUT", `${PODS}/${name}`, { body: current }));
    assert.match(c!, /^spec: Forbidden: pod updates may not change fields other than /);
    assert.match(c!, /changed: spec\.ephemeralContainers/);
    const created = await t.request("POST", PODS, {
      body: { apiVersion: "v1", kind: "Pod", metadata: { name: "born-with-debug" }, spec: { containers: [{ name: "main", image: "nginx" }], ephemeralContainers: [{ name: "dbg", image: "busybox" }] } },
    });
    assert.deepEqual(causes(created), ["spec.ephemeralContainers: Forbidden: cannot be set on create"]);
  });

  test("discovery and OpenAPI list pods/ephemeralcontainers (get, patch, update); other kinds have no such subresource", async () => {
    const res = await t.request("GET", "/api/v1");
    const sub = res.json.resources.find((r: { name: string }) => r.name === "pods/ephemeralcontainers");
    assert.deepEqual(sub && { kind: sub.kind, verbs: sub.verbs }, { kind: "Pod", verbs: ["get", "patch", "update"] });
    const openapi = await t.request("GET", "/openapi/v3/api/v1");
    assert.deepEqual(Object.keys(openapi.json.paths["/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers"] ?? {}).sort(), ["get", "parameters", "patch", "put"]);
    const cm = await t.request("POST", "/api/v1/namespaces/default/configmaps", { body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } } });
    assert.equal(cm.status, 201);
    assert.equal((await t.request("GET", "/api/v1/namespaces/default/configmaps/c/ephemeralcontainers")).status, 404);
    assert.equal((await t.request("GET", `${PODS}/missing/ephemeralcontainers`)).status, 404);
    assert.equal((await t.request("POST", `${PODS}/missing/ephemeralcontainers`, { body: {} })).status, 405);
  });
});
