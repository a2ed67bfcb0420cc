import { test } from "node:test";
import assert from "node:assert/strict";
import { SchemaRegistry, type TypeDef } from "../../machinery/schema.js";
import { META_V1, registerMetaSchemas } from "../meta/schemas.js";
import { CORE_V1, registerCoreSchemas } from "./schemas.js";

function registry(): SchemaRegistry {
  const r = new SchemaRegistry();
  registerCoreSchemas(r);
  return r;
}

const tags = (def: TypeDef) => Object.fromEntries(Object.entries(def.fields).map(([n, f]) => [n, f.tag]));

test("meta + core: every reference resolves, and registering twice is a no-op", () => {
  const r = registry();
  assert.deepEqual(r.checkRefs(), []);
  registerCoreSchemas(r);
  registerMetaSchemas(r);
  assert.ok([...r.all()].length > 100);
});

test("no message uses a field number twice (embedded sub-messages counted apart)", () => {
  for (const def of registry().all()) {
    const seen = new Set<string>();
    for (const [name, f] of Object.entries(def.fields)) {
      const key = `${f.embeddedIn ?? 0}/${f.tag}`;
      assert.ok(!seen.has(key), `${def.name}.${name} reuses ${key}`);
      seen.add(key);
    }
  }
});

test("protobuf field numbers match upstream's generated.proto", () => {
  const r = registry();
  const get = (name: string) => tags(r.mustGet(name));
  assert.deepEqual(get(`${META_V1}.ObjectMeta`), {
    name: 1,
    generateName: 2,
    namespace: 3,
    selfLink: 4,
    uid: 5,
    resourceVersion: 6,
    generation: 7,
    creationTimestamp: 8,
    deletionTimestamp: 9,
    deletionGracePeriodSeconds: 10,
    labels: 11,
    annotations: 12,
    ownerReferences: 13,
    finalizers: 14,
    managedFields: 17,
  });
  assert.deepEqual(get(`${META_V1}.OwnerReference`), { apiVersion: 5, kind: 1, name: 3, uid: 4, controller: 6, blockOwnerDeletion: 7 });
  assert.deepEqual(get(`${META_V1}.ManagedFieldsEntry`), { manager: 1, operation: 2, apiVersion: 3, time: 4, fieldsType: 6, fieldsV1: 7, subresource: 8 });
  assert.deepEqual(get(`${META_V1}.StatusDetails`), { name: 1, group: 2, kind: 3, uid: 6, causes: 4, retryAfterSeconds: 5 });

  const podSpec = get(`${CORE_V1}.PodSpec`);
  const wantPodSpec: Record<string, number> = {
    volumes: 1,
    containers: 2,
    restartPolicy: 3,
    terminationGracePeriodSeconds: 4,
    activeDeadlineSeconds: 5,
    dnsPolicy: 6,
    nodeSelector: 7,
    serviceAccountName: 8,
    serviceAccount: 9,
    nodeName: 10,
    hostNetwork: 11,
    securityContext: 14,
    imagePullSecrets: 15,
    affinity: 18,
    schedulerName: 19,
    initContainers: 20,
    automountServiceAccountToken: 21,
    tolerations: 22,
    hostAliases: 23,
    priority: 25,
    readinessGates: 28,
    enableServiceLinks: 30,
    preemptionPolicy: 31,
    topologySpreadConstraints: 33,
    ephemeralContainers: 34,
    os: 36,
    schedulingGates: 38,
    resources: 40,
  };
  for (const [name, tag] of Object.entries(wantPodSpec)) assert.equal(podSpec[name], tag, `PodSpec.${name}`);

  const container = get(`${CORE_V1}.Container`);
  const wantContainer: Record<string, number> = {
    name: 1,
    image: 2,
    command: 3,
    args: 4,
    workingDir: 5,
    ports: 6,
    env: 7,
    resources: 8,
    volumeMounts: 9,
    livenessProbe: 10,
    readinessProbe: 11,
    lifecycle: 12,
    terminationMessagePath: 13,
    imagePullPolicy: 14,
    securityContext: 15,
    stdin: 16,
    stdinOnce: 17,
    tty: 18,
    envFrom: 19,
    terminationMessagePolicy: 20,
    volumeDevices: 21,
    startupProbe: 22,
    resizePolicy: 23,
    restartPolicy: 24,
  };
  assert.deepEqual(container, wantContainer);

  assert.deepEqual(get(`${CORE_V1}.ServicePort`), { name: 1, protocol: 2, appProtocol: 6, port: 3, targetPort: 4, nodePort: 5 });
  const svc = get(`${CORE_V1}.ServiceSpec`);
  for (const [name, tag] of Object.entries({ ports: 1, selector: 2, clusterIP: 3, type: 4, externalIPs: 5, sessionAffinity: 7, externalName: 10, clusterIPs: 18, ipFamilies: 19, ipFamilyPolicy: 17, internalTrafficPolicy: 22 })) {
    assert.equal(svc[name], tag, `ServiceSpec.${name}`);
  }
  const status = get(`${CORE_V1}.PodStatus`);
  for (const [name, tag] of Object.entries({ phase: 1, conditions: 2, hostIP: 5, podIP: 6, startTime: 7, containerStatuses: 8, qosClass: 9, nominatedNodeName: 11, podIPs: 12 })) {
    assert.equal(status[name], tag, `PodStatus.${name}`);
  }
  const node = get(`${CORE_V1}.NodeStatus`);
  for (const [name, tag] of Object.entries({ capacity: 1, allocatable: 2, conditions: 4, addresses: 5, daemonEndpoints: 6, nodeInfo: 7, images: 8, features: 13, declaredFeatures: 14 })) {
    assert.equal(node[name], tag, `NodeStatus.${name}`);
  }
  assert.deepEqual(get(`${CORE_V1}.Secret`), { metadata: 1, immutable: 5, data: 2, stringData: 4, type: 3 });
  assert.deepEqual(get(`${CORE_V1}.ConfigMap`), { metadata: 1, immutable: 4, data: 2, binaryData: 3 });
  assert.equal(get(`${CORE_V1}.Event`)["reportingInstance"], 15);
  assert.equal(get(`${CORE_V1}.Event`)["eventTime"], 10);
});

