// What the endpoints and endpointslice controllers both derive from a Service: the pods its
// selector picks (with an IP), whether each is ready or terminating, and the service ports
// resolved against each pod (targetPort by number, or by the name of a container port).
// Also the event wiring both use: a service, or a pod it selects, changed → queue the service.

import type { Pod, Service, ServicePort } from "../api/core/types.js";
import { NAMESPACE_INDEX, keyOf, type InformerFactory, type WorkQueue } from "../client/index.js";
import { selectorFromSet } from "../machinery/index.js";
import { isPodReady } from "./resources.js";
import { isPodTerminal } from "../api/core/pod-phase.js";
import { PODS, SERVICES } from "../api/resource-refs.js";

export interface ResolvedPort {
  name: string;
  port: number;
  protocol: string;
  appProtocol?: string;
}

export interface Backend {
  pod: Pod;
  ip: string;
  ready: boolean;
  terminating: boolean;
  /** The hostname the pod is known by in the service's DNS, when its subdomain is the service. */
  hostname?: string;
  ports: ResolvedPort[];
}

/** A service's selector picks pods only when it has one (without, its endpoints are the user's). */
export function hasSelector(service: Service): boolean {
  return Object.keys(service.spec?.selector ?? {}).length > 0;
}

/** The cached pods a service may select: those of its namespace (from the informer's namespace index). */
export function podsInServiceNamespace(informers: InformerFactory, service: Service): Pod[] {
  return informers.informerFor<Pod>({ resource: PODS }).byIndex(NAMESPACE_INDEX, service.metadata.namespace ?? "");
}

/** The pods behind a service, terminating ones included (the caller decides what to do with them). */
export function serviceBackends(service: Service, pods: readonly Pod[]): Backend[] {
  const selector = selectorFromSet(service.spec?.selector ?? {});
  const namespace = service.metadata.namespace;
  const publishNotReady = service.spec?.["publishNotReadyAddresses"] === true;
  const out: Backend[] = [];
  for (const pod of pods) {
    if (pod.metadata.namespace !== namespace || !selector.matches(pod.metadata.labels ?? {})) continue;
    const ip = pod.status?.podIPs?.[0]?.ip ?? pod.status?.podIP;
    if (!ip || isPodTerminal(pod)) continue;
    const hostname = pod.spec?.hostname && pod.spec.subdomain === service.metadata.name ? pod.spec.hostname : undefined;
    out.push({
      pod,
      ip,
      ready: publishNotReady || isPodReady(pod),
      terminating: !!pod.metadata.deletionTimestamp,
      ...(hostname !== undefined ? { hostname } : {}),
      ports: resolvePorts(service.spec?.ports ?? [], pod),
    });
  }
  return out.sort((a, b) => a.ip.localeCompare(b.ip));
}

/** Each service port with the pod's port for it; a named targetPort the pod lacks leaves that port out. */
function resolvePorts(ports: readonly ServicePort[], pod: Pod): ResolvedPort[] {
  const out: ResolvedPort[] = [];
  for (const sp of ports) {
    const target = sp.targetPort ?? sp.port;
    let port: number | undefined;
    if (typeof target === "number") port = target;
    else if (typeof target === "string" && /^[0-9]+$/.test(target)) port = Number(target);
    else {
      for (const c of pod.spec?.containers ?? []) {
        const found = (c.ports ?? []).find((p) => p.name === target && (p.protocol ?? "TCP") === (sp.protocol ?? "TCP"));
        if (found?.containerPort !== undefined) port = found.containerPort;
      }
    }
    if (port === undefined) continue;
    out.push({ name: sp.name ?? "", port, protocol: sp.protocol ?? "TCP", ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}) });
  }
  return out;
}

/** Queue a service's key whenever it, or a pod its selector picks (before or after the change), changes. */
export function watchServiceInputs(informers: InformerFactory, queue: WorkQueue): void {
  const services = informers.informerFor<Service>({ resource: SERVICES });
  const pods = informers.informerFor<Pod>({ resource: PODS });
  services.addEventHandler({ onAdd: (s) => queue.add(keyOf(s)), onUpdate: (_o, s) => queue.add(keyOf(s)), onDelete: (s) => queue.add(keyOf(s)) });
  // Only the services of the pod's namespace can select it (a pod's namespace never changes).
  const onPod = (...versions: Pod[]) => {
    for (const svc of services.byIndex(NAMESPACE_INDEX, versions[0]!.metadata.namespace ?? "")) {
      if (!hasSelector(svc)) continue;
      const selector = selectorFromSet(svc.spec?.selector ?? {});
      if (versions.some((p) => selector.matches(p.metadata.labels ?? {}))) queue.add(keyOf(svc));
    }
  };
  pods.addEventHandler({ onAdd: (p) => onPod(p), onUpdate: (o, p) => onPod(o, p), onDelete: (p) => onPod(p) });
}
