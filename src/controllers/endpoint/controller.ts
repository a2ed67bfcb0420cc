// The endpoints controller: for every Service with a selector, an Endpoints object of the same name
// listing the selected pods' IPs, ready ones in addresses and the rest in notReadyAddresses, grouped
// in subsets by the ports they resolve to. Terminating pods are left out, as upstream does.

import { WorkQueue, splitKey } from "../../client/index.js";
import type { EndpointAddress, EndpointSubset, Endpoints, Service } from "../../api/core/types.js";
import { type ControllerContext, type ControllerDescriptor } from "../controller.js";
import { runQueue } from "../run-queue.js";
import { deleteIfExists, getIfExists } from "../resources.js";
import { hasSelector, podsInServiceNamespace, serviceBackends, watchServiceInputs, type Backend } from "../service-backends.js";
import { ENDPOINTS, SERVICES } from "../../api/resource-refs.js";

export const endpointsController: ControllerDescriptor = {
  name: "endpoints-controller",
  aliases: ["endpoint"],
  enabledByDefault: true,
  run: (context) => new EndpointsController(context).run(),
};

export class EndpointsController {
  readonly #ctx: ControllerContext;
  readonly #queue = new WorkQueue({ name: "endpoint", baseDelayMs: 10, maxDelayMs: 30_000 });

  constructor(context: ControllerContext) {
    this.#ctx = context;
  }

  async run(): Promise<void> {
    const { informers } = this.#ctx;
    watchServiceInputs(informers, this.#queue);
    await runQueue(this.#ctx, { name: "endpoints-controller", queue: this.#queue, workers: 5, process: (key) => this.sync(key) });
  }

  /** Brings the Endpoints of one service (namespace/name) in line; exported for tests. */
  async sync(key: string): Promise<void> {
    const { informers, client, naming } = this.#ctx;
    const { namespace, name } = splitKey(key);
    const service = informers.informerFor<Service>({ resource: SERVICES }).get(key);
    if (service === undefined) {
      await deleteIfExists(client, ENDPOINTS, { namespace: namespace!, name });
      return;
    }
    if (!hasSelector(service)) return; // endpoints of a selector-less service are the user's
    const backends = serviceBackends(service, podsInServiceNamespace(informers, service)).filter((b) => !b.terminating);
    const subsets = toSubsets(backends);
    const labels: Record<string, string> = { ...(service.metadata.labels ?? {}) };
    if (service.spec?.clusterIP === "None") labels[`service.${naming.keyDomain}/headless`] = "";

    const current = await getIfExists<Endpoints>(client, ENDPOINTS, { namespace: namespace!, name });
    if (current === undefined) {
      await client.create<Endpoints>(ENDPOINTS, { apiVersion: "v1", kind: "Endpoints", metadata: { name, namespace: namespace!, labels }, subsets });
      return;
    }
    const same = JSON.stringify(current.subsets ?? []) === JSON.stringify(subsets) && JSON.stringify(current.metadata.labels ?? {}) === JSON.stringify(labels);
    if (!same) await client.update<Endpoints>(ENDPOINTS, { ...current, metadata: { ...current.metadata, labels }, subsets });
  }
}

/** One subset per distinct port list (upstream's RepackSubsets), addresses sorted by IP. */
function toSubsets(backends: Backend[]): EndpointSubset[] {
  const groups = new Map<string, EndpointSubset>();
  for (const b of backends) {
    const key = JSON.stringify(b.ports);
    let subset = groups.get(key);
    if (subset === undefined) {
      subset = { ports: b.ports.map((p) => ({ ...(p.name ? { name: p.name } : {}), port: p.port, protocol: p.protocol, ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}) })) };
      groups.set(key, subset);
    }
    const address: EndpointAddress & { targetRef: Record<string, string> } = {
      ip: b.ip,
      ...(b.hostname ? { hostname: b.hostname } : {}),
      ...(b.pod.spec?.nodeName ? { nodeName: b.pod.spec.nodeName } : {}),
      targetRef: { kind: "Pod", namespace: b.pod.metadata.namespace!, name: b.pod.metadata.name!, uid: b.pod.metadata.uid! },
    };
    (b.ready ? (subset.addresses ??= []) : (subset.notReadyAddresses ??= [])).push(address);
  }
  return [...groups.values()];
}
