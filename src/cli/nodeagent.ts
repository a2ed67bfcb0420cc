// `orch nodeagent`: runs the pods of one node through a CRI runtime (seed 001).
// Loads --config and --config-dir (flags win), then runs startNodeAgent until
// SIGTERM. Configuration errors exit 2 naming the file and field.

import { baseFlags, flag, parseFeatureGates, tlsServingFlags, type AccessPolicy } from "../component/index.js";
import { join } from "node:path";
import { ConfigError, LockContentionError, RegistriesConfigError, SwapError, loadConfig, loadRegistriesFile, startNodeAgent, type NodeAgent, type NodeAgentConfig, type RegistriesConfig } from "../nodeagent/index.js";
import { componentName, namingFor } from "../machinery/naming.js";
import { RestClient } from "../client/index.js";
import type { MetricsRegistry } from "../component/metrics/index.js";
import { bootstrapNodeCredentials, rotateNodeCertificate, type BootstrappedCredentials } from "../nodeagent/certificates/index.js";
import { nodeHostname } from "../nodeagent/host/host.js";
import { agentEndpoints } from "./agent-endpoints.js";
import { serveComponent } from "./serve-component.js";
import { defineCommand } from "./command.js";

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
    "bootstrap-kubeconfig": flag.string({
      section: GENERIC,
      description:
        "Path to a kubeconfig file holding a bootstrap token, used to get a client certificate for the agent when --kubeconfig does not exist or holds " +
        "no valid certificate for this node. The certificate and key are kept in --cert-dir (<agent>-client-current.pem) and a kubeconfig naming them " +
        "is written to --kubeconfig; the certificate is renewed at 80 % of its life.",
    }),
    config: flag.string({ section: GENERIC, description: "Path to a NodeAgentConfiguration file (nodeagent.config.orch.io/v1beta1, YAML or JSON)." }),
    "config-dir": flag.string({ section: GENERIC, description: "Directory of drop-in configuration files merged over --config, in lexical name order (*.conf, *.yaml, *.yml, *.json)." }),
    "root-dir": flag.string({ section: GENERIC, default: "/var/lib/nodeagent", description: "Directory for the agent's files: pod volumes, plugins, checkpoints." }),
    "cert-dir": flag.string({ section: GENERIC, default: "/var/lib/nodeagent/pki", description: "Directory of the agent's TLS certificate and key." }),
    "pod-logs-dir": flag.string({ section: GENERIC, default: "/var/log/pods", description: "Directory of the containers' logs (<namespace>_<pod>_<uid>/<container>/<restart>.log)." }),
    "hostname-override": flag.string({ section: GENERIC, description: "Use this name instead of the host name as the node's HostName address and name." }),
    "node-ip": flag.string({ section: GENERIC, description: "The node's InternalIP, where the API server reaches this agent's port (default: the host's first non-loopback IPv4 address)." }),
    "lock-file": flag.string({ section: GENERIC, description: "Path to a lock file the agent holds while it runs, usually /var/run/nodeagent.lock." }),
    "exit-on-lock-contention": flag.bool({ section: GENERIC, description: "Wait for the lock file, and exit when another process opens it (for in-place upgrades)." }),
    "container-runtime-endpoint": flag.string({ section: GENERIC, description: "The CRI runtime socket (unix:///run/containerd/containerd.sock); empty runs the embedded runtime. Overrides containerRuntimeEndpoint." }),
    "stop-pods-on-exit": flag.bool({ section: GENERIC, default: false, description: "On SIGTERM, stop the containers of every pod. By default they keep running and the next agent with the same --root-dir and runtime re-adopts them." }),
    "host-root-fallback": flag.oneOf({
      section: GENERIC,
      default: "marked",
      choices: ["marked", "any", "off"],
      description: "The embedded runtime's fallback for an image it cannot get: run the container on the host's root file system (masked: the agent's and server's data, credentials, /proc/kcore and the like). marked: only pods annotated orch.io/host-root: \"true\" (Pod Security counts them as privileged); any: every pod; off: the pull fails.",
    }),
    "registry-config": flag.string({
      section: GENERIC,
      description: "A registries file (k3s's registries.yaml: mirrors per registry, credentials and TLS per host) for the embedded runtime's pulls; default <root-dir>/registries.yaml when it exists (docs/nodeagent.md, \"Registry mirrors and credentials\").",
    }),
    "fail-swap-on": flag.bool({ section: GENERIC, default: true, description: "Refuse to start when swap is enabled on the node (seed 001, \"Swap behavior setting\"). Overrides failSwapOn." }),
    "bind-address": flag.string({ section: SERVING, default: "0.0.0.0", description: "The IP address for the agent's HTTPS port. 0.0.0.0 listens on all interfaces. Overrides address." }),
    port: flag.int({ section: SERVING, default: 10250, min: 0, max: 65535, description: "The port for the agent's HTTPS API (/containerLogs, /healthz, /metrics, /statusz...); 0 picks a free one (the Node advertises the port picked). Overrides port." }),
    ...tlsServingFlags(),
    ...baseFlags(),
  },
  validate(flags) {
    if (flags.get("bootstrap-kubeconfig") && !flags.get("kubeconfig")) return "--bootstrap-kubeconfig needs --kubeconfig (where the agent's kubeconfig is written)";
    return undefined;
  },
  async run(flags, context) {
    const log = (line: string) => context.stderr.write(`${line}\n`);
    let config: NodeAgentConfig;
    try {
      // Flags named on the command line win over every file (upstream's precedence).
      const set = <T,>(name: Parameters<typeof flags.isSet>[0], value: T): T | undefined => (flags.isSet(name) ? value : undefined);
      const gates = flags.get("feature-gates") as Record<string, string>;
      config = loadConfig({
        ...(flags.get("config") ? { file: flags.get("config") } : {}),
        ...(flags.get("config-dir") ? { dir: flags.get("config-dir") } : {}),
        flags: {
          port: set("port", flags.get("port")),
          address: set("bind-address", flags.get("bind-address")),
          failSwapOn: set("fail-swap-on", flags.get("fail-swap-on")),
          containerRuntimeEndpoint: set("container-runtime-endpoint", flags.get("container-runtime-endpoint")),
          featureGates: flags.isSet("feature-gates") ? Object.fromEntries(Object.entries(gates).map(([k, v]) => [k, v === "true"])) : undefined,
        },
      });
    } catch (err) {
      if (err instanceof ConfigError) {
        log(`${context.command}: invalid configuration: ${err.message}`);
        return 2;
      }
      throw err;
    }
    let registries: RegistriesConfig | undefined;
    try {
      registries = loadRegistriesFile(flags.get("registry-config"), join(flags.get("root-dir"), "registries.yaml"));
    } catch (err) {
      if (err instanceof RegistriesConfigError) {
        log(`${context.command}: invalid configuration: ${err.message}`);
        return 2;
      }
      throw err;
    }
    let featureGates;
    try {
      featureGates = parseFeatureGates(config.featureGates);
    } catch (err) {
      log(`${context.command}: invalid configuration: featureGates: ${(err as Error).message}`);
      return 2;
    }
    // The component base (/healthz, /livez, /readyz, /metrics, /statusz, /flagz) and /containerLogs on
    // address:port; ready once the PLEG relists.
    let agent: NodeAgent | undefined;
    const certDir = flags.isSet("cert-dir") || !flags.isSet("root-dir") ? flags.get("cert-dir") : `${flags.get("root-dir")}/pki`;
    // TLS bootstrap first, as upstream's kubelet: the port checks callers with the --kubeconfig it writes.
    let credentials: BootstrappedCredentials | undefined;
    const nodeName = nodeHostname(flags.get("hostname-override"));
    try {
      if (flags.get("bootstrap-kubeconfig")) {
        credentials = await bootstrapNodeCredentials({ kubeconfig: flags.get("kubeconfig"), bootstrapKubeconfig: flags.get("bootstrap-kubeconfig"), certDir, nodeName, signal: context.signal, log });
      }
    } catch (err) {
      if (context.signal.aborted) return 0;
      log(`${context.command}: TLS bootstrap: ${(err as Error).message}`);
      return 1;
    }
    const server = await serveComponent({
      // Without --tls-cert-file, the self-signed pair is <cert-dir>/nodeagent.crt|.key, reused across restarts.
      certDir: { dir: certDir, name: namingFor().agentName },
      name: "orch-nodeagent",
      flags,
      context,
      listen: { host: config.address, port: config.port },
      access: { ...accessPolicy(config), nodeName: () => agent?.nodeName ?? "" },
      ...(config.authentication.x509.clientCAFile ? { clientCaFile: config.authentication.x509.clientCAFile } : {}),
      ...agentEndpoints(() => agent),
    });
    const joined = credentials === undefined ? undefined : withRotation(credentials, nodeName, certDir, context.signal, log, server.metrics);
    try {
      agent = await startNodeAgent({
        ...(joined !== undefined ? { client: joined.client } : {}),
        // The Node advertises the port actually served (--port 0 picks one).
        config: { ...config, port: server.port },
        ...(flags.get("node-ip") ? { nodeIP: flags.get("node-ip") } : {}),
        ...(flags.get("kubeconfig") && joined === undefined ? { kubeconfig: flags.get("kubeconfig") } : {}),
        ...(flags.get("hostname-override") ? { hostnameOverride: flags.get("hostname-override") } : {}),
        rootDir: flags.get("root-dir"),
        certDir,
        podLogsDir: flags.get("pod-logs-dir"),
        stopContainersOnExit: flags.get("stop-pods-on-exit"),
        hostRootFallback: flags.get("host-root-fallback") as "marked" | "any" | "off",
        ...(registries ? { registries } : {}),
        // Its credentials, whichever mode: hidden from host-root containers with the root and cert dirs.
        hostRootMasks: [flags.get("kubeconfig"), flags.get("bootstrap-kubeconfig")].filter((p): p is string => typeof p === "string" && p !== ""),
        ...(flags.get("lock-file") ? { lockFile: flags.get("lock-file"), exitOnLockContention: flags.get("exit-on-lock-contention") } : {}),
        featureGates,
        metrics: server.metrics,
        signal: context.signal,
        log,
      });
      log(`${context.command}: running (node ${agent.nodeName}, ${agent.mode}); serving ${server.url}`);
      // Until SIGTERM, or until the agent ends on its own (--exit-on-lock-contention): then the process exits too.
      const why = await agent.done;
      log(`${context.command}: stopped${why ? `: ${why}` : ""}`);
      return 0;
    } catch (err) {
      if (agent === undefined && context.signal.aborted) {
        // SIGTERM while waiting for the lock file (or starting): nothing ran, nothing to undo.
        log(`${context.command}: stopped before starting`);
        return 0;
      }
      if (err instanceof LockContentionError && err.yielded) {
        log(`${context.command}: stopped while starting: ${err.message}`);
        return 0;
      }
      if (err instanceof SwapError || err instanceof LockContentionError) {
        log(`${context.command}: ${err.message}`);
        return 1;
      }
      throw err;
    } finally {
      joined?.client.close();
      await joined?.rotating;
      await server.close();
    }
  },
});

