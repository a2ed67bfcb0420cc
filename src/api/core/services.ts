// services: DNS-1035 names, category `all`, upstream's defaults (type
// ClusterIP, affinity None, TCP, targetPort = port, traffic policies) and
// validation; allocated values (cluster IPs, node ports) survive an update
// that leaves them out, and the primary cluster IP never changes.
// Allocating cluster IPs and node ports is the service allocator's job, not this file's.

import { isIP } from "node:net";
import { field, validateLabels, type FieldError } from "../../machinery/index.js";
import { defineResource, type ResourceDefinition, type TableColumn } from "../resource.js";
import { proxy, status } from "../subresources/index.js";
import { AGE_COLUMN, NAME_COLUMN, formatAge, formatLabels } from "../table-format.js";
import { CORE_V1 } from "./schemas.js";
import { isValidPortNum, validateDNS1123Label, validateDNS1123Subdomain, validateEnum, validatePortNumOrName, validateProtocol } from "./validation.js";
import type { Service, ServicePort, ServiceSpec } from "./types.js";

const SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const INVALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
const MAX_AFFINITY_SECONDS = 86400;

const externallyAccessible = (spec: ServiceSpec) =>
  spec.type === "LoadBalancer" || spec.type === "NodePort" || (spec.type === "ClusterIP" && (spec.externalIPs ?? []).length > 0);
const needsNodePorts = (spec: ServiceSpec) => spec.type === "NodePort" || spec.type === "LoadBalancer";

/** upstream's SetDefaults_Service, after the schema's (type, sessionAffinity, port protocol). */
export function defaultServiceSpec(spec: ServiceSpec): void {
  if (spec.sessionAffinity === "None") delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === "ClientIP") {
    const clientIP = ((spec.sessionAffinityConfig ??= {}).clientIP ??= {});
    clientIP.timeoutSeconds ??= 10800;
  }
  for (const p of spec.ports ?? []) {
    if (p && (p.targetPort === undefined || p.targetPort === 0 || p.targetPort === "")) p.targetPort = p.port;
  }
  if (externallyAccessible(spec) && !spec.externalTrafficPolicy) spec.externalTrafficPolicy = "Cluster";
  if (spec.type !== "ExternalName" && !spec.internalTrafficPolicy) spec.internalTrafficPolicy = "Cluster";
  if (spec.type === "LoadBalancer" && (spec.allocateLoadBalancerNodePorts === undefined || spec.allocateLoadBalancerNodePorts === null)) {
    spec.allocateLoadBalancerNodePorts = true;
  }
  if (spec.type === "ExternalName") return;
  if (spec.clusterIP && (spec.clusterIPs ?? []).length === 0) spec.clusterIPs = [spec.clusterIP];
  if (!spec.clusterIP && (spec.clusterIPs ?? []).length > 0) spec.clusterIP = spec.clusterIPs![0];
}

/** Families a new service gets when it names none (the allocator's choice in a single-stack IPv4 cluster). */
function defaultIPFamilies(spec: ServiceSpec): void {
  if (spec.type === "ExternalName") return;
  if (!spec.ipFamilyPolicy) spec.ipFamilyPolicy = "SingleStack";
  if ((spec.ipFamilies ?? []).length === 0) spec.ipFamilies = [isIP(spec.clusterIP ?? "") === 6 ? "IPv6" : "IPv4"];
}

function validatePort(p: ServicePort, path: string, spec: ServiceSpec, requireName: boolean, names: Set<string>): FieldError[] {
  const errs: FieldError[] = [];
  if (requireName && !p.name) errs.push(field.required(`${path}.name`, ""));
  else if (p.name) {
    errs.push(...validateDNS1123Label(p.name, `${path}.name`));
    if (names.has(p.name)) errs.push(field.duplicate(`${path}.name`, p.name));
    names.add(p.name);
  }
  for (const msg of isValidPortNum(p.port ?? 0)) errs.push(field.invalid(`${path}.port`, p.port ?? 0, msg));
  errs.push(...validateProtocol(p.protocol, `${path}.protocol`));
  errs.push(...validatePortNumOrName(p.targetPort, `${path}.targetPort`));
  if (p.nodePort) {
    if (spec.type === "ClusterIP") errs.push(field.forbidden(`${path}.nodePort`, "may not be used when `type` is 'ClusterIP'"));
    else for (const msg of isValidPortNum(p.nodePort)) errs.push(field.invalid(`${path}.nodePort`, p.nodePort, msg));
  }
  return errs;
}

