// The ServiceAccount controller: every active namespace has a ServiceAccount
// named `default`; a new namespace gets one, and a deleted one is made again.
// Namespaces being deleted are left alone (they refuse new content anyway).

import { isApiError } from "../../machinery/index.js";
import { WorkQueue, keyOf } from "../../client/index.js";
import type { Namespace, ServiceAccount } from "../../api/core/types.js";
import { type ControllerContext, type ControllerDescriptor } from "../controller.js";
import { runQueue } from "../run-queue.js";
import { NAMESPACES, SERVICE_ACCOUNTS } from "../../api/resource-refs.js";
import { DEFAULT_SERVICE_ACCOUNT } from "../../api/authentication/token-request.js";

export { DEFAULT_SERVICE_ACCOUNT };

export const serviceAccountController: ControllerDescriptor = {
  name: "serviceaccount-controller",
  aliases: ["serviceaccount"],
  enabledByDefault: true,
  run: (context) => new ServiceAccountController(context).run(),
};

export class ServiceAccountController {
  readonly #ctx: ControllerContext;
  readonly #queue = new WorkQueue({ name: "serviceaccount", baseDelayMs: 20, maxDelayMs: 30_000 });

  constructor(context: ControllerContext) {
    this.#ctx = context;
  }

  async run(): Promise<void> {
    const { informers } = this.#ctx;
    const namespaces = informers.informerFor<Namespace>({ resource: NAMESPACES });
    const accounts = informers.informerFor<ServiceAccount>({ resource: SERVICE_ACCOUNTS });
    namespaces.addEventHandler({ onAdd: (ns) => this.#queue.add(keyOf(ns)), onUpdate: (_o, ns) => this.#queue.add(keyOf(ns)) });
    accounts.addEventHandler({
      onDelete: (sa) => {
        if (sa.metadata.name === DEFAULT_SERVICE_ACCOUNT) this.#queue.add(sa.metadata.namespace!);
      },
    });
    await runQueue(this.#ctx, { name: "serviceaccount-controller", queue: this.#queue, workers: 2, process: (key) => this.sync(key) });
  }

  /** Makes sure `default` exists in the namespace; exported for tests. */
  async sync(namespace: string): Promise<void> {
    const { informers, client } = this.#ctx;
    const ns = informers.informerFor<Namespace>({ resource: NAMESPACES }).get(namespace);
    if (ns === undefined || ns.metadata.deletionTimestamp || ns.status?.phase === "Terminating") return;
    if (informers.informerFor<ServiceAccount>({ resource: SERVICE_ACCOUNTS }).get(`${namespace}/${DEFAULT_SERVICE_ACCOUNT}`) !== undefined) return;
    try {
      await client.create<ServiceAccount>(SERVICE_ACCOUNTS, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: DEFAULT_SERVICE_ACCOUNT, namespace } });
    } catch (err) {
      // AlreadyExists: the cache was behind. Forbidden: the namespace began terminating meanwhile.
      if (!isApiError(err, "AlreadyExists") && !isApiError(err, "Forbidden") && !isApiError(err, "NotFound")) throw err;
    }
  }
}
