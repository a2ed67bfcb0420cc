// A container's environment as upstream builds it: envFrom first, then env in
// order with $(VAR) expanded against what came before; valueFrom reads pod
// fields, resources, ConfigMap and Secret keys. A missing required source is a
// ConfigError (the container waits with reason CreateContainerConfigError).

import type { PersistentVolume, PersistentVolumeClaim } from "../../api/core/persistent-volume-types.js";
import type { Container, EnvVar, Pod, Service } from "../../api/core/types.js";
import { parseQuantity } from "../../api/core/quantity.js";
import type { KeyValue } from "../cri/index.js";
import type { TokenRequestSpec } from "../tokens/token-manager.js";

/** Where ConfigMaps and Secrets come from; undefined means "not found". Standalone agents have none. */
export type { PersistentVolume, PersistentVolumeClaim };

export interface ObjectSource {
  configMap(namespace: string, name: string): Promise<{ data?: Record<string, string> | null; binaryData?: Record<string, string> | null } | undefined>;
  /** Secret data decoded to text. */
  secret(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  /** A claim and a volume, for persistentVolumeClaim volumes (absent: such volumes are not supported). */
  persistentVolumeClaim?(namespace: string, name: string): Promise<PersistentVolumeClaim | undefined>;
  persistentVolume?(name: string): Promise<PersistentVolume | undefined>;
  /** A token of the service account bound to the pod (projected volumes); absent on an agent without an API server. */
  serviceAccountToken?(namespace: string, serviceAccount: string, spec: TokenRequestSpec): Promise<string>;
  /** The `kubernetes` service in `default` (in-cluster clients find the API server by its environment); absent on an agent without an API server. */
  apiServerService?(): Promise<Service | undefined>;
  /** The services of a namespace, for service links (enableServiceLinks); absent on an agent without an API server. */
  services?(namespace: string): Promise<readonly Service[]>;
}

export const NO_OBJECTS: ObjectSource = { configMap: async () => undefined, secret: async () => undefined };

export class ContainerConfigError extends Error {
  readonly reason = "CreateContainerConfigError";
}

export interface EnvContext {
  objects: ObjectSource;
  hostIP: string;
  podIP: string;
  nodeAllocatable: { cpu: number; memory: number };
}

/** Upstream's expansion: $(NAME) from `vars` when defined, $$ for a literal $, anything else kept. */
export function expand(text: string, vars: ReadonlyMap<string, string>): string {
  return text.replace(/\$\$|\$\(([^)]*)\)/g, (m, name: string | undefined) => (m === "$$" ? "$" : vars.get(name!) ?? m));
}

/** A pod field by the downward API's path (fieldRef.fieldPath). */
export function podField(pod: Pod, path: string, ctx: { hostIP: string; podIP: string }): string {
  const m = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(path);
  if (m) return (pod.metadata[m[1] as "labels" | "annotations"] ?? {})[m[2]!] ?? "";
  switch (path) {
    case "metadata.name":
      return pod.metadata.name ?? "";
    case "metadata.namespace":
      return pod.metadata.namespace ?? "";
    case "metadata.uid":
      return pod.metadata.uid ?? "";
    case "metadata.labels":
    case "metadata.annotations":
      return Object.entries(pod.metadata[path === "metadata.labels" ? "labels" : "annotations"] ?? {})
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join("\n");
    case "spec.nodeName":
      return pod.spec?.nodeName ?? "";
    case "spec.serviceAccountName":
      return pod.spec?.serviceAccountName ?? "";
    case "status.hostIP":
    case "status.hostIPs":
      return ctx.hostIP;
    case "status.podIP":
    case "status.podIPs":
      return ctx.podIP;
    default:
      throw new ContainerConfigError(`unsupported fieldPath ${JSON.stringify(path)}`);
  }
}

/** resourceFieldRef: a container's request or limit (limits default to the node's allocatable), over the divisor, rounded up. */
export function resourceField(container: Container, ref: { resource?: string; divisor?: string | number }, allocatable: { cpu: number; memory: number }): string {
  const [kind, name] = (ref.resource ?? "").split(".") as [string, string];
  const quantities = kind === "limits" ? container.resources?.limits : container.resources?.requests;
  let value = parseQuantity(quantities?.[name] ?? undefined);
  if (value === undefined) value = kind === "limits" ? (name === "cpu" ? allocatable.cpu : name === "memory" ? allocatable.memory : 0) : 0;
  const divisor = parseQuantity(ref.divisor ?? 1) || 1;
  return String(Math.ceil(value / divisor));
}

