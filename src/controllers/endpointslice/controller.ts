// The endpointslice controller: for every Service with a selector, EndpointSlices (discovery.<suffix>/v1)
// of at most --max-endpoints-per-slice endpoints each, one set per address family and resolved port
// list, labelled `<domain>/service-name` and `endpointslice.<domain>/managed-by`, owned by the
// Service. Terminating pods stay listed as not ready, serving while ready, terminating (upstream 1.26+).

import { WorkQueue, splitKey, type ResourceRef, type RestClient } from "../../client/index.js";
import type { Node, Service } from "../../api/core/types.js";
import type { Endpoint, EndpointPort, EndpointSlice } from "../../api/discovery/types.js";
import type { Naming } from "../../machinery/naming.js";
import { type ControllerContext, type ControllerDescriptor } from "../controller.js";
import { runQueue } from "../run-queue.js";
import { controllerRef, deleteIfExists } from "../resources.js";
import { endpointSliceLabels } from "../../api/discovery/labels.js";
import { hasSelector, podsInServiceNamespace, serviceBackends, watchServiceInputs, type Backend } from "../service-backends.js";
import { NODES, SERVICES, endpointSliceResource } from "../../api/resource-refs.js";

export const endpointSliceController: ControllerDescriptor = {
  name: "endpointslice-controller",
  aliases: ["endpointslice"],
  enabledByDefault: true,
  run: (context) => new EndpointSliceController(context).run(),
};

export interface EndpointSliceControllerOptions {
  /** upstream --max-endpoints-per-slice (default 100). */
  maxEndpointsPerSlice?: number;
}

export class EndpointSliceController {
  readonly #ctx: ControllerContext;
  readonly #max: number;
  readonly #labels: ReturnType<typeof endpointSliceLabels>;
  readonly #queue = new WorkQueue({ name: "endpoint_slice", baseDelayMs: 10, maxDelayMs: 30_000 });

  constructor(context: ControllerContext, options: EndpointSliceControllerOptions = {}) {
    this.#ctx = context;
    this.#max = options.maxEndpointsPerSlice ?? context.config?.maxEndpointsPerSlice ?? 100;
    this.#labels = endpointSliceLabels(context.naming);
  }

