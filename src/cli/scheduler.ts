// `orch scheduler`: binds pending pods to nodes (src/scheduler), reaching the
// API server through --kubeconfig like any client, behind the leader lease.

import { readFileSync } from "node:fs";
import { baseFlags, componentRegistry, flag, readTlsFiles, secureServingFlags, startComponentServer, tlsServingFlags } from "../component/index.js";
import { RestClient, loadKubeconfig } from "../client/index.js";
import { startScheduler } from "../scheduler/index.js";
import { defineCommand } from "./command.js";

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
    const config = loadKubeconfig(flags.get("kubeconfig"));
    const metrics = componentRegistry({ featureGates: context.featureGates });
    const client = new RestClient(config, { userAgent: "orch-scheduler", metrics });
    // /healthz, /metrics, /statusz, /flagz on --secure-port (the shared component base).
    const tls = readTlsFiles(flags.get("tls-cert-file"), flags.get("tls-private-key-file"));
    const server = await startComponentServer({
      name: "orch-scheduler",
      featureGates: context.featureGates,
      bindAddress: flags.get("bind-address"),
      port: flags.get("secure-port"),
      metrics,
      flags,
      apiServer: config,
      ...(tls ? { tls } : {}),
      ...(flags.get("client-ca-file") ? { clientCa: readFileSync(flags.get("client-ca-file"), "utf8") } : {}),
      log,
      signal: context.signal,
    });
    log(`${context.command}: serving metrics and health on ${server.url}`);
    try {
      log(`${context.command}: running against ${client.config.server}${flags.get("leader-elect") ? " (leader election on)" : " (leader election off)"}`);
      await startScheduler({
        client,
        leaderElect: flags.get("leader-elect"),
        percentageOfNodesToScore: flags.get("percentage-of-nodes-to-score"),
        signal: context.signal,
        log,
        metrics,
      });
    } finally {
      client.close();
      await server.close();
    }
    log(`${context.command}: stopped`);
    return 0;
  },
});
