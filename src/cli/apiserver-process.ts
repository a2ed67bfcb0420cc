// `orch apiserver` (and the API server inside `orch server`): start the
// resource API with the built-in types, print where it serves and how to
// reach it with kubectl, and stop cleanly on SIGINT/SIGTERM.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { componentRegistry, type ParsedFlags } from "../component/index.js";
import { watchStalls } from "../component/stall-watch.js";
import { setHeapGrowth } from "../component/heap-growth.js";
import { builtinModules } from "../api/index.js";
import { startApiServer, type RunningApiServer } from "../apiserver/server.js";
import { unlessStorageFull } from "../apiserver/storage-full.js";
import type { apiserverFlags } from "./apiserver-flags.js";
import type { RunContext } from "./command.js";
import { JOIN_TOKEN_FILE, formatJoinToken } from "./join-token.js";
import { bootstrapTokenSecret, generateBootstrapToken } from "../api/certificates/index.js";
import { namingFor, type Naming } from "../machinery/naming.js";

/**
 * `announceReady: false` leaves the ready line to the caller (`orch server` prints its own once its node is Ready).
 * `serviceAccountAdmission`: the ServiceAccount admission step's default (`orch server`, which runs the controllers it relies on, turns it on).
 */
export async function startApiServerFromFlags(
  flags: ParsedFlags<typeof apiserverFlags>,
  context: RunContext,
  options: { announceReady?: boolean; serviceAccountAdmission?: boolean; storage?: StorageChoice } = {},
): Promise<RunningApiServer> {
  const log = (line: string) => context.stderr.write(`${line}\n`);
  watchStalls({ log: (line) => log(`${context.command}: ${line}`), signal: context.signal });
  // Before `orch server` starts its control loops' thread: the setting holds for every heap of the process.
  setHeapGrowth(flags.get("heap-growth-percent"));
  const server = await startApiServer({
    dataDir: flags.get("data-dir"),
    bindAddress: flags.get("bind-address"),
    securePort: flags.get("secure-port"),
    storage: { ...(options.storage ?? { backend: flags.get("storage-backend"), etcdServers: [...flags.get("etcd-servers")], ...etcdTlsOf(flags) }), etcdCompression: flags.get("etcd-compression") },
    compactionIntervalMs: flags.get("compaction-interval"),
    metricResolutionMs: flags.get("metric-resolution"),
    serviceClusterIPRange: flags.get("service-cluster-ip-range"),
    serviceNodePortRange: flags.get("service-node-port-range"),
    featureGates: context.featureGates,
    limits: {
      maxRequestsInflight: flags.get("max-requests-inflight"),
      maxMutatingRequestsInflight: flags.get("max-mutating-requests-inflight"),
      inflightQueueWaitMs: flags.get("inflight-queue-wait"),
      requestTimeoutMs: flags.get("request-timeout"),
      minRequestTimeoutMs: flags.get("min-request-timeout") * 1000,
      maxConnections: flags.get("max-connections"),
      requestBodyTimeoutMs: flags.get("request-body-timeout"),
    },
    groupSuffix: flags.get("api-group-suffix"),
    watchCacheBudgetBytes: flags.get("watch-cache-memory-mb") * 1024 * 1024,
    tokenAuthFile: flags.get("token-auth-file"),
    encryptionProviderConfig: flags.get("encryption-provider-config"),
    admissionControlConfigFile: flags.get("admission-control-config-file"),
    anonymousAuth: flags.get("anonymous-auth"),
    serviceAccounts: {
      signingKeyFile: flags.get("service-account-signing-key-file"),
      keyFiles: flags.get("service-account-key-file"),
      issuers: flags.get("service-account-issuer"),
      jwksUri: flags.get("service-account-jwks-uri"),
      apiAudiences: flags.get("api-audiences"),
      maxExpirationSeconds: Math.floor(flags.get("service-account-max-token-expiration") / 1000),
      extendExpiration: flags.get("service-account-extend-token-expiration"),
      admission: ((options.serviceAccountAdmission ?? false) || flags.get("enable-admission-plugins").includes("ServiceAccount")) && !flags.get("disable-admission-plugins").includes("ServiceAccount"),
    },
    authorizationModes: flags.get("authorization-mode"),
    aggregation: {
      proxyClientCertFile: flags.get("proxy-client-cert-file"),
      proxyClientKeyFile: flags.get("proxy-client-key-file"),
      requestheaderClientCaFile: flags.get("requestheader-client-ca-file"),
      ...(flags.get("requestheader-allowed-names").length > 0 ? { requestheaderAllowedNames: flags.get("requestheader-allowed-names") } : {}),
    },
    modules: builtinModules(),
    audit: {
      policyFile: flags.get("audit-policy-file"),
      logPath: flags.get("audit-log-path"),
      maxSizeMB: flags.get("audit-log-maxsize"),
      maxAgeDays: flags.get("audit-log-maxage"),
      maxBackups: flags.get("audit-log-maxbackup"),
    },
    log,
    announceReady: options.announceReady ?? true,
    flags,
    metrics: componentRegistry({
      featureGates: context.featureGates,
      showHiddenMetricsForVersion: flags.get("show-hidden-metrics-for-version"),
      disabledMetrics: flags.get("disabled-metrics"),
    }),
  });
  // What `orch server --join URL --token "$(cat DATA_DIR/join.token)"` needs: a fresh bootstrap token and the CA's digest.
  const token = await unlessStorageFull("join token", log, () => createJoinBootstrapToken(server, namingFor(flags.get("api-group-suffix")), flags.get("join-token-ttl")), undefined);
  if (token !== undefined) writeFileSync(join(flags.get("data-dir"), JOIN_TOKEN_FILE), formatJoinToken(server.credentials.caCertPem, token) + "\n", { mode: 0o600 });
  return server;
}

