// For tests of `orch server --disable-agent`: plays the node agent's part for
// a namespace, reporting every pod that appears Running and Ready (through
// pods/status), so the workload controllers make progress without a node.

import { RestClient, loadKubeconfig } from "../../src/client/index.js";
import { markAllReady } from "../../src/controllers/workload/testing.js";

export interface PlayedAgent {
  readonly client: RestClient;
  stop(): Promise<void>;
}

export function playNodeAgent(kubeconfig: string, namespace = "default"): PlayedAgent {
  const client = new RestClient(loadKubeconfig(kubeconfig));
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await markAllReady(client, namespace).catch(() => 0);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    client,
    async stop() {
      stopped = true;
      await loop;
      client.close();
    },
  };
}
