import { test } from "node:test";
import assert from "node:assert/strict";
import type { Pod } from "../../api/core/types.js";
import { ContainerConfigError, containerEnv, expand, type ObjectSource } from "./env.js";

const objects: ObjectSource = {
  configMap: async (_ns, name) => (name === "cm" ? { data: { COLOR: "blue", size: "L" } } : undefined),
  secret: async (_ns, name) => (name === "s" ? { password: "hunter2" } : undefined),
};
const ctx = { objects, hostIP: "10.0.0.1", podIP: "10.1.0.5", nodeAllocatable: { cpu: 4, memory: 8 * 1024 ** 3 } };

const pod = (env: unknown[], envFrom: unknown[] = []): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", namespace: "ns1", uid: "u1", labels: { app: "web" } },
  spec: { nodeName: "n1", containers: [{ name: "c", env: env as never, envFrom: envFrom as never, resources: { limits: { memory: "64Mi" }, requests: { cpu: "250m" } } }] },
});

test("env: values, $(VAR) expansion, field refs, resource refs, ConfigMap and Secret keys, envFrom with prefix", async () => {
  const p = pod(
    [
      { name: "A", value: "a" },
      { name: "B", value: "$(A)-$(MISSING)-$$(A)" },
      { name: "POD", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
      { name: "APP", valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
      { name: "IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
      { name: "NODE", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
      { name: "MEM", valueFrom: { resourceFieldRef: { resource: "limits.memory", divisor: "1Mi" } } },
      { name: "CPU", valueFrom: { resourceFieldRef: { resource: "limits.cpu" } } },
      { name: "COLOR", valueFrom: { configMapKeyRef: { name: "cm", key: "COLOR" } } },
      { name: "PW", valueFrom: { secretKeyRef: { name: "s", key: "password" } } },
      { name: "OPT", valueFrom: { secretKeyRef: { name: "nope", key: "x", optional: true } } },
    ],
    [{ configMapRef: { name: "cm" }, prefix: "CM_" }],
  );
  const env = Object.fromEntries((await containerEnv(p, p.spec!.containers![0]!, ctx)).map((kv) => [kv.key, kv.value]));
  assert.deepEqual(env, {
    CM_COLOR: "blue", CM_size: "L", A: "a", B: "a-$(MISSING)-$(A)", POD: "web", APP: "web", IP: "10.1.0.5", NODE: "n1",
    MEM: "64", CPU: "4", COLOR: "blue", PW: "hunter2", OPT: "",
  });
  assert.equal(expand("$(A)$(B)", new Map([["A", "1"]])), "1$(B)");
});

test("env: a missing ConfigMap, Secret or key is a CreateContainerConfigError with upstream's message", async () => {
  const cases: [unknown, RegExp][] = [
    [{ name: "X", valueFrom: { configMapKeyRef: { name: "absent", key: "k" } } }, /configmap "absent" not found/],
    [{ name: "X", valueFrom: { secretKeyRef: { name: "absent", key: "k" } } }, /secret "absent" not found/],
    [{ name: "X", valueFrom: { configMapKeyRef: { name: "cm", key: "nokey" } } }, /couldn't find key nokey in ConfigMap ns1\/cm/],
  ];
  for (const [env, message] of cases) {
    const p = pod([env]);
    await assert.rejects(containerEnv(p, p.spec!.containers![0]!, ctx), (e: unknown) => e instanceof ContainerConfigError && e.reason === "CreateContainerConfigError" && message.test((e as Error).message));
  }
});
