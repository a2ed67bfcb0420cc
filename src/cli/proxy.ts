// `orch proxy`: the service data plane on each node. It follows Services and
// EndpointSlices and programs iptables so that a service's cluster IP and node
// ports reach its ready endpoints (src/proxy/), and serves the component base
// on --metrics-bind-address.

import { baseFlags, conditionCheck, flag, tlsServingFlags } from "../component/index.js";
import { componentClient, namingOfServer, type RestClient } from "../client/index.js";
import { Iptables } from "../proxy/iptables.js";
import { startProxier, type Proxier, type ProxyMode } from "../proxy/proxier.js";
import { chainNames } from "../proxy/rules.js";
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

/** The rule-sync flags; `orch server` takes them too for its built-in proxy. */
export function proxyRuleFlags() {
  return {
    "iptables-sync-period": flag.duration({ section: GENERIC, default: "30s", check: (ms) => (ms <= 0 ? "must be greater than 0" : undefined), description: "The maximum interval of how often iptables rules are refreshed (e.g. '5s', '1m')." }),
    "iptables-min-sync-period": flag.duration({ section: GENERIC, default: "1s", check: (ms) => (ms < 0 ? "must not be negative" : undefined), description: "The minimum period between iptables rule resyncs (e.g. '5s', '1m'); 0 syncs on every change." }),
    "proxy-mode": flag.oneOf({
      section: GENERIC,
      default: "auto",
      choices: ["auto", "iptables", "userspace"],
      description: "The data plane: iptables (kernel rules), userspace (listeners on each service's cluster IP and node port, for a machine without iptables; needs only iproute2), or auto: iptables when iptables, iptables-save and iptables-restore are on PATH, else userspace.",
    }),
    "iptables-chain-prefix": flag.string({ section: GENERIC, default: "ORCH", check: (v) => (/^[A-Z][A-Z0-9]{0,7}$/.test(v) ? undefined : "must be 1-8 upper-case letters or digits, starting with a letter"), description: "The prefix of the proxy's iptables chains (two proxies on one host need different ones)." }),
  };
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
    ...proxyRuleFlags(),
    cleanup: flag.bool({ section: GENERIC, default: false, description: "If true cleanup iptables rules and exit." }),
    ...tlsServingFlags(),
    ...baseFlags(),
  },
  async run(flags, context) {
    const log = (line: string) => context.stderr.write(`${line}\n`);
    const prefix = flags.get("iptables-chain-prefix");
    if (flags.get("cleanup")) {
      await new Iptables(chainNames(prefix)).cleanup();
      log(`${context.command}: removed the ${prefix}-* iptables chains and the jumps to them`);
      return 0;
    }
    let proxier: Proxier | undefined;
    let informersOnly = false;
    const server = await serveComponent({
      name: "orch-proxy",
      flags,
      context,
      listen: splitHostPort(flags.get("metrics-bind-address")),
      readyChecks: [conditionCheck("informer-sync", () => informersOnly || (proxier?.synced() ?? false), "services and endpoint slices have not synced, or the first rules are not written")],
    });
    const client = server.apiServer === undefined ? undefined : await componentClient(server.apiServer, "proxy", { metrics: server.metrics });
    try {
      if (client === undefined) {
        informersOnly = true;
        log(`${context.command}: no --kubeconfig: serving health and metrics only`);
      } else if (process.getuid?.() !== 0) {
        informersOnly = true;
        log(`${context.command}: not running as root: iptables cannot be programmed; serving health and metrics only`);
      } else {
        proxier = startProxier({
          client,
          naming: await namingOfServer(client),
          metrics: server.metrics,
          log,
          chainPrefix: prefix,
          mode: flags.get("proxy-mode") as ProxyMode,
          minSyncIntervalMs: flags.get("iptables-min-sync-period"),
          resyncIntervalMs: flags.get("iptables-sync-period"),
          signal: context.signal,
        });
        log(`${context.command}: ${proxier.mode === "iptables" ? `programming iptables (${prefix}-* chains)` : "serving cluster IPs in userspace"} for the services of ${client.config.server}`);
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
