// `orch scheduler`: binds pending pods to nodes. Declares its flags; run() is a
// placeholder the scheduler work replaces.

import { baseFlags, flag, secureServingFlags } from "../component/index.js";
import { defineCommand, printPlan } from "./command.js";

const GENERIC = "Generic flags";

export const command = defineCommand({
  name: "scheduler",
  summary: "binds pods to nodes (port 10259)",
  description: "The orch scheduler watches for pods without a node and binds each to a node that fits it.",
  flags: {
    kubeconfig: flag.string({ section: GENERIC, description: "Path to a kubeconfig file with the API server's address and credentials." }),
    config: flag.string({ section: GENERIC, description: "Path to the scheduler's configuration file (profiles and plugins)." }),
    "leader-elect": flag.bool({
      section: GENERIC,
      default: true,
      description: "Take a leader lease before scheduling, so only one replica acts at a time.",
    }),
    ...secureServingFlags({ bindAddress: "127.0.0.1", securePort: 10259 }),
    ...baseFlags(),
  },
  run(flags, context) {
    return printPlan(context, {
      what: "the scheduler",
      actions: [
        `reach the API server with ${flags.get("kubeconfig") || "the in-process or in-cluster configuration"}`,
        `schedule pods with ${flags.get("config") || "the default profile"}${flags.get("leader-elect") ? " while holding the leader lease" : ""}`,
        `serve /healthz, /metrics, /statusz and /flagz over HTTPS on ${flags.get("bind-address")}:${flags.get("secure-port")}`,
      ],
    });
  },
});
