// `orch proxy`: the service data plane on each node. Declares its flags as the
// upstream proxy spells them; run() is a placeholder.

import { baseFlags, flag } from "../component/index.js";
import { defineCommand, printPlan } from "./command.js";

const GENERIC = "Generic flags";
const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[^:\s]*):\d{1,5}$/;
const hostPort = (v: string): string | undefined => (HOST_PORT.test(v) ? undefined : "must be host:port");

export const command = defineCommand({
  name: "proxy",
  summary: "the service data plane (metrics on port 10249)",
  description: "The orch proxy programs each node so that traffic to a service's address reaches the service's endpoints.",
  flags: {
    kubeconfig: flag.string({ section: GENERIC, description: "Path to a kubeconfig file with the API server's address and credentials." }),
    "hostname-override": flag.string({ section: GENERIC, description: "Use this name instead of the host name to find this node." }),
    "bind-address": flag.string({ section: GENERIC, default: "0.0.0.0", description: "The IP address of this node for the proxy to serve on." }),
    "metrics-bind-address": flag.string({
      section: GENERIC,
      default: "127.0.0.1:10249",
      check: hostPort,
      description: "The address (host:port) for /metrics, /statusz and /flagz.",
    }),
    "healthz-bind-address": flag.string({
      section: GENERIC,
      default: "0.0.0.0:10256",
      check: hostPort,
      description: "The address (host:port) for the health check server.",
    }),
    ...baseFlags(),
  },
  run(flags, context) {
    return printPlan(context, {
      what: "the service proxy",
      actions: [
        `reach the API server with ${flags.get("kubeconfig") || "the in-process or in-cluster configuration"}`,
        `program service addresses on ${flags.get("bind-address")}`,
        `serve /metrics on ${flags.get("metrics-bind-address")} and /healthz on ${flags.get("healthz-bind-address")}`,
      ],
    });
  },
});
