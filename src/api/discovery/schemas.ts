// EndpointSlice types of discovery.<suffix>/v1. Definition names keep
// upstream's `io.k8s.api.discovery.v1.*` whatever the suffix (OpenAPI clients
// key on them); Protobuf field numbers from k8s.io/api/discovery/v1/generated.proto.

import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { META_V1, listOf } from "../apps/schemas.js";
import { CORE_V1 } from "../core/schemas.js";

export const DISCOVERY_V1 = "io.k8s.api.discovery.v1";
const d = (name: string) => s.ref(`${DISCOVERY_V1}.${name}`);

export const DISCOVERY_TYPES: readonly TypeDef[] = [
  type(`${DISCOVERY_V1}.EndpointSlice`, "A subset of the endpoints that implement a service.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
    addressType: f(4, s.string({ enum: ["IPv4", "IPv6", "FQDN"] }), "The type of address carried by this slice: IPv4, IPv6 or FQDN; immutable.", { required: true }),
    endpoints: f(2, s.array(d("Endpoint"), { listType: "atomic" }), "The unique endpoints in this slice (at most 1000).", { required: true }),
    ports: f(3, s.array(d("EndpointPort"), { listType: "atomic" }), "The network ports exposed by each endpoint (at most 20000)."),
  }),
  type(`${DISCOVERY_V1}.Endpoint`, "One logical backend implementing a service.", {
    addresses: f(1, s.array(s.string(), { listType: "set" }), "The addresses of this endpoint (at least 1, at most 100), per the slice's addressType.", { required: true }),
    conditions: f(2, d("EndpointConditions"), "The current state of the endpoint."),
    hostname: f(3, s.string(), "The endpoint's hostname (a DNS label)."),
    targetRef: f(4, s.ref(`${CORE_V1}.ObjectReference`), "The object that backs this endpoint, usually a pod."),
    deprecatedTopology: f(5, s.map(s.string()), "Deprecated topology labels; use zone and nodeName."),
    nodeName: f(6, s.string(), "The node hosting this endpoint."),
    zone: f(7, s.string(), "The zone this endpoint is in."),
    hints: f(8, d("EndpointHints"), "Hints for consuming the endpoint (topology aware routing)."),
  }),
  type(`${DISCOVERY_V1}.EndpointConditions`, "The state of an endpoint.", {
    ready: f(1, s.bool(), "The endpoint is ready for traffic; unknown state is read as ready."),
    serving: f(2, s.bool(), "The endpoint can serve traffic, even while terminating."),
    terminating: f(3, s.bool(), "The endpoint is terminating."),
  }),
  type(`${DISCOVERY_V1}.EndpointHints`, "Hints for how an endpoint should be consumed.", {
    forZones: f(1, s.array(d("ForZone"), { listType: "atomic" }), "Zones that should consume this endpoint."),
    forNodes: f(2, s.array(d("ForNode"), { listType: "atomic" }), "Nodes that should consume this endpoint."),
  }),
  type(`${DISCOVERY_V1}.ForZone`, "A zone that should consume an endpoint.", { name: f(1, s.string(), "The zone's name.", { required: true }) }),
  type(`${DISCOVERY_V1}.ForNode`, "A node that should consume an endpoint.", { name: f(1, s.string(), "The node's name.", { required: true }) }),
  type(`${DISCOVERY_V1}.EndpointPort`, "A port used by an EndpointSlice.", {
    name: f(1, s.string(), "The port's name (empty or a DNS label, unique in the slice)."),
    protocol: f(2, s.string({ enum: ["SCTP", "TCP", "UDP"] }), "TCP, UDP or SCTP.", { default: "TCP" }),
    port: f(3, s.int32(), "The port number; unset means all ports."),
    appProtocol: f(4, s.string(), "The application protocol of this port."),
  }),
  listOf(DISCOVERY_V1, "EndpointSlice", "A list of EndpointSlices."),
];
