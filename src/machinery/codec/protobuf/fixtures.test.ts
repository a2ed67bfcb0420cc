// Bytes written by hand from upstream's field numbers (k8s.io/api/core/v1 and
// apimachinery generated.proto), not by the codec: each line is one field, as
// `key length value`, key = field number << 3 | wire type (0 varint, 2 bytes).

import { test } from "node:test";
import assert from "node:assert/strict";
import { decodeEnvelope, decodeMessage, encodeEnvelope, encodeMessage } from "./index.js";
import { builtinRegistry, hex, toHex } from "./testing.js";

const registry = builtinRegistry();
const CORE = "io.k8s.api.core.v1";
const lookup = (apiVersion: string, kind: string) => (apiVersion === "v1" ? `${CORE}.${kind}` : apiVersion === "apps/v1" ? `io.k8s.api.apps.v1.${kind}` : undefined);

const configMap = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "cfg", namespace: "default", labels: { tier: "fe", app: "web" } },
  data: { b: "hello", a: "1" },
};

const CONFIG_MAP = hex(
  "0a 26", //                      ConfigMap.metadata (1), 38 bytes
  "  0a 03 636667", //             ObjectMeta.name (1) "cfg"
  "  1a 07 64656661756c74", //     ObjectMeta.namespace (3) "default"
  "  5a 0a", //                    ObjectMeta.labels (11) entry, keys sorted as Go does
  "    0a 03 617070 12 03 776562", //  key (1) "app", value (2) "web"
  "  5a 0a", //                    labels entry
  "    0a 04 74696572 12 02 6665", //  "tier" → "fe"
  "12 06 0a 01 61 12 01 31", //    ConfigMap.data (2) entry "a" → "1"
  "12 0a 0a 01 62 12 05 68656c6c6f", // data entry "b" → "hello"
);

const CONFIG_MAP_ENVELOPE = hex(
  "6b 38 73 00", //                magic "k8s\0"
  "0a 0f", //                      Unknown.typeMeta (1), 15 bytes
  "  0a 02 7631", //               TypeMeta.apiVersion (1) "v1"
  "  12 09 436f6e6669674d6170", // TypeMeta.kind (2) "ConfigMap"
  "12 3c", //                      Unknown.raw (2), 60 bytes: the message above
  toHex(CONFIG_MAP),
  "1a 00", //                      Unknown.contentEncoding (3) "", written by Go anyway
  "22 00", //                      Unknown.contentType (4) ""
);

test("ConfigMap: name, namespace, labels and data byte for byte", () => {
  assert.equal(toHex(encodeMessage(configMap, `${CORE}.ConfigMap`, registry)), toHex(CONFIG_MAP));
  assert.equal(toHex(encodeEnvelope(configMap, `${CORE}.ConfigMap`, registry)), toHex(CONFIG_MAP_ENVELOPE));
});

test("ConfigMap decodes from the hand-written envelope, apiVersion and kind first", () => {
  const obj = decodeEnvelope(CONFIG_MAP_ENVELOPE, registry, lookup);
  assert.deepEqual(obj, configMap);
  assert.deepEqual(Object.keys(obj), ["apiVersion", "kind", "metadata", "data"]);
});

const pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "web",
    namespace: "default",
    uid: "u1",
    resourceVersion: "42",
    creationTimestamp: "2024-01-02T03:04:05Z",
    labels: { app: "web" },
  },
  spec: {
    containers: [
      {
        name: "c",
        image: "nginx:1.25",
        args: ["-g", "daemon off;"],
        ports: [{ containerPort: 80, protocol: "TCP" }],
        resources: { limits: { cpu: "500m", memory: "128Mi" } },
        livenessProbe: { httpGet: { path: "/", port: 8080 }, periodSeconds: 10 },
      },
    ],
    restartPolicy: "Always",
    terminationGracePeriodSeconds: 30,
    priority: -5,
  },
  status: {
    phase: "Pending",
    conditions: [{ type: "PodScheduled", status: "True", lastTransitionTime: "2024-01-02T03:04:06Z" }],
  },
};

