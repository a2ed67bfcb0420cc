// Where a remote APIService's Service leads (upstream's endpoint routing):
// the Service's port by number, then a ready address of its Endpoints at the
// endpoint port of the same name. Each way it can fail has upstream's
// availability reason and message (available_controller.go), which the
// availability check writes and the proxy answers as "service unavailable".
// Loopback and link-local addresses are allowed here (upstream's aggregator
// dials endpoints as they are, unlike the services/proxy subresource).

import type { Endpoints, Service } from "../../api/core/types.js";
import type { ApiObject } from "../../machinery/index.js";

export interface ServiceObjects {
  get(resource: "services" | "endpoints", namespace: string, name: string): Promise<ApiObject | undefined>;
}

export type Resolution =
  | { readonly ok: true; readonly host: string; readonly port: number }
  | { readonly ok: false; readonly reason: string; readonly message: string };

export async function resolveEndpoint(objects: ServiceObjects, ref: { namespace?: string; name?: string; port?: number }): Promise<Resolution> {
  const namespace = ref.namespace ?? "";
  const name = ref.name ?? "";
  const port = ref.port ?? 443;
  const where = `service/${name} in ${JSON.stringify(namespace)}`;
  const svc = (await objects.get("services", namespace, name)) as Service | undefined;
  if (svc === undefined) return { ok: false, reason: "ServiceNotFound", message: `${where} is not present` };
  if (svc.spec?.type === "ExternalName") return { ok: true, host: svc.spec.externalName ?? "", port };
  const servicePort = (svc.spec?.ports ?? []).find((p) => p.port === port);
  if (servicePort === undefined) return { ok: false, reason: "ServicePortError", message: `${where} is not listening on port ${port}` };
  const eps = (await objects.get("endpoints", namespace, name)) as Endpoints | undefined;
  if (eps === undefined) return { ok: false, reason: "EndpointsNotFound", message: `cannot find endpoints for ${where}` };
  const portName = servicePort.name ?? "";
  const candidates: { host: string; port: number }[] = [];
  for (const subset of eps.subsets ?? []) {
    const p = (subset.ports ?? []).find((x) => (x.name ?? "") === portName);
    if (p?.port === undefined) continue;
    for (const a of subset.addresses ?? []) if (a.ip) candidates.push({ host: a.ip, port: p.port });
  }
  if (candidates.length === 0) return { ok: false, reason: "MissingEndpoints", message: `endpoints for ${where} have no addresses with port name ${JSON.stringify(portName)}` };
  return { ok: true, ...candidates[Math.floor(Math.random() * candidates.length)]! };
}
