// The networking.<suffix>/v1 types as schema data (definition names keep
// upstream's `io.k8s.api.networking.v1.*` whatever the suffix). Protobuf field
// numbers from k8s.io/api/networking/v1/generated.proto (v1.33 field set: the
// Ingress status is IngressLoadBalancerStatus, wire-compatible with v1.23's
// core LoadBalancerStatus).

import { f, s, type, type Field, type Schema, type TypeDef } from "../../machinery/schema.js";
import { CORE_V1, listOf } from "../core/index.js";
import { META_V1 } from "../meta/schemas.js";

export const NETWORKING_V1 = "io.k8s.api.networking.v1";

const nw = (name: string): Schema => s.ref(`${NETWORKING_V1}.${name}`);
const t = (name: string, description: string, fields: Record<string, Field>): TypeDef => type(`${NETWORKING_V1}.${name}`, description, fields);
const atomic = (items: Schema): Schema => s.array(items, { listType: "atomic" });
const metadata = f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata.");
const selector = s.ref(`${META_V1}.LabelSelector`);

export const NETWORKING_TYPES: readonly TypeDef[] = [
  t("Ingress", "A collection of rules that let inbound connections reach the endpoints defined by a backend.", {
    metadata,
    spec: f(2, nw("IngressSpec"), "The desired state of the Ingress."),
    status: f(3, nw("IngressStatus"), "The current state of the Ingress (written by the ingress controller)."),
  }),
  t("IngressSpec", "The rules and backends of an Ingress.", {
    ingressClassName: f(4, s.string(), "The IngressClass that implements this Ingress."),
    defaultBackend: f(1, nw("IngressBackend"), "The backend of requests no rule matches."),
    tls: f(2, atomic(nw("IngressTLS")), "TLS configuration: hosts and the secret holding their certificate."),
    rules: f(3, atomic(nw("IngressRule")), "Host rules."),
  }),
  t("IngressBackend", "A service (by name and port) or a resource in the Ingress's namespace.", {
    service: f(4, nw("IngressServiceBackend"), "A service backend."),
    resource: f(3, s.ref(`${CORE_V1}.TypedLocalObjectReference`), "A resource backend (an object of another kind)."),
  }),
  t("IngressServiceBackend", "A service and one of its ports.", {
    name: f(1, s.string(), "The service's name.", { required: true }),
    port: f(2, nw("ServiceBackendPort"), "The service's port."),
  }),
  t("ServiceBackendPort", "A service port by name or by number.", {
    name: f(1, s.string(), "The port's name."),
    number: f(2, s.int32(), "The port's number."),
  }),
  t("IngressTLS", "TLS for a set of hosts.", {
    hosts: f(1, atomic(s.string()), "The hosts the certificate covers."),
    secretName: f(2, s.string(), "The Secret holding the certificate and key."),
  }),
  t("IngressRule", "The paths of one host.", {
    host: f(1, s.string(), "A fully qualified domain name, or a wildcard `*.domain`; empty: every host."),
    http: f(1, nw("HTTPIngressRuleValue"), "HTTP paths (upstream's inlined IngressRuleValue, field 2 on the wire).", { embeddedIn: 2 }),
  }),
  t("HTTPIngressRuleValue", "The HTTP paths of a rule.", {
    paths: f(1, atomic(nw("HTTPIngressPath")), "Paths and their backends.", { required: true }),
  }),
  t("HTTPIngressPath", "A path and its backend.", {
    path: f(1, s.string(), "The path matched against the request's path."),
    pathType: f(3, s.string({ enum: ["Exact", "ImplementationSpecific", "Prefix"] }), "How the path matches: Exact, Prefix or ImplementationSpecific.", { required: true }),
    backend: f(2, nw("IngressBackend"), "Where matching requests go.", { required: true }),
  }),
  t("IngressStatus", "The state of an Ingress.", {
    loadBalancer: f(1, nw("IngressLoadBalancerStatus"), "The load balancer's ingress points."),
  }),
  t("IngressLoadBalancerStatus", "The ingress points of an Ingress's load balancer.", {
    ingress: f(1, atomic(nw("IngressLoadBalancerIngress")), "The ingress points."),
  }),
  t("IngressLoadBalancerIngress", "One ingress point.", {
    ip: f(1, s.string(), "An IP address."),
    hostname: f(2, s.string(), "A DNS name."),
    ports: f(4, atomic(nw("IngressPortStatus")), "Per-port status."),
  }),
  t("IngressPortStatus", "The status of one port of an ingress point.", {
    port: f(1, s.int32(), "The port number.", { required: true }),
    protocol: f(2, s.string(), "TCP, UDP or SCTP.", { required: true }),
    error: f(3, s.string(), "Why the port is not served, if it is not."),
  }),
  t("IngressClass", "A class of Ingresses and the controller that implements it.", {
    metadata,
    spec: f(2, nw("IngressClassSpec"), "The controller and its parameters."),
  }),
  t("IngressClassSpec", "The controller of an IngressClass.", {
    controller: f(1, s.string(), "The controller's name: a domain-prefixed path such as example.com/ingress-controller."),
    parameters: f(2, nw("IngressClassParametersReference"), "An object holding the controller's configuration."),
  }),
  t("IngressClassParametersReference", "A reference to an object holding an ingress controller's configuration.", {
    apiGroup: f(1, s.string(), "The group of the object; the core group when empty."),
    kind: f(2, s.string(), "The kind of the object.", { required: true }),
    name: f(3, s.string(), "The name of the object.", { required: true }),
    scope: f(4, s.string(), "Cluster (default) or Namespace."),
    namespace: f(5, s.string(), "The object's namespace, when scope is Namespace."),
  }),
  t("NetworkPolicy", "Which traffic a set of pods may send and receive.", {
    metadata,
    spec: f(2, nw("NetworkPolicySpec"), "The policy."),
  }),
  t("NetworkPolicySpec", "The pods a policy selects and the traffic it allows them.", {
    podSelector: f(1, selector, "The pods the policy applies to; empty: every pod of the namespace.", { required: true }),
    ingress: f(2, atomic(nw("NetworkPolicyIngressRule")), "Allowed inbound traffic."),
    egress: f(3, atomic(nw("NetworkPolicyEgressRule")), "Allowed outbound traffic."),
    policyTypes: f(4, atomic(s.string({ enum: ["Egress", "Ingress"] })), "Which directions the policy governs: Ingress, Egress or both."),
  }),
  t("NetworkPolicyIngressRule", "Inbound traffic allowed on some ports from some peers.", {
    ports: f(1, atomic(nw("NetworkPolicyPort")), "The ports; empty: every port."),
    from: f(2, atomic(nw("NetworkPolicyPeer")), "The peers; empty: every source."),
  }),
  t("NetworkPolicyEgressRule", "Outbound traffic allowed to some ports of some peers.", {
    ports: f(1, atomic(nw("NetworkPolicyPort")), "The ports; empty: every port."),
    to: f(2, atomic(nw("NetworkPolicyPeer")), "The peers; empty: every destination."),
  }),
  t("NetworkPolicyPeer", "Pods, namespaces or an IP block.", {
    podSelector: f(1, selector, "Pods (in the selected namespaces, or the policy's)."),
    namespaceSelector: f(2, selector, "Namespaces."),
    ipBlock: f(3, nw("IPBlock"), "An IP block."),
  }),
  t("NetworkPolicyPort", "A port or port range and its protocol.", {
    protocol: f(1, s.string({ enum: ["SCTP", "TCP", "UDP"] }), "TCP (default), UDP or SCTP."),
    port: f(2, s.intOrString(), "A port number or name; empty: every port."),
    endPort: f(3, s.int32(), "The last port of a range starting at port."),
  }),
  t("IPBlock", "A CIDR and the CIDRs inside it left out.", {
    cidr: f(1, s.string(), "The CIDR.", { required: true }),
    except: f(2, atomic(s.string()), "CIDRs inside cidr that are not part of the block."),
  }),
  t("IPAddress", "One IP address of one family, named by the address in canonical form, and the object it is allocated to (a Service's ClusterIP).", {
    metadata,
    spec: f(2, nw("IPAddressSpec"), "The object the address belongs to."),
  }),
  t("IPAddressSpec", "What an IPAddress is attached to.", {
    parentRef: f(1, nw("ParentReference"), "The object the address is allocated to (required, immutable).", { required: true }),
  }),
  t("ParentReference", "A reference to the object an IPAddress belongs to.", {
    group: f(1, s.string(), "The group of the object; empty for the core group."),
    resource: f(2, s.string(), "The resource of the object.", { required: true }),
    namespace: f(3, s.string(), "The namespace of the object, if it is namespaced."),
    name: f(4, s.string(), "The name of the object.", { required: true }),
  }),
  t("ServiceCIDR", "A range of IP addresses (CIDR notation) Services get their ClusterIPs from.", {
    metadata,
    spec: f(2, nw("ServiceCIDRSpec"), "The ranges."),
    status: f(3, nw("ServiceCIDRStatus"), "The current state of the ServiceCIDR."),
  }),
  t("ServiceCIDRSpec", "The ranges of a ServiceCIDR.", {
    cidrs: f(1, atomic(s.string()), "Up to two CIDRs, one of each IP family, ClusterIPs are assigned from. Immutable."),
  }),
  t("ServiceCIDRStatus", "The state of a ServiceCIDR.", {
    conditions: f(1, s.array(s.ref(`${META_V1}.Condition`), { listType: "map", listMapKeys: ["type"] }), "Ready, and why not.", { patchStrategy: "merge", patchMergeKey: "type" }),
  }),
  listOf(NETWORKING_V1, "Ingress", "A list of Ingresses."),
  listOf(NETWORKING_V1, "IngressClass", "A list of IngressClasses."),
  listOf(NETWORKING_V1, "NetworkPolicy", "A list of NetworkPolicies."),
  listOf(NETWORKING_V1, "IPAddress", "A list of IPAddresses."),
  listOf(NETWORKING_V1, "ServiceCIDR", "A list of ServiceCIDRs."),
];