test("Go's embedded structs are marked: JSON flat, Protobuf nested", () => {
  const r = registry();
  const volume = r.mustGet(`${CORE_V1}.Volume`).fields;
  assert.equal(volume["name"]!.embeddedIn, undefined);
  assert.deepEqual([volume["configMap"]!.embeddedIn, volume["configMap"]!.tag], [2, 19]);
  const probe = r.mustGet(`${CORE_V1}.Probe`).fields;
  assert.deepEqual([probe["httpGet"]!.embeddedIn, probe["httpGet"]!.tag, probe["periodSeconds"]!.embeddedIn], [1, 2, undefined]);
  const eph = r.mustGet(`${CORE_V1}.EphemeralContainer`).fields;
  assert.deepEqual([eph["image"]!.embeddedIn, eph["image"]!.tag, eph["targetContainerName"]!.tag], [1, 2, 2]);
  assert.equal(r.mustGet(`${CORE_V1}.ConfigMapKeySelector`).fields["name"]!.embeddedIn, 1);
});

test("strategic-merge keys and list types follow upstream's OpenAPI", () => {
  const r = registry();
  const field = (type: string, name: string) => r.mustGet(`${CORE_V1}.${type}`).fields[name]!;
  const cases: [string, string, string, string | undefined, string[] | undefined][] = [
    ["PodSpec", "containers", "merge", "name", ["name"]],
    ["PodSpec", "volumes", "merge,retainKeys", "name", ["name"]],
    ["PodSpec", "topologySpreadConstraints", "merge", "topologyKey", ["topologyKey", "whenUnsatisfiable"]],
    ["Container", "env", "merge", "name", ["name"]],
    ["Container", "ports", "merge", "containerPort", ["containerPort", "protocol"]],
    ["Container", "volumeMounts", "merge", "mountPath", ["mountPath"]],
    ["ServiceSpec", "ports", "merge", "port", ["port", "protocol"]],
    ["NodeStatus", "addresses", "merge", "type", ["type"]],
    ["PodStatus", "podIPs", "merge", "ip", ["ip"]],
  ];
  for (const [type, name, strategy, key, mapKeys] of cases) {
    const f = field(type, name);
    assert.equal(f.patchStrategy, strategy, `${type}.${name}`);
    assert.equal(f.patchMergeKey, key, `${type}.${name}`);
    assert.ok(f.schema.type === "array" && f.schema.listType === "map", `${type}.${name} is a map list`);
    if (f.schema.type === "array") assert.deepEqual(f.schema.listMapKeys, mapKeys);
  }
  const meta = r.mustGet(`${META_V1}.ObjectMeta`).fields;
  assert.deepEqual([meta["ownerReferences"]!.patchMergeKey, meta["finalizers"]!.patchStrategy], ["uid", "merge"]);
  assert.equal(field("PodSpec", "tolerations").schema.type === "array" && (field("PodSpec", "tolerations").schema as { listType?: string }).listType, "atomic");
  assert.equal(field("PodSpec", "containers").required, true);
});