function validateService(svc: Service): FieldError[] {
  const spec = svc.spec ?? {};
  const errs: FieldError[] = [];
  const headless = spec.clusterIP === "None";
  errs.push(...validateEnum(spec.type, "spec.type", SERVICE_TYPES));
  if (spec.type === "ExternalName") {
    if (spec.clusterIP) errs.push(field.forbidden("spec.clusterIP", "may not be set for ExternalName services"));
    const name = (spec.externalName ?? "").replace(/\.$/, "");
    if (!name) errs.push(field.required("spec.externalName", ""));
    else errs.push(...validateDNS1123Subdomain(name, "spec.externalName"));
  } else {
    (spec.clusterIPs ?? []).forEach((ip, i) => {
      if (ip !== "None" && ip !== "" && isIP(ip) === 0) errs.push(field.invalid(`spec.clusterIPs[${i}]`, ip, INVALID_IP));
    });
    if (spec.clusterIP && spec.clusterIPs?.[0] !== undefined && spec.clusterIP !== spec.clusterIPs[0]) {
      errs.push(field.invalid("spec.clusterIPs", spec.clusterIPs, "first value must match `clusterIP`"));
    }
  }
  const ports = spec.ports ?? [];
  if (ports.length === 0 && !headless && spec.type !== "ExternalName") errs.push(field.required("spec.ports", ""));
  const names = new Set<string>();
  const seen = new Set<string>();
  ports.forEach((p, i) => {
    const path = `spec.ports[${i}]`;
    errs.push(...validatePort(p ?? {}, path, spec, ports.length > 1, names));
    const key = `${p?.port}/${p?.protocol}`;
    if (seen.has(key)) {
      errs.push(field.duplicate(path, { name: "", protocol: p?.protocol ?? "", port: p?.port ?? 0, targetPort: 0, nodePort: 0 }));
    }
    seen.add(key);
  });
  errs.push(...validateLabels(spec.selector ?? undefined, "spec.selector"));
  errs.push(...validateEnum(spec.sessionAffinity, "spec.sessionAffinity", ["ClientIP", "None"]));
  const timeout = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds;
  if (spec.sessionAffinity === "ClientIP" && timeout !== undefined && (timeout <= 0 || timeout > MAX_AFFINITY_SECONDS)) {
    errs.push(
      field.invalid("spec.sessionAffinityConfig.clientIP.timeoutSeconds", timeout, `must be greater than 0 and less than ${MAX_AFFINITY_SECONDS}`),
    );
  }
  if (spec.externalTrafficPolicy) {
    if (!externallyAccessible(spec)) {
      errs.push(field.invalid("spec.externalTrafficPolicy", spec.externalTrafficPolicy, "may only be set for externally-accessible services"));
    } else errs.push(...validateEnum(spec.externalTrafficPolicy, "spec.externalTrafficPolicy", ["Cluster", "Local"]));
  }
  if (spec.type !== "ExternalName") {
    errs.push(...validateEnum(spec.internalTrafficPolicy, "spec.internalTrafficPolicy", ["Cluster", "Local"]));
    errs.push(...validateEnum(spec.ipFamilyPolicy, "spec.ipFamilyPolicy", ["PreferDualStack", "RequireDualStack", "SingleStack"], false));
  }
  return errs;
}

/** Keep what the allocator assigned when an update leaves it out (upstream's patchAllocatedValues). */
/**
 * Upstream's dropTypeDependentFields: on an update to a type that no longer
 * uses a field the server may have filled in (cluster IPs and IP families for
 * ExternalName, node ports, the health-check node port, externalTrafficPolicy),
 * the field is cleared when the client sent it unchanged (a changed one is
 * left for validation to refuse). The allocator then frees what was dropped.
 */
export function dropTypeDependentFields(spec: ServiceSpec, old: ServiceSpec): void {
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  if (old.type !== "ExternalName" && spec.type === "ExternalName") {
    if (same(spec.clusterIP, old.clusterIP) && same(spec.clusterIPs, old.clusterIPs)) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    if (same(spec.ipFamilies, old.ipFamilies)) delete spec.ipFamilies;
    if (same(spec.ipFamilyPolicy, old.ipFamilyPolicy)) delete spec.ipFamilyPolicy;
  }
  const nodePorts = (s: ServiceSpec) => (s.ports ?? []).map((p) => p?.nodePort ?? 0).filter((n) => n !== 0).sort();
  if (needsNodePorts(old) && !needsNodePorts(spec) && same(nodePorts(spec), nodePorts(old))) for (const p of spec.ports ?? []) if (p) delete p.nodePort;
  const needsHealthCheck = (s: ServiceSpec) => s.type === "LoadBalancer" && s.externalTrafficPolicy === "Local";
  if (needsHealthCheck(old) && !needsHealthCheck(spec) && spec.healthCheckNodePort === old.healthCheckNodePort) delete spec.healthCheckNodePort;
  if (needsNodePorts(old) && !needsNodePorts(spec) && spec.externalTrafficPolicy === old.externalTrafficPolicy) delete spec.externalTrafficPolicy;
}