/** The store `orch server --cluster-init` chose for its API server (its local etcd member), in place of the flags'. */
export interface StorageChoice {
  backend: "lmdb" | "etcd";
  etcdServers: string[];
  etcdTls?: { ca?: string; cert?: string; key?: string };
}

/** --etcd-cafile, --etcd-certfile and --etcd-keyfile, read (an unreadable file stops the start, naming its flag). */
function etcdTlsOf(flags: ParsedFlags<typeof apiserverFlags>): { etcdTls?: { ca?: string; cert?: string; key?: string } } {
  const tls: { ca?: string; cert?: string; key?: string } = {};
  for (const [flag, key] of [["etcd-cafile", "ca"], ["etcd-certfile", "cert"], ["etcd-keyfile", "key"]] as const) {
    const file = flags.get(flag);
    if (file === "") continue;
    try {
      tls[key] = readFileSync(file, "utf8");
    } catch (err) {
      throw new Error(`--${flag}: ${(err as Error).message}`, { cause: err });
    }
  }
  return Object.keys(tls).length === 0 ? {} : { etcdTls: tls };
}

/** A new bootstrap token Secret for joining nodes (none when Secrets are not served); the token, or undefined. */
async function createJoinBootstrapToken(server: RunningApiServer, naming: Naming, ttlMs: number): Promise<string | undefined> {
  const secrets = server.stores.for({ group: "", resource: "secrets" });
  if (secrets === undefined) return undefined;
  const token = generateBootstrapToken();
  await secrets.create(naming.systemNamespace, bootstrapTokenSecret(naming, token, { now: new Date(), ttlMs, description: "orch server join token (DATA_DIR/join.token)" }));
  return token;
}

/** Wait for SIGINT/SIGTERM (the context's signal). */
export function untilStopped(context: RunContext): Promise<void> {
  return new Promise<void>((resolve) => {
    if (context.signal.aborted) resolve();
    context.signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

export async function runApiServer(flags: ParsedFlags<typeof apiserverFlags>, context: RunContext): Promise<number> {
  const server = await startApiServerFromFlags(flags, context);
  context.stdout.write(
    `kubeconfig: ${server.kubeconfigPath}\n` + `try: kubectl --kubeconfig ${server.kubeconfigPath} get namespaces\n`,
  );
  await untilStopped(context);
  await server.close();
  context.stderr.write(`${context.command}: stopped\n`);
  return 0;
}
