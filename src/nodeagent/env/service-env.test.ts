// The API server's service environment in every container (upstream's
// kubelet sets it for the `kubernetes` service always): the variable names
// and values, their lowest precedence, and $(...) expansion of them.

import { test } from "node:test";
import assert from "node:assert/strict";
import type { Pod, Service } from "../../api/core/types.js";
import { containerEnv, serviceEnv, type ObjectSource } from "./env.js";

const kubernetes: Service = {
  apiVersion: "v1", kind: "Service", metadata: { name: "kubernetes", namespace: "default" },
  spec: { clusterIP: "10.96.0.1", ports: [{ name: "https", port: 443, protocol: "TCP", targetPort: 6443 }] },
};

test("serviceEnv: upstream's names for the kubernetes service; none without a cluster IP", () => {
  assert.deepEqual(Object.fromEntries(serviceEnv("kubernetes", kubernetes)), {
    KUBERNETES_SERVICE_HOST: "10.96.0.1",
    KUBERNETES_SERVICE_PORT: "443",
    KUBERNETES_SERVICE_PORT_HTTPS: "443",
    KUBERNETES_PORT: "tcp://10.96.0.1:443",
    KUBERNETES_PORT_443_TCP: "tcp://10.96.0.1:443",
    KUBERNETES_PORT_443_TCP_PROTO: "tcp",
    KUBERNETES_PORT_443_TCP_PORT: "443",
    KUBERNETES_PORT_443_TCP_ADDR: "10.96.0.1",
  });
  assert.equal(Object.fromEntries(serviceEnv("kubernetes", { ...kubernetes, spec: { ...kubernetes.spec, clusterIP: "fd00::1" } }))["KUBERNETES_PORT"], "tcp://[fd00::1]:443");
  assert.deepEqual(serviceEnv("kubernetes", undefined), []);
  assert.deepEqual(serviceEnv("kubernetes", { ...kubernetes, spec: { clusterIP: "None", ports: [] } }), []);
});

test("containers get the API server's service environment, below their own env, usable in $(...)", async () => {
  const objects: ObjectSource = { configMap: async () => undefined, secret: async () => undefined, apiServerService: async () => kubernetes };
  const pod: Pod = {
    apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "n", uid: "u" },
    spec: { containers: [{ name: "c", env: [{ name: "KUBERNETES_SERVICE_PORT", value: "8443" }, { name: "URL", value: "https://$(KUBERNETES_SERVICE_HOST)" }] }] },
  };
  const env = Object.fromEntries((await containerEnv(pod, pod.spec!.containers![0]!, { objects, hostIP: "", podIP: "", nodeAllocatable: { cpu: 1, memory: 1 } })).map((kv) => [kv.key, kv.value]));
  assert.equal(env["KUBERNETES_SERVICE_HOST"], "10.96.0.1");
  assert.equal(env["KUBERNETES_SERVICE_PORT"], "8443");
  assert.equal(env["URL"], "https://10.96.0.1");
  assert.equal(env["KUBERNETES_PORT_443_TCP_ADDR"], "10.96.0.1");
});

test("service links: every service of the pod's namespace with a cluster IP, unless enableServiceLinks is false", async () => {
  const fooservice: Service = { apiVersion: "v1", kind: "Service", metadata: { name: "fooservice", namespace: "n" }, spec: { clusterIP: "10.96.0.7", ports: [{ port: 8765, protocol: "TCP" }] } };
  const headless: Service = { apiVersion: "v1", kind: "Service", metadata: { name: "headless", namespace: "n" }, spec: { clusterIP: "None", ports: [{ port: 80 }] } };
  const asked: string[] = [];
  const objects: ObjectSource = {
    configMap: async () => undefined, secret: async () => undefined, apiServerService: async () => kubernetes,
    services: async (ns) => (asked.push(ns), [fooservice, headless]),
  };
  const pod = (links?: boolean): Pod => ({ apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "n", uid: "u" }, spec: { ...(links === undefined ? {} : { enableServiceLinks: links }), containers: [{ name: "c" }] } });
  const envOf = async (p: Pod) => Object.fromEntries((await containerEnv(p, p.spec!.containers![0]!, { objects, hostIP: "", podIP: "", nodeAllocatable: { cpu: 1, memory: 1 } })).map((kv) => [kv.key, kv.value]));
  const env = await envOf(pod());
  assert.deepEqual(asked, ["n"]);
  assert.equal(env["FOOSERVICE_SERVICE_HOST"], "10.96.0.7");
  assert.equal(env["FOOSERVICE_SERVICE_PORT"], "8765");
  assert.equal(env["FOOSERVICE_PORT_8765_TCP_ADDR"], "10.96.0.7");
  assert.equal(env["HEADLESS_SERVICE_HOST"], undefined, "no cluster IP, no variables");
  assert.equal(env["KUBERNETES_SERVICE_HOST"], "10.96.0.1", "the API server's always");
  const off = await envOf(pod(false));
  assert.equal(off["FOOSERVICE_SERVICE_HOST"], undefined);
  assert.equal(off["KUBERNETES_SERVICE_HOST"], "10.96.0.1");
});
