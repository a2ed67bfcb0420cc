// `orch cloud-controller-manager`: the cloud hooks (node addresses, routes, load
// balancers) with the built-in no-op provider, behind the leader lease, serving
// the component base (health, metrics, z-pages) on --secure-port.

import { baseFlags, flag, secureServingFlags, tlsServingFlags } from "../component/index.js";
import { RestClient } from "../client/index.js";
import { runControllerManager } from "../controllers/index.js";
import { cloudNodeController, noopCloudProvider } from "../cloud/noop-provider.js";
import { defineCommand } from "./command.js";
import { untilStopped } from "./apiserver-process.js";
import { serveComponent } from "./serve-component.js";

const GENERIC = "Generic flags";

export const command = defineCommand({
  name: "cloud-controller-manager",
  summary: "cloud provider hooks, a no-op provider by default (port 10258)",
  description: "The cloud controller manager runs the controllers that talk to a cloud provider: nodes, routes and service load balancers.",
  flags: {
    kubeconfig: flag.string({ section: GENERIC, description: "Path to a kubeconfig file with the API server's address and credentials; without it only the health and metrics endpoints run." }),
    "cloud-provider": flag.string({ section: GENERIC, description: "The cloud provider; empty selects the built-in no-op provider." }),
    "leader-elect": flag.bool({
      section: GENERIC,
      default: true,
      description: "Take a leader lease before running the controllers, so only one replica acts at a time.",
    }),
    ...secureServingFlags({ bindAddress: "127.0.0.1", securePort: 10258 }),
    ...tlsServingFlags(),
    ...baseFlags(),
  },
  validate(flags) {
    const provider = flags.get("cloud-provider");
    return provider === "" || provider === "none" ? undefined : `--cloud-provider: unknown provider "${provider}" (only the built-in no-op provider exists: leave it empty)`;
  },
  async run(flags, context) {
    const log = (line: string) => context.stderr.write(`${line}\n`);
    const server = await serveComponent({ name: "cloud-controller-manager", flags, context });
    const client = server.apiServer === undefined ? undefined : new RestClient(server.apiServer, { userAgent: "cloud-controller-manager", metrics: server.metrics });
    try {
      if (client === undefined) {
        log(`${context.command}: no --kubeconfig: serving health and metrics only`);
        await untilStopped(context);
      } else {
        log(`${context.command}: running against ${client.config.server} with the no-op cloud provider`);
        await runControllerManager({
          client,
          available: [cloudNodeController(noopCloudProvider)],
          leaderElect: flags.get("leader-elect"),
          leaderElection: { name: "cloud-controller-manager" },
          managerName: "cloud-controller-manager",
          metrics: server.metrics,
          signal: context.signal,
          log,
        });
      }
    } finally {
      client?.close();
      await server.close();
    }
    log(`${context.command}: stopped`);
    return 0;
  },
});
