// The cloud provider of `orch cloud-controller-manager` when none is named: it
// offers no instances, zones, routes or load balancers, so the cloud
// controllers have nothing to do; they still run, watch and report metrics as
// upstream's do with an external provider that declines every interface.

import { WorkQueue } from "../client/index.js";
import type { ControllerDescriptor } from "../controllers/controller.js";
import { runQueue } from "../controllers/run-queue.js";
import { NODES } from "../api/resource-refs.js";

export interface CloudProvider {
  readonly name: string;
  /** Whether the provider can say anything about nodes (addresses, zones, existence). */
  readonly hasInstances: boolean;
}

export const noopCloudProvider: CloudProvider = Object.freeze({ name: "", hasInstances: false });

/**
 * cloud-node: upstream's controller initializes new nodes from the provider's
 * instance data. Without instance data each node key is seen and let go.
 */
export function cloudNodeController(provider: CloudProvider): ControllerDescriptor {
  return {
    name: "cloud-node-controller",
    aliases: ["cloud-node"],
    enabledByDefault: true,
    async run(context) {
      const queue = new WorkQueue({ name: "cloud_node" });
      const nodes = context.informers.informerFor({ resource: NODES });
      nodes.addEventHandler({ onAdd: (n) => queue.add(n.metadata.name ?? ""), onUpdate: (_o, n) => queue.add(n.metadata.name ?? "") });
      await runQueue(context, {
        name: "cloud-node-controller",
        queue,
        workers: 1,
        informers: [nodes],
        // Nothing to copy from a provider without instances.
        process: async () => (provider.hasInstances ? { requeueAfterMs: 60_000 } : undefined),
      });
    },
  };
}
