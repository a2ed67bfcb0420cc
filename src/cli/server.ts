// `orch server`: the all-in-one process — API server, controllers, scheduler,
// node agent, proxy and cloud controllers, each still its own module with its
// own endpoints. Takes the API server's flags; run() is a placeholder.

import { apiserverFlags, command as apiserver } from "./apiserver.js";
import { defineCommand } from "./command.js";
import { runApiServer } from "./apiserver-process.js";

/** The components `orch server` starts, in start order. */
export const ALL_IN_ONE = ["apiserver", "controller-manager", "scheduler", "nodeagent", "proxy", "cloud-controller-manager"] as const;

export const command = defineCommand({
  name: "server",
  summary: "all-in-one: every component below in one process (port 6443)",
  description:
    "Runs a one-node cluster in one process: the API server with its embedded store, the controller manager, " +
    "the scheduler, a node agent with the embedded runtime, the proxy and the cloud controller manager. " +
    "It writes the admin kubeconfig into --data-dir.",
  flags: apiserverFlags,
  validate: (flags) => apiserver.validate?.(flags),
  run(flags, context) {
    return runApiServer(flags, context);
  },
});