// 2024-01-02T03:04:05Z is 1704164645 s since the epoch: varint a5 fa cd ac 06.
const POD = hex(
  "0a 2c", //                                Pod.metadata (1), 44 bytes
  "  0a 03 776562", //                       name (1)
  "  1a 07 64656661756c74", //               namespace (3)
  "  2a 02 7531", //                         uid (5)
  "  32 02 3432", //                         resourceVersion (6)
  "  42 08 08 a5facdac06 10 00", //          creationTimestamp (8): Timestamp seconds (1), nanos (2) = 0
  "  5a 0a 0a 03 617070 12 03 776562", //    labels (11) "app" → "web"
  "12 79", //                                Pod.spec (2), 121 bytes
  "  12 61", //                              PodSpec.containers (2), 97 bytes
  "    0a 01 63", //                         Container.name (1) "c"
  "    12 0a 6e67696e783a312e3235", //       image (2) "nginx:1.25"
  "    22 02 2d67", //                       args (4) "-g", repeated, not packed
  "    22 0b 6461656d6f6e206f66663b", //     args (4) "daemon off;"
  "    32 07 18 50 22 03 544350", //         ports (6): containerPort (3) 80, protocol (4) "TCP"
  "    42 22", //                            resources (8), 34 bytes
  "      0a 0d 0a 03 637075 12 06 0a 04 3530306d", //       limits (1) "cpu" → Quantity{string (1) "500m"}
  "      0a 11 0a 06 6d656d6f7279 12 07 0a 05 3132384d69", // limits "memory" → "128Mi"
  "    52 12", //                            livenessProbe (10), 18 bytes
  "      0a 0e", //                          Probe's embedded ProbeHandler (1)
  "        12 0c", //                        ProbeHandler.httpGet (2)
  "          0a 01 2f", //                   HTTPGetAction.path (1) "/"
  "          12 07 08 00 10 903f 1a 00", //  port (2): IntOrString type (1) 0, intVal (2) 8080, strVal (3) ""
  "      20 0a", //                          Probe.periodSeconds (4) 10
  "  1a 06 416c77617973", //                 PodSpec.restartPolicy (3) "Always"
  "  20 1e", //                              terminationGracePeriodSeconds (4) 30
  "  c8 01 fbffffffffffffffff01", //         priority (25): int32 -5, sign-extended to 10 bytes
  "1a 29", //                                Pod.status (3), 41 bytes
  "  0a 07 50656e64696e67", //               PodStatus.phase (1) "Pending"
  "  12 1e", //                              conditions (2)
  "    0a 0c 506f645363686564756c6564", //   PodCondition.type (1)
  "    12 04 54727565", //                   status (2) "True"
  "    22 08 08 a6facdac06 10 00", //        lastTransitionTime (4)
);

const POD_ENVELOPE = hex(
  "6b 38 73 00",
  "0a 09 0a 02 7631 12 03 506f64", // typeMeta: apiVersion "v1", kind "Pod"
  "12 d4 01", //                      raw (2): 212 bytes (a two-byte length)
  toHex(POD),
  "1a 00 22 00",
);

test("Pod with one container byte for byte: embedded ProbeHandler, IntOrString, quantities, times, negative int32", () => {
  assert.equal(POD.length, 212);
  assert.equal(toHex(encodeMessage(pod, `${CORE}.Pod`, registry)), toHex(POD));
  assert.equal(toHex(encodeEnvelope(pod, `${CORE}.Pod`, registry)), toHex(POD_ENVELOPE));
});

test("Pod decodes from the hand-written bytes, keys in upstream's JSON order", () => {
  const obj = decodeEnvelope(POD_ENVELOPE, registry, lookup);
  assert.deepEqual(obj, pod);
  assert.equal(JSON.stringify(obj), JSON.stringify(pod));
});

