// `orch server`: the all-in-one process. Today it runs the API server and
// the controller manager (namespace and garbage-collector controllers); the
// scheduler, node agent, proxy and cloud controllers join as they are built.
// Each stays its own module: the controllers reach the API server through
// its kubeconfig over HTTPS, like any client.

import { RestClient, loadKubeconfig } from "../client/index.js";
import { runControllerManager } from "../controllers/index.js";
import { apiserverFlags, command as apiserver } from "./apiserver.js";
import { defineCommand } from "./command.js";
import { startApiServerFromFlags, untilStopped } from "./apiserver-process.js";

/** The components `orch server` runs today, in start order. */
export const ALL_IN_ONE = ["apiserver", "controller-manager"] as const;

export const command = defineCommand({
  name: "server",
  summary: "all-in-one: API server and controllers in one process (port 6443)",
  description:
    "Runs a one-node control plane in one process: the API server with its embedded store and the controller " +
    "manager (namespace and garbage-collector controllers). It writes the admin kubeconfig into --data-dir.",
  flags: apiserverFlags,
  validate: (flags) => apiserver.validate?.(flags),
  async run(flags, context) {
    const server = await startApiServerFromFlags(flags, context);
    const log = (line: string) => context.stderr.write(`${line}\n`);
    const client = new RestClient(loadKubeconfig(server.kubeconfigPath), { userAgent: "orch-server/controller-manager" });
    // One process, one controller manager: no lease to contend for.
    const controllers = runControllerManager({ client, leaderElect: false, signal: context.signal, log }).catch((err: unknown) => {
      log(`controller-manager failed: ${(err as Error).message}`);
    });
    context.stdout.write(`kubeconfig: ${server.kubeconfigPath}\ntry: kubectl --kubeconfig ${server.kubeconfigPath} get namespaces\n`);
    await untilStopped(context);
    await controllers;
    client.close();
    await server.close();
    context.stderr.write(`${context.command}: stopped\n`);
    return 0;
  },
});
