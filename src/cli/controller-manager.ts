// `orch controller-manager`: the namespace, garbage collector, node lifecycle,
// workload and job controllers. Declares its flags; run() is a placeholder.

import { baseFlags, flag, formatDuration, secureServingFlags } from "../component/index.js";
import { defineCommand, printPlan } from "./command.js";

const GENERIC = "Generic flags";

export const command = defineCommand({
  name: "controller-manager",
  summary: "the built-in controllers (port 10257)",
  description:
    "The orch controller manager runs the control loops that move the cluster toward its desired state: " +
    "namespaces, garbage collection, node lifecycle, workloads and jobs.",
  flags: {
    kubeconfig: flag.string({ section: GENERIC, description: "Path to a kubeconfig file with the API server's address and credentials." }),
    controllers: flag.strings({
      section: GENERIC,
      default: ["*"],
      description:
        "A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', " +
        "'-foo' disables the controller named 'foo'.",
    }),
    "leader-elect": flag.bool({
      section: GENERIC,
      default: true,
      description: "Take a leader lease before running the controllers, so only one replica acts at a time.",
    }),
    "node-monitor-grace-period": flag.duration({
      section: "Node lifecycle controller flags",
      default: "50s",
      description: "How long a node may go without a heartbeat before it is marked Unknown (seed 001, \"States and transitions\").",
    }),
    ...secureServingFlags({ bindAddress: "127.0.0.1", securePort: 10257 }),
    ...baseFlags(),
  },
  run(flags, context) {
    return printPlan(context, {
      what: "the controller manager",
      actions: [
        `reach the API server with ${flags.get("kubeconfig") || "the in-process or in-cluster configuration"}`,
        `run controllers ${flags.get("controllers").join(",")}${flags.get("leader-elect") ? " while holding the leader lease" : ""}`,
        `mark nodes Unknown after ${formatDuration(flags.get("node-monitor-grace-period"))} without a heartbeat`,
        `serve /healthz, /metrics, /statusz and /flagz over HTTPS on ${flags.get("bind-address")}:${flags.get("secure-port")}`,
      ],
    });
  },
});
