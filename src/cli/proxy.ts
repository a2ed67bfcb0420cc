// `orch proxy`: the service data plane on each node. Today it watches services
// and endpoints (so its informers, readiness and metrics are real) and serves
// the component base on --metrics-bind-address; programming the node's
// packet filter is not built yet (it logs so).

import { baseFlags, conditionCheck, flag, tlsServingFlags } from "../component/index.js";
import { InformerFactory, RestClient } from "../client/index.js";
import { defineCommand } from "./command.js";
import { untilStopped } from "./apiserver-process.js";
import { serveComponent } from "./serve-component.js";

const GENERIC = "Generic flags";
const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[^:\s]*):\d{1,5}$/;
const hostPort = (v: string): string | undefined => (HOST_PORT.test(v) ? undefined : "must be host:port");

function splitHostPort(v: string): { host: string; port: number } {
  const i = v.lastIndexOf(":");
  return { host: v.slice(0, i).replace(/^\[(.*)\]$/, "$1") || "0.0.0.0", port: Number(v.slice(i + 1)) };
}

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
      description: "The address (host:port) of the HTTPS port for /metrics, /healthz, /livez, /readyz, /statusz and /flagz; port 0 picks a free one.",
    }),
    "healthz-bind-address": flag.string({
      section: GENERIC,
      default: "0.0.0.0:10256",
      check: hostPort,
      description: "The address (host:port) for the health check server (not served yet: health is on --metrics-bind-address).",
    }),
    ...tlsServingFlags(),
    ...baseFlags(),
  },
  async run(flags, context) {
    const log = (line: string) => context.stderr.write(`${line}\n`);
    let synced = false;
    const server = await serveComponent({
      name: "orch-proxy",
      flags,
      context,
      listen: splitHostPort(flags.get("metrics-bind-address")),
      readyChecks: [conditionCheck("informer-sync", () => synced, "services and endpoints have not synced")],
    });
    if (server.apiServer === undefined) synced = true;
    const client = server.apiServer === undefined ? undefined : new RestClient(server.apiServer, { userAgent: "orch-proxy", metrics: server.metrics });
    try {
      if (client !== undefined) {
        const informers = new InformerFactory({ client, log, metrics: server.metrics });
        for (const resource of ["services", "endpoints"]) informers.informerFor({ resource: { group: "", version: "v1", resource, namespaced: true } });
        informers.start(context.signal);
        void informers.waitForSync(context.signal).then((ok) => (synced = ok));
        log(`${context.command}: watching services and endpoints on ${client.config.server}; programming the data plane is not implemented yet`);
      } else {
        log(`${context.command}: no --kubeconfig: serving health and metrics only`);
      }
      await untilStopped(context);
    } finally {
      client?.close();
      await server.close();
    }
    log(`${context.command}: stopped`);
    return 0;
  },
});
