// `orch cloud-controller-manager`: the cloud hooks (node addresses, routes, load
// balancers), a no-op provider by default. Declares its flags; run() is a placeholder.

import { baseFlags, flag, secureServingFlags } from "../component/index.js";
import { defineCommand, printPlan } from "./command.js";

const GENERIC = "Generic flags";

export const command = defineCommand({
  name: "cloud-controller-manager",
  summary: "cloud provider hooks, a no-op provider by default (port 10258)",
  description: "The cloud controller manager runs the controllers that talk to a cloud provider: nodes, routes and service load balancers.",
  flags: {
    kubeconfig: flag.string({ section: GENERIC, description: "Path to a kubeconfig file with the API server's address and credentials." }),
    "cloud-provider": flag.string({ section: GENERIC, description: "The cloud provider; empty selects the built-in no-op provider." }),
    "leader-elect": flag.bool({
      section: GENERIC,
      default: true,
      description: "Take a leader lease before running the controllers, so only one replica acts at a time.",
    }),
    ...secureServingFlags({ bindAddress: "127.0.0.1", securePort: 10258 }),
    ...baseFlags(),
  },
  run(flags, context) {
    return printPlan(context, {
      what: "the cloud controller manager",
      actions: [
        `reach the API server with ${flags.get("kubeconfig") || "the in-process or in-cluster configuration"}`,
        `use cloud provider ${flags.get("cloud-provider") || "none (no-op)"}`,
        `serve /healthz, /metrics, /statusz and /flagz over HTTPS on ${flags.get("bind-address")}:${flags.get("secure-port")}`,
      ],
    });
  },
});
