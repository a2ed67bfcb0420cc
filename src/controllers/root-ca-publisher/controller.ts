// The root CA publisher (upstream's root-ca-cert-publisher): every active
// namespace has the configmap `<product>-root-ca.crt` ("kube-root-ca.crt"
// upstream) holding the cluster CA under ca.crt, which the projected token
// volume of every pod reads (the ServiceAccount admission step mounts it). A
// deleted or edited configmap is made right again. The CA is the one the
// controller manager trusts the API server with (its kubeconfig's).

import { isApiError } from "../../machinery/index.js";
import { WorkQueue, keyOf } from "../../client/index.js";
import type { ConfigMap, Namespace } from "../../api/core/types.js";
import { serviceAccountNames } from "../../api/authentication/token-request.js";
import { CONFIGMAPS, NAMESPACES } from "../../api/resource-refs.js";
import { type ControllerContext, type ControllerDescriptor } from "../controller.js";
import { runQueue } from "../run-queue.js";

/** Upstream's description annotation (under the naming table's key domain). */
const DESCRIPTION =
  "Contains a CA bundle that can be used to verify the API server when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
  "No other usage is guaranteed across distributions of clusters.";

export const rootCaPublisherController: ControllerDescriptor = {
  name: "root-ca-cert-publisher-controller",
  aliases: ["root-ca-cert-publisher"],
  enabledByDefault: true,
  run: (context) => new RootCaPublisher(context).run(),
};

export class RootCaPublisher {
  readonly #ctx: ControllerContext;
  readonly #queue = new WorkQueue({ name: "root_ca_cert_publisher", baseDelayMs: 20, maxDelayMs: 30_000 });
  readonly #name: string;

  constructor(context: ControllerContext) {
    this.#ctx = context;
    this.#name = serviceAccountNames(context.naming).rootCaConfigMap;
  }

  async run(): Promise<void> {
    const { informers } = this.#ctx;
    if (this.#ctx.client.config.ca === undefined) {
      this.#ctx.log("root-ca-cert-publisher: the API server is trusted through the system roots (no CA in the kubeconfig); nothing to publish");
      return;
    }
    const namespaces = informers.informerFor<Namespace>({ resource: NAMESPACES });
    const configMaps = informers.informerFor<ConfigMap>({ resource: CONFIGMAPS });
    namespaces.addEventHandler({ onAdd: (ns) => this.#queue.add(keyOf(ns)), onUpdate: (_o, ns) => this.#queue.add(keyOf(ns)) });
    const mine = (cm: ConfigMap) => {
      if (cm.metadata.name === this.#name) this.#queue.add(cm.metadata.namespace!);
    };
    configMaps.addEventHandler({ onUpdate: (_o, cm) => mine(cm), onDelete: mine });
    await runQueue(this.#ctx, { name: "root-ca-cert-publisher", queue: this.#queue, workers: 2, process: (key) => this.sync(key) });
  }

  /** Makes the namespace's configmap hold the CA; exported for tests. */
  async sync(namespace: string): Promise<void> {
    const { informers, client, naming } = this.#ctx;
    const ca = client.config.ca!;
    const ns = informers.informerFor<Namespace>({ resource: NAMESPACES }).get(namespace);
    if (ns === undefined || ns.metadata.deletionTimestamp || ns.status?.phase === "Terminating") return;
    const current = informers.informerFor<ConfigMap>({ resource: CONFIGMAPS }).get(`${namespace}/${this.#name}`);
    const annotation = `${naming.keyDomain}/description`;
    try {
      if (current === undefined) {
        await client.create<ConfigMap>(CONFIGMAPS, {
          apiVersion: "v1", kind: "ConfigMap",
          metadata: { name: this.#name, namespace, annotations: { [annotation]: DESCRIPTION } },
          data: { "ca.crt": ca },
        });
        return;
      }
      if (current.data?.["ca.crt"] === ca && Object.keys(current.data).length === 1 && current.metadata.annotations?.[annotation] === DESCRIPTION) return;
      await client.update<ConfigMap>(CONFIGMAPS, {
        ...current,
        metadata: { ...current.metadata, annotations: { ...current.metadata.annotations, [annotation]: DESCRIPTION } },
        data: { "ca.crt": ca },
      });
    } catch (err) {
      // AlreadyExists / Conflict: the cache was behind (the update event brings the key back). Forbidden / NotFound: the namespace is going away.
      if (!isApiError(err, "AlreadyExists") && !isApiError(err, "Conflict") && !isApiError(err, "Forbidden") && !isApiError(err, "NotFound")) throw err;
    }
  }
}