export function keepAllocated(spec: ServiceSpec, old: ServiceSpec): void {
  if (spec.type === "ExternalName" || old.type === "ExternalName") return;
  if (!spec.clusterIP && (spec.clusterIPs ?? []).length === 0 && old.clusterIP) {
    spec.clusterIP = old.clusterIP;
    spec.clusterIPs = structuredClone(old.clusterIPs ?? [old.clusterIP]);
  }
  if ((spec.ipFamilies ?? []).length === 0 && old.ipFamilies) spec.ipFamilies = structuredClone(old.ipFamilies);
  if (!spec.ipFamilyPolicy && old.ipFamilyPolicy) spec.ipFamilyPolicy = old.ipFamilyPolicy;
  if (needsNodePorts(spec) && needsNodePorts(old)) {
    for (const p of spec.ports ?? []) {
      if (!p || p.nodePort) continue;
      const prev = (old.ports ?? []).find((o) => o?.port === p.port && (o.protocol ?? "TCP") === (p.protocol ?? "TCP"));
      if (prev?.nodePort) p.nodePort = prev.nodePort;
    }
    if (!spec.healthCheckNodePort && old.healthCheckNodePort && spec.externalTrafficPolicy === "Local") spec.healthCheckNodePort = old.healthCheckNodePort;
  }
}

function externalIP(svc: Service): string {
  const spec = svc.spec ?? {};
  const external = spec.externalIPs ?? [];
  switch (spec.type) {
    case "ClusterIP":
    case "NodePort":
      return external.length > 0 ? external.join(",") : "<none>";
    case "LoadBalancer": {
      const lb = (svc.status?.loadBalancer?.ingress ?? []).map((i) => i?.ip || i?.hostname || "").filter((s) => s !== "");
      const all = [...lb, ...external];
      return all.length > 0 ? all.join(",") : "<pending>";
    }
    case "ExternalName":
      return spec.externalName ?? "";
  }
  return "<unknown>";
}

function portsCell(ports: ServicePort[] | null | undefined): string {
  const s = (ports ?? []).map((p) => (p?.nodePort ? `${p.port}:${p.nodePort}/${p.protocol ?? ""}` : `${p?.port}/${p?.protocol ?? ""}`)).join(",");
  return s || "<none>";
}

const SERVICE_COLUMNS: readonly TableColumn[] = [
  NAME_COLUMN,
  { name: "Type", type: "string", description: "How the service is exposed (spec.type).", priority: 0 },
  { name: "Cluster-IP", type: "string", description: "The service's virtual IP (spec.clusterIP).", priority: 0 },
  { name: "External-IP", type: "string", description: "Addresses the service is reachable at from outside the cluster.", priority: 0 },
  { name: "Port(s)", type: "string", description: "The service's ports, with node ports.", priority: 0 },
  AGE_COLUMN,
  { name: "Selector", type: "string", description: "Labels of the pods behind the service (spec.selector).", priority: 1 },
];

export function servicesResource(): ResourceDefinition {
  return defineResource<Service>({
    group: "",
    versions: ["v1"],
    resource: "services",
    singular: "service",
    kind: "Service",
    namespaced: true,
    shortNames: ["svc"],
    categories: ["all"],
    schema: `${CORE_V1}.Service`,
    nameRule: "dns1035-label",
    allowCreateOnUpdate: true,
    subresources: [proxy("ServiceProxyOptions"), status()],

    defaults(svc) {
      defaultServiceSpec((svc.spec ??= {}));
    },
    prepareForCreate(svc) {
      defaultIPFamilies((svc.spec ??= {}));
      svc.status = {};
    },
    prepareForUpdate(svc, old) {
      dropTypeDependentFields((svc.spec ??= {}), old.spec ?? {});
      keepAllocated(svc.spec, old.spec ?? {});
    },
    validate: validateService,
    validateUpdate(svc, old) {
      const errs = validateService(svc);
      const spec = svc.spec ?? {};
      const oldSpec = old.spec ?? {};
      if (spec.type !== "ExternalName" && oldSpec.type !== "ExternalName") {
        const next = spec.clusterIPs ?? [];
        const prev = oldSpec.clusterIPs ?? [];
        if (prev.length > 0 && next.length === 0) errs.push(field.invalid("spec.clusterIPs[0]", [], "primary clusterIP can not be unset"));
        else if (prev.length > 0 && next[0] !== prev[0]) errs.push(field.invalid("spec.clusterIPs[0]", next[0], "may not change once set"));
      }
      return errs;
    },

    table: {
      columns: SERVICE_COLUMNS,
      cells: (svc, now) => [
        svc.metadata.name ?? "",
        svc.spec?.type ?? "",
        svc.spec?.clusterIPs?.[0] || "<none>",
        externalIP(svc),
        portsCell(svc.spec?.ports),
        formatAge(svc.metadata.creationTimestamp, now),
        formatLabels(svc.spec?.selector),
      ],
    },
    fieldSelectors: {
      "spec.clusterIP": (s) => s.spec?.clusterIP ?? "",
      "spec.type": (s) => s.spec?.type ?? "",
    },
  });
}
