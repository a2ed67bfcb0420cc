// Speed of the Protobuf codec on a realistic ~3 KB pod and a 500-pod list, next to
// JSON.stringify/JSON.parse (run after a build:
// node dist/src/machinery/codec/protobuf/codec.bench.js). Median of seven rounds.

import { decodeEnvelope, encodeEnvelope } from "./envelope.js";
import { benchPod, builtinRegistry } from "./testing.js";
import { microBench } from "../../testing/micro-bench.js";

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
microBench("JSON.stringify (baseline), pod", 20000, () => JSON.stringify(pod));
microBench("encodeEnvelope, pod", 20000, () => encodeEnvelope(pod, POD, registry));
microBench("JSON.parse (baseline), pod", 20000, () => JSON.parse(json));
microBench("decodeEnvelope, pod", 20000, () => decodeEnvelope(pb, registry, lookup));
microBench("JSON.stringify (baseline), 500 pods", 50, () => JSON.stringify(list));
microBench("encodeEnvelope, 500 pods", 50, () => encodeEnvelope(list, `${POD}List`, registry));
microBench("JSON.parse (baseline), 500 pods", 50, () => JSON.parse(listJson));
microBench("decodeEnvelope, 500 pods", 50, () => decodeEnvelope(listPb, registry, lookup));
