// The endpointslice mirroring controller (upstream's): for a Service without
// a selector, whose Endpoints are written by someone else (a user, the API
// server for `kubernetes`, orch server for `orch-dns`), EndpointSlices that
// mirror them, so slice readers (the proxy, cluster DNS) see those endpoints
// too. One slice per subset and address type; `addresses` are ready,
// `notReadyAddresses` not. Endpoints labelled
// `endpointslice.<domain>/skip-mirror: "true"` are left alone.

import { WorkQueue, splitKey } from "../../client/index.js";
import type { Endpoints, Service } from "../../api/core/types.js";
import type { EndpointPort, EndpointSlice } from "../../api/discovery/types.js";
import { type ControllerContext, type ControllerDescriptor } from "../controller.js";
import { runQueue } from "../run-queue.js";
import { controllerRef } from "../resources.js";
import { hasSelector } from "../service-backends.js";
import { endpointSliceLabels } from "../../api/discovery/labels.js";
import { reconcileSlices } from "../endpointslice/controller.js";
import { ENDPOINTS, SERVICES, endpointSliceResource } from "../../api/resource-refs.js";

export const endpointSliceMirroringController: ControllerDescriptor = {
  name: "endpointslice-mirroring-controller",
  aliases: ["endpointslicemirroring"],
  enabledByDefault: true,
  run: (context) => new EndpointSliceMirroringController(context).run(),
};

const keyOf = (o: { metadata: { namespace?: string; name?: string } }) => `${o.metadata.namespace}/${o.metadata.name}`;

export class EndpointSliceMirroringController {
  readonly #ctx: ControllerContext;
  readonly #queue = new WorkQueue({ name: "endpoint_slice_mirroring", baseDelayMs: 10, maxDelayMs: 30_000 });
  readonly #labels: ReturnType<typeof endpointSliceLabels>;
  readonly #managedBy: string;

  constructor(context: ControllerContext) {
    this.#ctx = context;
    this.#labels = endpointSliceLabels(context.naming);
    this.#managedBy = `endpointslicemirroring-controller.${context.naming.groupSuffix}`;
  }

  async run(): Promise<void> {
    const { informers } = this.#ctx;
    for (const resource of [SERVICES, ENDPOINTS]) {
      informers.informerFor({ resource }).addEventHandler({
        onAdd: (o) => this.#queue.add(keyOf(o)),
        onUpdate: (_old, o) => this.#queue.add(keyOf(o)),
        onDelete: (o) => this.#queue.add(keyOf(o)),
      });
    }
    await runQueue(this.#ctx, { name: "endpointslice-mirroring-controller", queue: this.#queue, workers: 2, process: (key) => this.sync(key) });
  }

  /** Mirrors the Endpoints of one service (namespace/name); exported for tests. */
  async sync(key: string): Promise<void> {
    const { informers, client, naming } = this.#ctx;
    const { namespace, name } = splitKey(key);
    const ref = endpointSliceResource(naming);
    const existing = (await client.list<EndpointSlice>(ref, { namespace: namespace!, labelSelector: { [this.#labels.serviceName]: name, [this.#labels.managedBy]: this.#managedBy } })).items;
    const service = informers.informerFor<Service>({ resource: SERVICES }).get(key);
    const endpoints = informers.informerFor<Endpoints>({ resource: ENDPOINTS }).get(key);
    const skip = endpoints?.metadata.labels?.[`endpointslice.${naming.keyDomain}/skip-mirror`] === "true";
    const desired = service === undefined || endpoints === undefined || hasSelector(service) || skip ? [] : this.#desired(service, endpoints);
    await reconcileSlices(client, ref, existing, desired);
  }

  #desired(service: Service, endpoints: Endpoints): EndpointSlice[] {
    const naming = this.#ctx.naming;
    const labels: Record<string, string> = { ...(endpoints.metadata.labels ?? {}), [this.#labels.serviceName]: service.metadata.name!, [this.#labels.managedBy]: this.#managedBy };
    const slices: EndpointSlice[] = [];
    for (const subset of endpoints.subsets ?? []) {
      const ports: EndpointPort[] = (subset.ports ?? []).map((p) => ({ ...(p.name ? { name: p.name } : {}), port: p.port ?? null, protocol: p.protocol ?? "TCP" }));
      const all = [...(subset.addresses ?? []).map((a) => ({ a, ready: true })), ...(subset.notReadyAddresses ?? []).map((a) => ({ a, ready: false }))];
      for (const addressType of ["IPv4", "IPv6"]) {
        const mine = all.filter(({ a }) => (a.ip ?? "").includes(":") === (addressType === "IPv6"));
        if (mine.length === 0) continue;
        slices.push({
          apiVersion: `discovery.${naming.groupSuffix}/v1`,
          kind: "EndpointSlice",
          metadata: { generateName: `${service.metadata.name}-`, namespace: service.metadata.namespace!, labels, ownerReferences: [controllerRef({ ...endpoints, apiVersion: "v1", kind: "Endpoints" })] },
          addressType,
          ports,
          endpoints: mine.map(({ a, ready }) => ({
            addresses: [a.ip!],
            conditions: { ready },
            ...(a.hostname ? { hostname: a.hostname } : {}),
            ...(a.nodeName ? { nodeName: a.nodeName } : {}),
          })),
        });
      }
    }
    return slices;
  }
}