/** --bootstrap-kubeconfig: the client of the node's certificate, and its renewal at 80 % of its life. */
function withRotation(
  creds: BootstrappedCredentials, nodeName: string, certDir: string, signal: AbortSignal, log: (line: string) => void, metrics: MetricsRegistry,
): { client: RestClient; rotating: Promise<void> } {
  const client = new RestClient(creds.config, { userAgent: `${componentName(creds.naming, "nodeagent")}/${nodeName}`, metrics });
  const rotating = rotateNodeCertificate({
    config: creds.config, certificate: creds.certificate, dir: certDir, naming: creds.naming, nodeName, signal, log,
    onRotated: () => client.reconnect(),
  });
  return { client, rotating };
}

/** The agent port's access from its configuration (seed 001's authentication and authorization settings). */
export function accessPolicy(config: Pick<NodeAgentConfig, "authentication" | "authorization">): AccessPolicy {
  return {
    anonymous: config.authentication.anonymous.enabled,
    tokens: config.authentication.webhook.enabled,
    tokenTtlMs: config.authentication.webhook.cacheTTL,
    mode: config.authorization.mode,
    allowedTtlMs: config.authorization.webhook.cacheAuthorizedTTL,
    deniedTtlMs: config.authorization.webhook.cacheUnauthorizedTTL,
  };
}