test("Secret: format byte values are bytes on the wire, a pointer false is written and kept", () => {
  const secret = { metadata: { name: "s" }, immutable: false, data: { k: "AP8=" }, type: "Opaque" };
  const bytes = hex(
    "0a 03 0a 01 73", //        metadata: name "s"
    "12 07 0a 01 6b 12 02 00ff", // data (2) "k" → bytes 00 ff (base64 "AP8=")
    "1a 06 4f7061717565", //     type (3) "Opaque"
    "28 00", //                  immutable (5) false: a *bool in Go, so false is not unset
  );
  assert.equal(toHex(encodeMessage(secret, `${CORE}.Secret`, registry)), toHex(bytes));
  assert.deepEqual(decodeMessage(bytes, `${CORE}.Secret`, registry), secret);
});

test("what a Go client writes: every non-pointer field, zero or not; decoding drops the zeros upstream's JSON omits", () => {
  // ObjectMeta as gogo writes it for {name: "web"}: all non-pointer strings, generation 0,
  // an empty creationTimestamp (Go's zero Time writes no fields).
  const goMeta = hex("0a 03 776562", "12 00", "1a 00", "22 00", "2a 00", "32 00", "38 00", "42 00");
  assert.deepEqual(decodeMessage(goMeta, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", registry), { name: "web" });
  // ContainerStatus.ready and restartCount are required (no omitempty upstream): their zeros stay.
  const status = hex("0a 01 63", "12 00", "1a 00", "20 00", "28 00", "32 00", "3a 00", "42 00");
  assert.deepEqual(decodeMessage(status, `${CORE}.ContainerStatus`, registry), {
    name: "c",
    state: {},
    lastState: {},
    ready: false,
    restartCount: 0,
    image: "",
    imageID: "",
  });
  // Go's zero time written as seconds = -62135596800 (0001-01-01) also means unset.
  // lastState (3) → running (2) → startedAt (1) → Timestamp { seconds (1), nanos (2) }
  const zeroTime = hex("0a 01 63", "1a 11 12 0f 0a 0d 08 8092b8c398feffffff01 10 00");
  assert.deepEqual(decodeMessage(zeroTime, `${CORE}.ContainerStatus`, registry), { name: "c", lastState: { running: {} } });
});

test("Deployment: replicas 0 (a pointer) survives both ways; maxSurge as a string IntOrString", () => {
  const spec = { replicas: 0, strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%" } } };
  const bytes = hex(
    "08 00", //                          DeploymentSpec.replicas (1) 0
    "22 1c", //                          strategy (4), 28 bytes
    "  0a 0d 526f6c6c696e67557064617465", // type (1) "RollingUpdate"
    "  12 0b 12 09 08 01 10 00 1a 03 323525", // rollingUpdate (2): maxSurge (2) IntOrString type 1, intVal 0, strVal "25%"
  );
  assert.equal(toHex(encodeMessage(spec, "io.k8s.api.apps.v1.DeploymentSpec", registry)), toHex(bytes));
  assert.deepEqual(decodeMessage(bytes, "io.k8s.api.apps.v1.DeploymentSpec", registry), spec);
});

test("ReplicationController: replicas 0 (a pointer) is kept, not taken for unset (which defaults to 1)", () => {
  const spec = { replicas: 0, selector: { app: "web" } };
  const bytes = hex(
    "08 00", //                          ReplicationControllerSpec.replicas (1) 0
    "12 0a 0a 03 617070 12 03 776562", // selector (2): map entry key "app" value "web"
  );
  assert.equal(toHex(encodeMessage(spec, `${CORE}.ReplicationControllerSpec`, registry)), toHex(bytes));
  assert.deepEqual(decodeMessage(bytes, `${CORE}.ReplicationControllerSpec`, registry), spec);
});

test("Lease: MicroTime keeps microseconds (nanos = µs × 1000)", () => {
  const spec = { holderIdentity: "", renewTime: "2024-01-02T03:04:05.123456Z" };
  const bytes = hex(
    "0a 00", //                                   holderIdentity (1) "", a *string: kept
    "22 0b 08 a5facdac06 10 8094ef3a", //          renewTime (4): seconds, nanos 123456000
  );
  assert.equal(toHex(encodeMessage(spec, "io.k8s.api.coordination.v1.LeaseSpec", registry)), toHex(bytes));
  assert.deepEqual(decodeMessage(bytes, "io.k8s.api.coordination.v1.LeaseSpec", registry), spec);
});

test("ControllerRevision.data and managedFields.fieldsV1 carry JSON bytes in field 1", () => {
  const rev = {
    metadata: { name: "r", managedFields: [{ manager: "m", fieldsType: "FieldsV1", fieldsV1: { "f:data": {} } }] },
    data: { spec: 1 },
    revision: 3,
  };
  const fields = '{"f:data":{}}';
  const data = '{"spec":1}';
  const bytes = hex(
    "0a 24", //                                   metadata (1), 36 bytes
    "  0a 01 72", //                              name "r"
    "  8a 01 1e", //                              managedFields (17): key 17<<3|2 = 138 = 8a 01, 30 bytes
    "    0a 01 6d", //                            manager (1)
    "    32 08 4669656c64735631", //              fieldsType (6) "FieldsV1"
    `    3a 0f 0a 0d ${Buffer.from(fields).toString("hex")}`, // fieldsV1 (7): FieldsV1 { Raw (1) }
    `12 0c 0a 0a ${Buffer.from(data).toString("hex")}`, // data (2): RawExtension { raw (1) }
    "18 03", //                                   revision (3)
  );
  assert.equal(toHex(encodeMessage(rev, "io.k8s.api.apps.v1.ControllerRevision", registry)), toHex(bytes));
  assert.deepEqual(decodeMessage(bytes, "io.k8s.api.apps.v1.ControllerRevision", registry), rev);
});

test("EphemeralContainer: the Container fields sit in EphemeralContainerCommon at field 1", () => {
  const ec = { name: "dbg", image: "busybox", targetContainerName: "c" };
  const bytes = hex("0a 0e 0a 03 646267 12 07 62757379626f78", "12 01 63");
  assert.equal(toHex(encodeMessage(ec, `${CORE}.EphemeralContainer`, registry)), toHex(bytes));
  assert.deepEqual(decodeMessage(bytes, `${CORE}.EphemeralContainer`, registry), ec);
});

const META = "io.k8s.apimachinery.pkg.apis.meta.v1";

test("PartialObjectMetadata and a one-row Table, by meta/v1's field numbers", () => {
  const partial = { apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata: { name: "cfg" } };
  const envelope = hex(
    "6b 38 73 00",
    "0a 27", //                                   typeMeta, 39 bytes
    `  0a 0e ${Buffer.from("meta.k8s.io/v1").toString("hex")}`,
    `  12 15 ${Buffer.from("PartialObjectMetadata").toString("hex")}`,
    "12 07 0a 05 0a 03 636667", //                raw: metadata (1) { name (1) "cfg" }
    "1a 00 22 00",
  );
  assert.equal(toHex(encodeEnvelope(partial, `${META}.PartialObjectMetadata`, registry)), toHex(envelope));
  assert.deepEqual(decodeEnvelope(envelope, registry, () => `${META}.PartialObjectMetadata`), partial);

  const table = {
    metadata: { resourceVersion: "7" },
    columnDefinitions: [{ name: "Name", type: "string", format: "name", description: "d", priority: 0 }],
    rows: [{ cells: ["cfg"] }],
  };
  const bytes = hex(
    "0a 03 12 01 37", //                          metadata (1) { resourceVersion (2) "7" }
    "12 19", //                                   columnDefinitions (2), 25 bytes
    "  0a 04 4e616d65 12 06 737472696e67 1a 04 6e616d65 22 01 64 28 00", // name, type, format, description, priority
    "1a 09 0a 07 0a 05 22636667 22", //           rows (3) { cells (1) RawExtension { raw (1) "\"cfg\"" } }
  );
  assert.equal(toHex(encodeMessage(table, `${META}.Table`, registry)), toHex(bytes));
  assert.deepEqual(decodeMessage(bytes, `${META}.Table`, registry), table);
});