export async function containerEnv(pod: Pod, container: Container, ctx: EnvContext): Promise<KeyValue[]> {
  const namespace = pod.metadata.namespace ?? "default";
  // Service links come first, so envFrom and env override them and $(KUBERNETES_SERVICE_HOST) expands: the
  // services of the pod's namespace (unless enableServiceLinks is false), then, always, the API server's.
  const vars = new Map<string, string>();
  if (pod.spec?.enableServiceLinks !== false && ctx.objects.services !== undefined) {
    const services = [...(await ctx.objects.services(namespace))].sort((a, b) => ((a.metadata.name ?? "") < (b.metadata.name ?? "") ? -1 : 1));
    for (const svc of services) for (const [k, v] of serviceEnv(svc.metadata.name ?? "", svc)) vars.set(k, v);
  }
  for (const [k, v] of serviceEnv("kubernetes", await ctx.objects.apiServerService?.())) vars.set(k, v);
  for (const from of container.envFrom ?? []) {
    const prefix = typeof from["prefix"] === "string" ? from["prefix"] : "";
    const cmRef = from["configMapRef"] as { name?: string; optional?: boolean } | undefined;
    const secretRef = from["secretRef"] as { name?: string; optional?: boolean } | undefined;
    const ref = cmRef ?? secretRef;
    if (!ref?.name) continue;
    const data = cmRef ? (await ctx.objects.configMap(namespace, ref.name))?.data ?? undefined : await ctx.objects.secret(namespace, ref.name);
    if (data === undefined || data === null) {
      if (ref.optional) continue;
      throw new ContainerConfigError(`${cmRef ? "configmap" : "secret"} "${ref.name}" not found`);
    }
    for (const [k, v] of Object.entries(data)) vars.set(prefix + k, v);
  }
  for (const e of container.env ?? []) {
    if (!e.name) continue;
    vars.set(e.name, e.valueFrom ? await valueFrom(pod, container, e, ctx, namespace) : expand(e.value ?? "", vars));
  }
  return [...vars].map(([key, value]) => ({ key, value }));
}

/**
 * Upstream's docker-links style variables of a service with a cluster IP
 * (the kubelet always sets them for the API server's `kubernetes` service):
 * NAME_SERVICE_HOST, NAME_SERVICE_PORT, NAME_SERVICE_PORT_<PORT NAME>,
 * NAME_PORT, NAME_PORT_<port>_<PROTO>{,_PROTO,_PORT,_ADDR}.
 */
export function serviceEnv(name: string, service: Service | undefined): [string, string][] {
  const ip = service?.spec?.clusterIP;
  const ports = service?.spec?.ports ?? [];
  if (ip === undefined || ip === "" || ip === "None" || ports.length === 0) return [];
  const prefix = name.toUpperCase().replace(/-/g, "_");
  const host = ip.includes(":") ? `[${ip}]` : ip;
  const out: [string, string][] = [[`${prefix}_SERVICE_HOST`, ip], [`${prefix}_SERVICE_PORT`, String(ports[0]!.port)]];
  for (const p of ports) if (p.name) out.push([`${prefix}_SERVICE_PORT_${p.name.toUpperCase().replace(/-/g, "_")}`, String(p.port)]);
  const first = ports[0]!;
  out.push([`${prefix}_PORT`, `${(first.protocol ?? "TCP").toLowerCase()}://${host}:${first.port}`]);
  for (const p of ports) {
    const proto = (p.protocol ?? "TCP").toUpperCase();
    const base = `${prefix}_PORT_${p.port}_${proto}`;
    out.push([base, `${proto.toLowerCase()}://${host}:${p.port}`], [`${base}_PROTO`, proto.toLowerCase()], [`${base}_PORT`, String(p.port)], [`${base}_ADDR`, ip]);
  }
  return out;
}

async function valueFrom(pod: Pod, container: Container, e: EnvVar, ctx: EnvContext, namespace: string): Promise<string> {
  const from = e.valueFrom as Record<string, { name?: string; key?: string; optional?: boolean; fieldPath?: string; resource?: string; divisor?: string }>;
  if (from["fieldRef"]) return podField(pod, from["fieldRef"].fieldPath ?? "", ctx);
  if (from["resourceFieldRef"]) return resourceField(container, from["resourceFieldRef"], ctx.nodeAllocatable);
  const cm = from["configMapKeyRef"];
  const sk = from["secretKeyRef"];
  const ref = cm ?? sk;
  if (!ref) throw new ContainerConfigError(`env ${e.name}: unsupported valueFrom`);
  const data = cm ? (await ctx.objects.configMap(namespace, ref.name ?? ""))?.data ?? undefined : await ctx.objects.secret(namespace, ref.name ?? "");
  const kind = cm ? "configmap" : "secret";
  if (data === undefined || data === null) {
    if (ref.optional) return "";
    throw new ContainerConfigError(`${kind} "${ref.name}" not found`);
  }
  const value = data[ref.key ?? ""];
  if (value === undefined) {
    if (ref.optional) return "";
    throw new ContainerConfigError(`couldn't find key ${ref.key} in ${kind === "configmap" ? "ConfigMap" : "Secret"} ${namespace}/${ref.name}`);
  }
  return value;
}
