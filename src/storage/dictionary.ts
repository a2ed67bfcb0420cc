// The dictionary stored values are compressed with: LZ4 in new lmdb stores
// (format 2, see lmdb/lmdb-storage.ts), deflate on etcd (compressed-values.ts).
// LZ4 finds repeats only within one value, and one stored object rarely
// repeats itself: a 3.5 KB pod came out of LZ4 near 2 KB, still past what an
// lmdb page holds inline (about 2 KB), so it kept a 4 KB overflow page. Primed
// with the text objects share (field names, managedFields' "f:" paths, common
// values), it comes out near 1 KB and packs into leaf pages: the store file
// and the pages it keeps resident halve. On etcd the same priming takes a pod
// from 3.2 KB to about 800 bytes, and etcd keeps recent writes in memory.
//
// An lmdb store keeps the dictionary it was created with in its meta database;
// a value on etcd names its dictionary by number (VALUE_DICTIONARIES), so a
// number's text never changes (dictionary.test.ts pins it): a later text gets
// the next number, and old values still read.
// It is written here for orch's objects (its own kinds' usual fields), with
// the likeliest text last: LZ4 reaches back at most 64 KiB, deflate 32 KiB.

const FRAGMENTS: readonly unknown[] = [
  { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name: "node-1", namespace: "kube-node-lease", ownerReferences: [{ apiVersion: "v1", kind: "Node", name: "node-1" }] }, spec: { holderIdentity: "node-1", leaseDurationSeconds: 40, renewTime: "2026-01-01T00:00:00.000000Z" } },
  {
    apiVersion: "v1", kind: "Node",
    metadata: { name: "node-1", labels: { "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": "node-1", "kubernetes.io/os": "linux", "node-role.kubernetes.io/control-plane": "" }, annotations: { "node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true" } },
    spec: { podCIDR: "10.244.0.0/24", podCIDRs: ["10.244.0.0/24"], taints: [{ key: "node.kubernetes.io/not-ready", effect: "NoSchedule" }] },
    status: {
      capacity: { cpu: "32", "ephemeral-storage": "100Gi", "hugepages-2Mi": "0", memory: "256Gi", pods: "110" },
      allocatable: { cpu: "32", "ephemeral-storage": "100Gi", memory: "256Gi", pods: "110" },
      conditions: ["MemoryPressure", "DiskPressure", "PIDPressure"].map((type) => ({ type, status: "False", lastHeartbeatTime: "2026-01-01T00:00:00Z", lastTransitionTime: "2026-01-01T00:00:00Z", reason: `NodeHasSufficient${type.replace("Pressure", "")}`, message: "node has no pressure" }))
        .concat([{ type: "Ready", status: "True", lastHeartbeatTime: "2026-01-01T00:00:00Z", lastTransitionTime: "2026-01-01T00:00:00Z", reason: "NodeAgentReady", message: "node agent is posting ready status" }]),
      addresses: [{ type: "InternalIP", address: "10.0.0.1" }, { type: "Hostname", address: "node-1" }],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: { machineID: "", systemUUID: "", bootID: "", kernelVersion: "6.1.0", osImage: "Debian GNU/Linux 12 (bookworm)", containerRuntimeVersion: "containerd://1.6.20", kubeletVersion: "v1.23.16", kubeProxyVersion: "v1.23.16", operatingSystem: "linux", architecture: "amd64" },
      images: [{ names: ["registry.k8s.io/pause:3.6"], sizeBytes: 301773 }],
    },
  },
  {
    apiVersion: "apps/v1", kind: "ReplicaSet",
    metadata: { name: "web-5d8f7c9b6d", namespace: "default", generation: 1, labels: { app: "web", "pod-template-hash": "5d8f7c9b6d" }, annotations: { "deployment.kubernetes.io/desired-replicas": "3", "deployment.kubernetes.io/max-replicas": "4", "deployment.kubernetes.io/revision": "1" }, ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: "", controller: true, blockOwnerDeletion: true }] },
    spec: { replicas: 3, selector: { matchLabels: { app: "web", "pod-template-hash": "5d8f7c9b6d" } } },
    status: { replicas: 3, fullyLabeledReplicas: 3, readyReplicas: 3, availableReplicas: 3, observedGeneration: 1 },
  },
  {
    apiVersion: "apps/v1", kind: "Deployment",
    spec: { progressDeadlineSeconds: 600, revisionHistoryLimit: 10, strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" } } },
    status: { conditions: [{ type: "Available", status: "True", reason: "MinimumReplicasAvailable", message: "Deployment has minimum availability." }, { type: "Progressing", status: "True", reason: "NewReplicaSetAvailable", message: 'ReplicaSet "web-5d8f7c9b6d" has successfully progressed.' }], updatedReplicas: 3 },
  },
  {
    apiVersion: "v1", kind: "Event",
    metadata: { name: "web-5d8f7c9b6d-x7k2p.18ec71949c3abfce", namespace: "default" },
    involvedObject: { kind: "Pod", namespace: "default", name: "web-5d8f7c9b6d-x7k2p", uid: "", apiVersion: "v1", resourceVersion: "1", fieldPath: "spec.containers{web}" },
    reason: "Scheduled", message: "Successfully assigned default/web-5d8f7c9b6d-x7k2p to node-1", source: { component: "default-scheduler" },
    firstTimestamp: "2026-01-01T00:00:00Z", lastTimestamp: "2026-01-01T00:00:00Z", count: 1, type: "Normal", eventTime: null, reportingComponent: "default-scheduler", reportingInstance: "",
  },
  { reason: "SuccessfulCreate", message: "Created pod: web-5d8f7c9b6d-x7k2p", source: { component: "replicaset-controller" }, reportingComponent: "replicaset-controller" },
  { reason: "Pulled", message: 'Container image "registry.k8s.io/pause:3.6" already present on machine' },
  { reason: "Created", message: "Created container web" },
  { reason: "Started", message: "Started container web" },
  {
    managedFields: [
      { manager: "orch-controller-manager", operation: "Update", apiVersion: "v1", time: "2026-01-01T00:00:00Z", fieldsType: "FieldsV1", fieldsV1: {
        "f:metadata": { "f:generateName": {}, "f:labels": { ".": {}, "f:app": {}, "f:pod-template-hash": {} }, "f:ownerReferences": { ".": {}, 'k:{"uid":""}': {} } },
        "f:spec": {
          "f:containers": { 'k:{"name":"web"}': { ".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}, "f:ports": {}, "f:resources": { ".": {}, "f:limits": {}, "f:requests": { ".": {}, "f:cpu": {}, "f:memory": {} } }, "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {} } },
          "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {}, "f:schedulerName": {}, "f:securityContext": {}, "f:terminationGracePeriodSeconds": {},
        },
      } },
      { manager: "orch-scheduler", operation: "Update", apiVersion: "v1", time: "2026-01-01T00:00:00Z", fieldsType: "FieldsV1", fieldsV1: { "f:status": { "f:conditions": { ".": {}, 'k:{"type":"PodScheduled"}': { ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {} } } } }, subresource: "status" },
      { manager: "orch-nodeagent", operation: "Update", apiVersion: "v1", time: "2026-01-01T00:00:00Z", fieldsType: "FieldsV1", subresource: "status", fieldsV1: { "f:status": {
        "f:conditions": { 'k:{"type":"ContainersReady"}': { ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {} }, 'k:{"type":"Initialized"}': { ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {} }, 'k:{"type":"Ready"}': { ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {} } },
        "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {}, "f:podIPs": { ".": {}, 'k:{"ip":"10.244.0.2"}': { ".": {}, "f:ip": {} } }, "f:startTime": {},
      } } },
    ],
  },
  {
    apiVersion: "v1", kind: "Pod",
    metadata: { name: "web-5d8f7c9b6d-x7k2p", generateName: "web-5d8f7c9b6d-", namespace: "default", uid: "", resourceVersion: "1", creationTimestamp: "2026-01-01T00:00:00Z", labels: { app: "web", "pod-template-hash": "5d8f7c9b6d" }, ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-5d8f7c9b6d", uid: "", controller: true, blockOwnerDeletion: true }] },
    spec: {
      volumes: [{ name: "kube-api-access-x7k2p", projected: { sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: "token" } }, { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } }, { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } }], defaultMode: 420 } }],
      containers: [{ name: "web", image: "registry.k8s.io/pause:3.6", resources: { limits: { cpu: "100m", memory: "128Mi" }, requests: { cpu: "10m", memory: "10Mi" } }, volumeMounts: [{ name: "kube-api-access-x7k2p", readOnly: true, mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" }], terminationMessagePath: "/dev/termination-log", terminationMessagePolicy: "File", imagePullPolicy: "IfNotPresent" }],
      restartPolicy: "Always", terminationGracePeriodSeconds: 30, dnsPolicy: "ClusterFirst", serviceAccountName: "default", serviceAccount: "default", nodeName: "node-1", securityContext: {}, schedulerName: "default-scheduler",
      tolerations: [{ key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 }, { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 }],
      priority: 0, enableServiceLinks: true, preemptionPolicy: "PreemptLowerPriority",
    },
    status: {
      phase: "Running",
      conditions: ["Initialized", "Ready", "ContainersReady", "PodScheduled"].map((type) => ({ type, status: "True", lastProbeTime: null, lastTransitionTime: "2026-01-01T00:00:00Z" })),
      hostIP: "10.0.0.1", podIP: "10.244.0.2", podIPs: [{ ip: "10.244.0.2" }], startTime: "2026-01-01T00:00:00Z",
      containerStatuses: [{ name: "web", state: { running: { startedAt: "2026-01-01T00:00:00Z" } }, lastState: {}, ready: true, restartCount: 0, image: "registry.k8s.io/pause:3.6", imageID: "sha256:", containerID: "containerd://", started: true }],
      qosClass: "Burstable",
    },
  },
];

/** The dictionary new lmdb stores are created with. */
export const STORE_DICTIONARY: Buffer = Buffer.from(FRAGMENTS.map((f) => JSON.stringify(f)).join("\n"));

/** Dictionaries by the number a compressed value on etcd names; the highest compresses new values. */
export const VALUE_DICTIONARIES: ReadonlyMap<number, Buffer> = new Map([[1, STORE_DICTIONARY]]);
