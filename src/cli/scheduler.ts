// `orch scheduler`: binds pending pods to nodes (src/scheduler), reaching the
// API server through --kubeconfig like any client, behind the leader lease.

import { baseFlags, conditionCheck, flag, secureServingFlags, tlsServingFlags } from "../component/index.js";
import { componentClient, loadKubeconfig } from "../client/index.js";
import { startScheduler } from "../scheduler/index.js";
import { defineCommand } from "./command.js";
import { serveComponent } from "./serve-component.js";

const GENERIC = "Generic flags";

export const command = defineCommand({
  name: "scheduler",
  summary: "binds pods to nodes (port 10259)",
  description: "The orch scheduler watches for pods without a node and binds each to a node that fits it.",
  flags: {
    kubeconfig: flag.string({
      section: GENERIC,
      description: "Path to a kubeconfig file with the API server's address and credentials (required to run; orch apiserver writes one into its data dir).",
    }),
    config: flag.string({ section: GENERIC, description: "Path to the scheduler's configuration file (profiles and plugins). Not supported yet: the default profile runs." }),
    "leader-elect": flag.bool({
      section: GENERIC,
      default: true,
      description: "Take a leader lease before scheduling, so only one replica acts at a time.",
    }),
    "percentage-of-nodes-to-score": flag.int({
      section: GENERIC,
      default: 0,
      description: "Share of nodes (1–100) to find feasible before scoring; 0 picks upstream's adaptive share (50% minus 1% per 125 nodes, at least 5%, at least 100 nodes).",
    }),
    ...secureServingFlags({ bindAddress: "127.0.0.1", securePort: 10259 }),
    ...tlsServingFlags(),
    ...baseFlags(),
  },
  validate(flags) {
    if (!flags.get("kubeconfig")) return "--kubeconfig is required (orch apiserver writes one into its data dir: .orch/admin.kubeconfig)";
    if (flags.get("config")) return "--config is not supported yet (the default profile runs without it)";
    const pct = flags.get("percentage-of-nodes-to-score");
    if (pct < 0 || pct > 100) return "--percentage-of-nodes-to-score must be between 0 and 100";
    return undefined;
  },
  async run(flags, context) {
    const log = (line: string) => context.stderr.write(`${line}\n`);
    let synced = false;
    // /healthz, /livez, /readyz, /metrics, /statusz, /flagz on --secure-port (the shared component base);
    // ready once this replica's caches have synced (a follower waiting for the lease is not ready, as upstream).
    const server = await serveComponent({
      name: "orch-scheduler",
      flags,
      context,
      readyChecks: [conditionCheck("sched-handler-sync", () => synced, "the scheduler's caches have not synced")],
    });
    const client = await componentClient(server.apiServer ?? loadKubeconfig(flags.get("kubeconfig")), "scheduler", { metrics: server.metrics });
    log(`${context.command}: serving health and metrics on ${server.url}`);
    try {
      log(`${context.command}: running against ${client.config.server}${flags.get("leader-elect") ? " (leader election on)" : " (leader election off)"}`);
      await startScheduler({
        client,
        leaderElect: flags.get("leader-elect"),
        percentageOfNodesToScore: flags.get("percentage-of-nodes-to-score"),
        signal: context.signal,
        log,
        metrics: server.metrics,
        onStarted: (scheduler) => void scheduler.synced.then(() => (synced = true)),
      });
    } finally {
      client.close();
      await server.close();
    }
    log(`${context.command}: stopped`);
    return 0;
  },
});