  async run(): Promise<void> {
    const { informers } = this.#ctx;
    watchServiceInputs(informers, this.#queue);
    informers.informerFor<Node>({ resource: NODES });
    // A slice of ours deleted by someone else is made again (upstream's onEndpointSliceDelete): its service is synced.
    informers.informerFor<EndpointSlice>({ resource: endpointSliceResource(this.#ctx.naming) }).addEventHandler({
      onDelete: (slice) => {
        const labels = slice.metadata.labels ?? {};
        const service = labels[this.#labels.serviceName];
        if (service !== undefined && labels[this.#labels.managedBy] === this.#labels.controllerName) this.#queue.add(`${slice.metadata.namespace}/${service}`);
      },
    });
    await runQueue(this.#ctx, { name: "endpointslice-controller", queue: this.#queue, workers: 5, process: (key) => this.sync(key) });
  }

  /** Brings the slices of one service (namespace/name) in line; exported for tests. */
  async sync(key: string): Promise<void> {
    const { informers, client, naming } = this.#ctx;
    const { namespace, name } = splitKey(key);
    const ref = endpointSliceResource(naming);
    const existing = (await client.list<EndpointSlice>(ref, { namespace: namespace!, labelSelector: { [this.#labels.serviceName]: name, [this.#labels.managedBy]: this.#labels.controllerName } })).items;
    const service = informers.informerFor<Service>({ resource: SERVICES }).get(key);
    if (service === undefined || !hasSelector(service)) {
      // Gone, or its endpoints became the user's: ours go (the garbage collector would too, via the owner).
      for (const slice of existing) await this.#delete(slice);
      return;
    }
    const nodes = informers.informerFor<Node>({ resource: NODES });
    const backends = serviceBackends(service, podsInServiceNamespace(informers, service));
    const desired = this.#desired(service, backends, (n) => nodes.get(n));

    await reconcileSlices(client, ref, existing, desired);
  }

  #desired(service: Service, backends: Backend[], node: (name: string) => Node | undefined): EndpointSlice[] {
    const naming = this.#ctx.naming;
    const labels: Record<string, string> = {
      ...(service.metadata.labels ?? {}),
      [this.#labels.serviceName]: service.metadata.name!,
      [this.#labels.managedBy]: this.#labels.controllerName,
    };
    if (service.spec?.clusterIP === "None") labels[`service.${naming.keyDomain}/headless`] = "";
    const groups = new Map<string, { addressType: string; ports: EndpointPort[]; endpoints: Endpoint[] }>();
    for (const b of backends) {
      const addressType = b.ip.includes(":") ? "IPv6" : "IPv4";
      const ports: EndpointPort[] = b.ports.map((p) => ({ name: p.name, port: p.port, protocol: p.protocol, ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}) }));
      const gkey = `${addressType}|${JSON.stringify(ports)}`;
      let g = groups.get(gkey);
      if (g === undefined) groups.set(gkey, (g = { addressType, ports, endpoints: [] }));
      const nodeName = b.pod.spec?.nodeName;
      const zone = nodeName ? node(nodeName)?.metadata.labels?.[`topology.${naming.keyDomain}/zone`] : undefined;
      g.endpoints.push({
        addresses: [b.ip],
        conditions: { ready: b.ready && !b.terminating, serving: b.ready, terminating: b.terminating },
        ...(b.hostname ? { hostname: b.hostname } : {}),
        targetRef: { kind: "Pod", namespace: b.pod.metadata.namespace!, name: b.pod.metadata.name!, uid: b.pod.metadata.uid! },
        ...(nodeName ? { nodeName } : {}),
        ...(zone ? { zone } : {}),
      });
    }
    // A service whose selector matches nothing still gets one empty slice, as upstream (consumers see "no endpoints", not "unknown").
    if (groups.size === 0) groups.set("", { addressType: "IPv4", ports: [], endpoints: [] });
    const slices: EndpointSlice[] = [];
    for (const g of groups.values()) {
      for (let i = 0; i === 0 || i < g.endpoints.length; i += this.#max) {
        slices.push({
          apiVersion: `discovery.${naming.groupSuffix}/v1`,
          kind: "EndpointSlice",
          metadata: { generateName: `${service.metadata.name}-`, namespace: service.metadata.namespace!, labels, ownerReferences: [controllerRef({ ...service, apiVersion: "v1", kind: "Service" })] },
          addressType: g.addressType,
          endpoints: g.endpoints.slice(i, i + this.#max),
          ports: g.ports,
        });
      }
    }
    return slices;
  }

  async #delete(slice: EndpointSlice): Promise<void> {
    await deleteIfExists(this.#ctx.client, endpointSliceResource(this.#ctx.naming), { namespace: slice.metadata.namespace!, name: slice.metadata.name! });
  }
}

/**
 * Brings a service's slices from `existing` to `desired`: reuses slices of the
 * same address type and ports (in name order), updating endpoints and labels
 * that differ, creates what is missing and deletes the rest.
 */
export async function reconcileSlices(client: RestClient, ref: ResourceRef, existing: readonly EndpointSlice[], desired: readonly EndpointSlice[]): Promise<void> {
  const pool = [...existing].sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));
  for (const want of desired) {
    const i = pool.findIndex((s) => s.addressType === want.addressType && JSON.stringify(s.ports ?? []) === JSON.stringify(want.ports));
    if (i < 0) {
      await client.create<EndpointSlice>(ref, want);
      continue;
    }
    const [have] = pool.splice(i, 1);
    const same = JSON.stringify(have!.endpoints ?? []) === JSON.stringify(want.endpoints) && JSON.stringify(have!.metadata.labels ?? {}) === JSON.stringify(want.metadata.labels);
    if (!same) await client.update<EndpointSlice>(ref, { ...have!, metadata: { ...have!.metadata, labels: want.metadata.labels! }, endpoints: want.endpoints! });
  }
  for (const slice of pool) await deleteIfExists(client, ref, { namespace: slice.metadata.namespace!, name: slice.metadata.name! });
}
