// End to end: representations with the real, unmodified kubectl 1.33 against
// the real `orch apiserver`: `get` prints upstream's columns from our Tables,
// kubectl's imperative generators send Protobuf bodies (and read Protobuf
// answers), `-o yaml`, and a Protobuf watch read with our own decoder.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync, mkdtempSync } from "node:fs";
import { connect } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinModules } from "../src/api/index.js";
import { namingFor } from "../src/machinery/naming.js";
import { ApiRegistry } from "../src/apiserver/api-registry.js";
import { loadKubeconfig } from "../src/client/kubeconfig.js";
import { RestClient } from "../src/client/rest.js";
import { WatchFrameReader, decodeWatchEvent } from "../src/machinery/codec/protobuf/index.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const files = mkdtempSync(join(tmpdir(), "orch-e2e-encodings-"));
function file(name: string, content: string): string {
  const path = join(files, name);
  writeFileSync(path, content);
  return path;
}

const OBJECTS = `apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels: {node-role.orch.io/control-plane: ""}
status:
  nodeInfo: {kubeletVersion: v1.33.0}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: default}
spec:
  containers: [{name: main, image: busybox:1.36}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  ports: [{port: 80, protocol: TCP}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: default}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox:1.36}]
---
apiVersion: coordination.orch.io/v1
kind: Lease
metadata: {name: leader, namespace: default}
spec: {holderIdentity: node-a}
`;

/** The header line of a `kubectl get` table, as a list of column names. */
function header(out: string): string[] {
  return out.split("\n")[0]!.trim().split(/\s{2,}/);
}

describe("kubectl 1.33: representations", { skip: kubectlSkipReason() ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  before(async () => {
    orch = await startOrch("apiserver");
    k = new Kubectl(orch.kubeconfig);
    await k.ok("create", "-f", file("objects.yaml", OBJECTS));
  });
  after(() => orch?.stop());

  test("imperative generators send Protobuf bodies: create deployment, namespace, configmap", async () => {
    assert.match(await k.ok("create", "deployment", "web", "--image=nginx:1.27", "--replicas=2"), /deployment.apps\/web created/);
    assert.match(await k.ok("create", "namespace", "team-a"), /namespace\/team-a created/);
    assert.match(await k.ok("create", "configmap", "settings", "--from-literal=mode=fast", "--from-literal=level=3"), /configmap\/settings created/);
    const deployment = JSON.parse(await k.ok("get", "deployment", "web", "-o", "json"));
    assert.equal(deployment.spec.replicas, 2);
    assert.equal(deployment.spec.template.spec.containers[0].image, "nginx:1.27");
    assert.deepEqual(deployment.spec.selector.matchLabels, { app: "web" });
    const cm = JSON.parse(await k.ok("get", "configmap", "settings", "-o", "json"));
    assert.deepEqual(cm.data, { mode: "fast", level: "3" });
    assert.equal(JSON.parse(await k.ok("get", "namespace", "team-a", "-o", "json")).status.phase, "Active");
    const again = await k.run(["create", "namespace", "team-a"]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /Error from server \(AlreadyExists\): namespaces "team-a" already exists/, "a Protobuf Status error reads back");
  });

  test("get prints upstream's columns for pods, nodes, deployments, services, jobs, leases", async () => {
    const expected: Array<[string, string[], RegExp]> = [
      ["pods", ["NAME", "READY", "STATUS", "RESTARTS", "AGE"], /^web-1\s+0\/1\s+Pending\s+0\s+\S+$/m],
      ["nodes", ["NAME", "STATUS", "ROLES", "AGE", "VERSION"], /^node-a\s+\S+\s+control-plane\s+\S+\s+v1\.33\.0$/m],
      ["services", ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"], /^web\s+ClusterIP\s+\S+\s+<none>\s+80\/TCP\s+\S+$/m],
      ["jobs", ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"], /^once\s+/m],
      ["leases", ["NAME", "HOLDER", "AGE"], /^leader\s+node-a\s+\S+$/m],
    ];
    await k.ok("get", "deployment", "web").catch(() => k.ok("create", "deployment", "web", "--image=nginx:1.27"));
    expected.push(["deployments", ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"], /^web\s+0\/\d\s+\d\s+\d\s+\S+$/m]);
    for (const [resource, columns, row] of expected) {
      const out = await k.ok("get", resource);
      assert.deepEqual(header(out), columns, `${resource}:\n${out}`);
      assert.match(out, row, `${resource}:\n${out}`);
    }
    const wide = await k.ok("get", "pods", "-o", "wide");
    assert.deepEqual(header(wide).slice(0, 7), ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]);
  });

  test("a list over the gzip threshold reads back (kubectl's Go transport asks for gzip)", async () => {
    const big = "x".repeat(40 * 1024);
    for (const name of ["big-1", "big-2", "big-3", "big-4"]) await k.ok("create", "configmap", name, `--from-literal=data=${big}`);
    const list = JSON.parse(await k.ok("get", "configmaps", "-o", "json"));
    assert.equal(list.items.filter((c: { data?: { data?: string } }) => c.data?.data === big).length, 4);
    const verbose = await k.run(["get", "configmaps", "-o", "name", "-v=8"]);
    // Go's transport takes Content-Encoding away once it has decompressed; the Vary header we send only with gzip stays.
    assert.match(verbose.stderr, /Vary: Accept-Encoding/, "the list went out compressed");
  });

  test("get -o yaml", async () => {
    const yaml = await k.ok("get", "configmap", "settings", "-o", "yaml");
    assert.match(yaml, /^kind: ConfigMap$/m);
    assert.match(yaml, /^ {2}mode: fast$/m);
    assert.match(yaml, /^ {2}level: "3"$/m);
  });

  test("a Protobuf watch read with our own decoder, and our client reading Protobuf", async () => {
    const config = loadKubeconfig(orch.kubeconfig);
    const registry = new ApiRegistry(builtinModules(), namingFor());
    const lookupType = (apiVersion: string, kind: string) => registry.schemaTypeOf(apiVersion, kind);
    const client = new RestClient(config, { protobuf: { schemas: registry.schemas, lookupType } });
    try {
      const list = await client.list({ group: "", version: "v1", resource: "configmaps", namespaced: true }, { namespace: "default" });
      assert.equal(list.kind, "ConfigMapList");
      assert.ok(list.items.some((c) => c.metadata.name === "settings"));
    } finally {
      client.close();
    }

    const session = connect(config.server, { ca: config.ca! });
    try {
      const stream = session.request({
        ":path": "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0",
        authorization: `Bearer ${config.token}`,
        accept: "application/vnd.kubernetes.protobuf",
      });
      const headers = await new Promise<Record<string, unknown>>((resolve) => stream.once("response", resolve));
      assert.equal(headers["content-type"], "application/vnd.kubernetes.protobuf;stream=watch");
      const reader = new WatchFrameReader();
      const names: string[] = [];
      const added = k.ok("create", "configmap", "later", "--from-literal=a=b");
      for await (const chunk of stream) {
        for (const frame of reader.push(chunk as Buffer)) {
          const event = decodeWatchEvent(frame, registry.schemas, lookupType);
          names.push(`${event.type} ${(event.object.metadata as { name: string }).name}`);
        }
        if (names.includes("ADDED later")) break;
      }
      await added;
      assert.ok(names.includes("ADDED settings"), names.join(", "));
      assert.equal(names.at(-1), "ADDED later");
      stream.close();
    } finally {
      session.close();
    }
  });
});
