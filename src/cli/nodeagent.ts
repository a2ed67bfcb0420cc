// `orch nodeagent`: runs the pods of one node through a CRI runtime (seed 001).
// Declares the agent's flags with the seed's defaults; run() is a placeholder.

import { baseFlags, flag, tlsServingFlags } from "../component/index.js";
import { defineCommand, printPlan } from "./command.js";

const GENERIC = "Generic flags";
const SERVING = "Serving flags";

export const command = defineCommand({
  name: "nodeagent",
  summary: "the node agent: runs the pods of one node (port 10250)",
  description:
    "The orch node agent registers its node, keeps its status and lease fresh, and runs the pods bound to the node " +
    "through a container runtime. Without --kubeconfig it runs standalone (seed 001, \"What the service does\" 7).",
  flags: {
    kubeconfig: flag.string({ section: GENERIC, description: "Path to a kubeconfig file for the control plane; empty runs the agent standalone." }),
    config: flag.string({ section: GENERIC, description: "Path to a NodeAgentConfiguration file (nodeagent.config.orch.io/v1beta1)." }),
    "config-dir": flag.string({ section: GENERIC, description: "Directory of drop-in configuration files merged over --config, in name order." }),
    "root-dir": flag.string({ section: GENERIC, default: "/var/lib/nodeagent", description: "Directory for the agent's files: pod volumes, plugins, checkpoints." }),
    "cert-dir": flag.string({ section: GENERIC, default: "/var/lib/nodeagent/pki", description: "Directory of the agent's TLS certificate and key." }),
    "hostname-override": flag.string({ section: GENERIC, description: "Use this name instead of the host name as the node's HostName address and name." }),
    "lock-file": flag.string({ section: GENERIC, description: "Path to a lock file the agent holds while it runs, usually /var/run/nodeagent.lock." }),
    "fail-swap-on": flag.bool({ section: GENERIC, default: true, description: "Refuse to start when swap is enabled on the node (seed 001, \"Swap behavior setting\")." }),
    "bind-address": flag.string({ section: SERVING, default: "0.0.0.0", description: "The IP address for the agent's HTTPS port. 0.0.0.0 listens on all interfaces." }),
    port: flag.int({ section: SERVING, default: 10250, min: 1, max: 65535, description: "The port for the agent's HTTPS API." }),
    ...tlsServingFlags(),
    ...baseFlags(),
  },
  run(flags, context) {
    return printPlan(context, {
      what: "the node agent",
      actions: [
        flags.get("kubeconfig") ? `join the control plane with ${flags.get("kubeconfig")}` : "run standalone (no --kubeconfig)",
        `register node ${flags.get("hostname-override") || "named after this host"} and keep its files under ${flags.get("root-dir")}`,
        `serve its HTTPS API on ${flags.get("bind-address")}:${flags.get("port")}`,
        flags.get("fail-swap-on") ? "refuse to start if swap is on" : "start even with swap on",
      ],
    });
  },
});
