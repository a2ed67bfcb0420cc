// Speed of the Protobuf codec on a realistic ~3 KB pod and a 500-pod list, next to
// JSON.stringify/JSON.parse (run after a build:
// node dist/src/machinery/codec/protobuf/codec.bench.js). Median of seven rounds.

import { decodeEnvelope, encodeEnvelope } from "./envelope.js";
import { builtinRegistry } from "./testing.js";

function bench(name: string, iterations: number, fn: () => unknown): void {
  for (let i = 0; i < Math.min(iterations, 3000); i++) fn(); // warm up the JIT
  const rounds: number[] = [];
  for (let r = 0; r < 7; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) fn();
    rounds.push(Number(process.hrtime.bigint() - t) / 1000 / iterations);
  }
  rounds.sort((a, b) => a - b);
  console.log(`${name.padEnd(40)} ${rounds[3]!.toFixed(2).padStart(10)} µs/op`);
}

/** A pod as the API server stores it after defaulting, scheduling and a status update. */
export function benchPod(i = 0): Record<string, unknown> {
  const probe = { httpGet: { path: "/healthz", port: 8080, scheme: "HTTP" }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 };
  const container = (name: string) => ({
    name,
    image: `registry.example.com/team/${name}:v1.2.3`,
    command: ["/bin/server"],
    args: ["--port=8080", "--log-level=info"],
    ports: [{ name: "http", containerPort: 8080, protocol: "TCP" }],
    env: [
      { name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
      { name: "MODE", value: "production" },
    ],
    resources: { limits: { cpu: "500m", memory: "256Mi" }, requests: { cpu: "100m", memory: "128Mi" } },
    volumeMounts: [{ name: "config", mountPath: "/etc/config", readOnly: true }, { name: "kube-api-access", mountPath: "/var/run/secrets/orch.io/serviceaccount", readOnly: true }],
    livenessProbe: probe,
    readinessProbe: probe,
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
    imagePullPolicy: "IfNotPresent",
  });
  const status = (name: string) => ({
    name,
    state: { running: { startedAt: "2026-01-02T03:04:10Z" } },
    lastState: {},
    ready: true,
    restartCount: 0,
    image: `registry.example.com/team/${name}:v1.2.3`,
    imageID: `registry.example.com/team/${name}@sha256:${"ab".repeat(32)}`,
    containerID: `containerd://${"cd".repeat(32)}`,
    started: true,
  });
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `web-7d4b9c8f6d-x${i}`,
      generateName: "web-7d4b9c8f6d-",
      namespace: "default",
      uid: "4b3c6e1a-7f0d-4a8e-9c2b-1d5e6f7a8b9c",
      resourceVersion: String(1000 + i),
      creationTimestamp: "2026-01-02T03:04:05Z",
      labels: { app: "web", "pod-template-hash": "7d4b9c8f6d", tier: "frontend" },
      annotations: { "orch.io/created-by": "deployment-controller" },
      ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-7d4b9c8f6d", uid: "9a8b7c6d-5e4f-3a2b-1c0d-ef1234567890", controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      volumes: [
        { name: "config", configMap: { name: "web-config", defaultMode: 420 } },
        { name: "kube-api-access", projected: { sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: "token" } }, { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } }], defaultMode: 420 } },
      ],
      containers: [container("server")],
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      serviceAccountName: "default",
      serviceAccount: "default",
      nodeName: "node-1",
      securityContext: {},
      schedulerName: "default-scheduler",
      tolerations: [
        { key: "node.orch.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
        { key: "node.orch.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: "PreemptLowerPriority",
    },
    status: {
      phase: "Running",
      conditions: ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"].map((type) => ({
        type,
        status: "True",
        lastProbeTime: null,
        lastTransitionTime: "2026-01-02T03:04:11Z",
      })),
      hostIP: "10.0.0.11",
      hostIPs: [{ ip: "10.0.0.11" }],
      podIP: "10.244.1.17",
      podIPs: [{ ip: "10.244.1.17" }],
      startTime: "2026-01-02T03:04:05Z",
      containerStatuses: [status("server")],
      qosClass: "Burstable",
    },
  };
}

const registry = builtinRegistry();
const POD = "io.k8s.api.core.v1.Pod";
const pod = benchPod();
const json = JSON.stringify(pod);
const pb = encodeEnvelope(pod, POD, registry);
const lookup = (apiVersion: string, kind: string) => (apiVersion === "v1" ? `io.k8s.api.core.v1.${kind}` : undefined);
const list = { apiVersion: "v1", kind: "PodList", metadata: { resourceVersion: "9999" }, items: Array.from({ length: 500 }, (_, i) => benchPod(i)) };
const listJson = JSON.stringify(list);
const listPb = encodeEnvelope(list, `${POD}List`, registry);

console.log(`pod: ${json.length} bytes of JSON, ${pb.length} of Protobuf; list of 500: ${listJson.length} bytes of JSON, ${listPb.length} of Protobuf`);
bench("JSON.stringify (baseline), pod", 20000, () => JSON.stringify(pod));
bench("encodeEnvelope, pod", 20000, () => encodeEnvelope(pod, POD, registry));
bench("JSON.parse (baseline), pod", 20000, () => JSON.parse(json));
bench("decodeEnvelope, pod", 20000, () => decodeEnvelope(pb, registry, lookup));
bench("JSON.stringify (baseline), 500 pods", 50, () => JSON.stringify(list));
bench("encodeEnvelope, 500 pods", 50, () => encodeEnvelope(list, `${POD}List`, registry));
bench("JSON.parse (baseline), 500 pods", 50, () => JSON.parse(listJson));
bench("decodeEnvelope, 500 pods", 50, () => decodeEnvelope(listPb, registry, lookup));
