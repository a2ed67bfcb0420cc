// `orch server`: the whole cluster in one process. The API server with its
// embedded store, the controller manager, the scheduler and a node agent
// (embedded runtime unless --container-runtime-endpoint names one), each its
// own module reaching the API server through admin.kubeconfig over HTTPS like
// any client. It prints one ready line once its node is Ready. With --join
// (or --kubeconfig) it runs only a node agent that joins an existing cluster.

import { hostname } from "node:os";
import { join } from "node:path";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import type { RunningComponentServer } from "../component/index.js";
import type { MetricsRegistry } from "../component/metrics/index.js";
import { RestClient, componentClient, loadKubeconfig, namingOfServer, type ClientConfig } from "../client/index.js";
import { startNodeAgent, defaultConfig, loadConfig, loadRegistriesFile, RegistriesConfigError, type NodeAgent, type RegistriesConfig } from "../nodeagent/index.js";
import { accessPolicy } from "./nodeagent.js";
import { clientCertificateFile, loadNodeCertificate, nodeClientConfig, rotateNodeCertificate, rotationTime, storeNodeCertificate, type RotationOptions } from "../nodeagent/certificates/index.js";
import { BOOTSTRAP_TOKEN_PATTERN, NODE_USER_PREFIX, NODES_GROUP } from "../api/certificates/index.js";
import { ensureCredentials, issueClientCert, PKI_FILES } from "../component/pki.js";
import type { RunningApiServer } from "../apiserver/server.js";
import { CONTROL_PLANE_SECRET, publishControlPlane, publishedServers, startLocalMember, type LocalMember } from "./control-plane.js";
import { LoadBalancer } from "./load-balancer.js";
import { etcdPaths } from "./etcd-member.js";
import { startProxier, type ProxyMode } from "../proxy/proxier.js";
import { claimHostSlot, type HostSlot } from "./host-slot.js";
import { dnsServiceName, nodeAddress, startClusterDns } from "../dns/cluster-dns.js";
import type { Service } from "../api/core/types.js";
import { componentName, namingFor, type ComponentName, type Naming } from "../machinery/naming.js";
import { command as apiserver } from "./apiserver.js";
import { defineCommand, type RunContext } from "./command.js";
import { startApiServerFromFlags, untilStopped } from "./apiserver-process.js";
import { registryOf, servePort, startControlLoops, type ControlLoops } from "./server-loops.js";
import { startControlLoopsThread } from "./server-loops-thread.js";
import { serverFlags, type ServerFlags } from "./server-flags.js";
import { agentEndpoints } from "./agent-endpoints.js";
import { fetchPinnedCa, parseJoinToken } from "./join-token.js";
import { NODES, SERVICE_ACCOUNTS, SERVICES, storageClassResource } from "../api/resource-refs.js";
import { localPathStorageClass } from "../controllers/index.js";
import { isApiError } from "../machinery/index.js";
import { sleep } from "../machinery/until.js";

/** The components `orch server` runs, in start order. */
export const ALL_IN_ONE = ["apiserver", "controller-manager", "scheduler", "nodeagent", "proxy"] as const;


export const command = defineCommand({
  name: "server",
  summary: "all-in-one: API server, controllers, scheduler and a node agent in one process (port 6443)",
  description:
    "Runs a one-node cluster in one process: the API server with its embedded store, the controller manager, the " +
    "scheduler and a node agent that runs pods on this machine. It writes the admin kubeconfig into --data-dir and " +
    "prints one ready line once the node is Ready. With --join or --kubeconfig it runs only a node agent that joins " +
    "an existing cluster. With --cluster-init it stores in a local etcd member instead, the first server of an HA " +
    "control plane that others join with --join URL --control-plane (docs/ha.md).",
  flags: serverFlags,
  validate(flags) {
    if (flags.get("join") && !flags.get("token")) return "--join needs --token (the server's DATA_DIR/join.token)";
    if (flags.get("join") && !flags.get("certificate-authority") && parseJoinToken(flags.get("token")) === undefined) {
      return "--join with a plain --token needs --certificate-authority (the server's DATA_DIR/ca.crt), or give the join token (DATA_DIR/join.token), which pins the CA: the agent must know whom it trusts";
    }
    if (flags.get("join") && flags.get("kubeconfig")) return "--join and --kubeconfig both name a cluster: give one";
    if (flags.get("control-plane") && !flags.get("join")) return "--control-plane needs --join URL (the first server's address) and --token (its DATA_DIR/server.token)";
    if (flags.get("control-plane") && parseJoinToken(flags.get("token")) === undefined) return "--control-plane needs the control-plane token (the first server's DATA_DIR/server.token), which pins the CA";
    if (flags.get("cluster-init") && flags.get("join")) return "--cluster-init starts a new cluster and --join joins one: give one (a joining control-plane server takes --join URL --control-plane)";
    if ((flags.get("cluster-init") || flags.get("control-plane")) && flags.isSet("storage-backend")) return "--cluster-init and --control-plane store in the local etcd member: --storage-backend and --etcd-servers do not apply";
    return apiserver.validate?.(flags);
  },
  async run(flags, context) {
    // The registries file is checked before anything starts: a mistake in it stops the server, naming the file and field.
    let registries: RegistriesConfig | undefined;
    try {
      registries = flags.get("disable-agent") ? undefined : loadRegistriesFile(flags.get("registry-config"), join(flags.get("data-dir"), "registries.yaml"));
    } catch (err) {
      if (!(err instanceof RegistriesConfigError)) throw err;
      context.stderr.write(`${context.command}: invalid configuration: ${err.message}\n`);
      return 2;
    }
    if (flags.get("control-plane")) return runAllInOne(flags, context, registries);
    return flags.get("join") || flags.get("kubeconfig") ? runJoinedAgent(flags, context, registries) : runAllInOne(flags, context, registries);
  },
});

function nodeNameOf(flags: ServerFlags): string {
  return (flags.get("node-name") || hostname()).toLowerCase();
}

/** The service proxy of this machine (root only: it programs iptables); resolves once started, or at once when disabled. */
function startProxy(flags: ServerFlags, client: RestClient, context: RunContext, log: (line: string) => void): Promise<void> {
  if (flags.get("disable-proxy")) return Promise.resolve();
  if (process.getuid?.() !== 0) {
    log("proxy: not running as root: service addresses are not programmed on this machine");
    return Promise.resolve();
  }
  return namingOfServer(client).then((naming) => {
    startProxier({
      client,
      naming,
      log,
      chainPrefix: flags.get("iptables-chain-prefix"),
      mode: flags.get("proxy-mode") as ProxyMode,
      minSyncIntervalMs: flags.get("iptables-min-sync-period"),
      resyncIntervalMs: flags.get("iptables-sync-period"),
      signal: context.signal,
    });
  }).catch((err: unknown) => { log(`proxy failed: ${(err as Error).message}`); });
}

/**
 * The cluster DNS server of this server (all-in-one only, as root with the
 * proxy: pods reach it through a service address). Resolves to the
 * orch-dns service's address, or undefined when there is none.
 */
async function startDns(flags: ServerFlags, client: RestClient, context: RunContext, log: (line: string) => void): Promise<string | undefined> {
  if (flags.get("disable-dns") || flags.get("disable-proxy") || process.getuid?.() !== 0) return undefined;
  const address = nodeAddress();
  if (address === undefined) {
    log("dns: this host has no external IPv4 address for pods to reach: no cluster DNS");
    return undefined;
  }
  try {
    const { server, serviceIP } = await startClusterDns({ client, naming: await namingOfServer(client), domain: flags.get("cluster-domain"), address, port: flags.get("cluster-dns-port"), signal: context.signal, log });
    log(`dns: serving ${flags.get("cluster-domain")} on ${address}:${server.port} (udp, tcp), for pods at ${serviceIP}:53`);
    return serviceIP;
  } catch (err) {
    log(`dns failed: ${(err as Error).message}`);
    return undefined;
  }
}

/** The address of the cluster's orch-dns service, for a joining agent (undefined when the cluster runs none). */
async function clusterDnsAddress(client: RestClient): Promise<string | undefined> {
  const naming = await namingOfServer(client);
  const svc = await client.get<Service>(SERVICES, { namespace: naming.systemNamespace, name: dnsServiceName(naming) }).catch(() => undefined);
  return svc?.spec?.clusterIP || undefined;
}

/**
 * A node agent of this machine, with its files under the data folder so no root-owned paths are needed,
 * and its HTTPS port (/containerLogs and the component endpoints) served first so its Node advertises the real port.
 * `cluster` is how the port checks callers: the cluster's CA for client certificates, its API server for tokens.
 */
async function startAgent(flags: ServerFlags, client: RestClient, metrics: MetricsRegistry, cluster: ClientConfig, context: RunContext, log: (line: string) => void, registries: RegistriesConfig | undefined, dns?: string): Promise<{ agent: NodeAgent; port: RunningComponentServer }> {
  const root = join(flags.get("data-dir"), "nodeagent");
  let agent: NodeAgent | undefined;
  const port = await servePort("nodeagent-port", flags, flags.get("nodeagent-bind-address"), cluster, context, log, {
    ...agentEndpoints(() => agent),
    metrics,
    // Callers judged as upstream's kubelet judges them (nodes/<subresource> of this node), with the agent's default settings.
    access: { ...accessPolicy(defaultConfig()), nodeName: () => nodeNameOf(flags) },
    // The agent's self-signed pair is kept under the data folder, as `orch nodeagent` keeps it in --cert-dir.
    certDir: { dir: join(root, "pki"), name: namingFor().agentName },
  }).catch((err: Error) => {
    throw new Error(`${err.message} (--nodeagent-port picks another port, 0 any free one)`, { cause: err });
  });
  try {
    agent = await startNodeAgent({
      client,
      nodeName: nodeNameOf(flags),
      ...(flags.get("node-ip") ? { nodeIP: flags.get("node-ip") } : {}),
      rootDir: root,
      podLogsDir: join(root, "pod-logs"),
      config: {
        ...(flags.get("nodeagent-config") ? loadConfig({ file: flags.get("nodeagent-config") }) : defaultConfig()),
        staticPodPath: join(flags.get("data-dir"), "manifests"),
        port: port.port,
        ...(dns ? { clusterDNS: [dns] } : {}),
        // Also without the DNS server: a pod's /etc/hosts names its FQDN under the domain.
        clusterDomain: flags.get("cluster-domain"),
      },
      runtimeEndpoint: flags.get("container-runtime-endpoint"),
      stopContainersOnExit: flags.get("stop-pods-on-exit"),
      hostRootFallback: flags.get("host-root-fallback") as "marked" | "any" | "off",
      // The server's data dir (admin.token, store.mdb, keys) is hidden from host-root containers.
      hostRootMasks: [flags.get("data-dir")],
      ...(registries ? { registries } : {}),
      featureGates: context.featureGates,
      metrics: port.metrics,
      signal: context.signal,
      log,
    });
  } catch (err) {
    await port.close();
    throw err;
  }
  return { agent, port };
}

async function runAllInOne(given: ServerFlags, context: RunContext, registries: RegistriesConfig | undefined): Promise<number> {
  const log = (line: string) => context.stderr.write(`${line}\n`);
  // A second server on this host takes a host slot of its own: its service range and proxy chains differ from the first's.
  let slot: HostSlot | undefined;
  try {
    slot = claimSlot(given);
  } catch (err) {
    log(`${context.command}: ${(err as Error).message}`);
    return 1;
  }
  const flags = slot === undefined ? given : given.withDefaults({ "service-cluster-ip-range": slot.serviceRange, "iptables-chain-prefix": slot.chainPrefix, ...(given.get("control-plane") ? { "service-cluster-ip-range": given.get("service-cluster-ip-range") } : {}) });
  try {
    return await runAllInOneWith(flags, context, log, slot, registries);
  } finally {
    slot?.release();
  }
}

/**
 * This server's host slot, when it programs this host's service addresses
 * (its proxy runs, as root) and the command line did not name its own
 * --iptables-chain-prefix (then the user keeps servers apart). A joining
 * control-plane member keeps the cluster's range: only its chains are its own.
 */
function claimSlot(flags: ServerFlags): HostSlot | undefined {
  if (flags.get("disable-proxy") || process.getuid?.() !== 0) return undefined;
  if (flags.isSet("iptables-chain-prefix")) return undefined;
  return claimHostSlot(flags.get("data-dir"), { fresh: !existsSync(join(flags.get("data-dir"), "admin.kubeconfig")) });
}

/** What the slot picked, for the ready line. */
function slotSummary(flags: ServerFlags, slot: HostSlot | undefined): string {
  if (slot === undefined) return "";
  return `; ${slot.note}: services ${flags.get("service-cluster-ip-range")}, proxy chains ${flags.get("iptables-chain-prefix")}-*`;
}

async function runAllInOneWith(flags: ServerFlags, context: RunContext, log: (line: string) => void, slot: HostSlot | undefined, registries: RegistriesConfig | undefined): Promise<number> {
  let local: LocalMember | undefined;
  if (flags.get("cluster-init") || flags.get("control-plane") || existsSync(etcdPaths(flags.get("data-dir")).config)) {
    try {
      local = await startMember(flags, context.signal, log);
    } catch (err) {
      log(`${context.command}: ${(err as Error).message}`);
      return 1;
    }
  }
  let server: RunningApiServer;
  try {
    server = await startApiServerFromFlags(flags, context, { announceReady: false, serviceAccountAdmission: true, ...(local ? { storage: local.storage } : {}) });
  } catch (err) {
    await local?.etcd.stop();
    throw err;
  }
  const naming = namingFor(flags.get("api-group-suffix"));
  const client = (agent: ComponentName, registry?: MetricsRegistry) => new RestClient(loadKubeconfig(server.kubeconfigPath), { userAgent: componentName(naming, agent), ...(registry ? { metrics: registry } : {}) });
  const agentMetrics = registryOf(context);
  // The node agent talks as its node (system:node:NAME in system:nodes), so the Node authorizer and NodeRestriction bound it as a joined node's.
  const agentClient = new RestClient(await ownNodeConfig(flags, naming, server.kubeconfigPath, log), { userAgent: componentName(naming, "nodeagent"), metrics: agentMetrics });
  // `setup` makes what the server itself adds to the cluster (the default storage class, the control plane's Secret).
  const clients = { setup: client("controller-manager"), agent: agentClient, proxy: client("proxy") };
  const cluster = loadKubeconfig(server.kubeconfigPath);
  // The controller manager and the scheduler, with their own ports as when they run alone (-1: none).
  let controlLoops: ControlLoops;
  const onThread = flags.isSet("control-loops-thread") ? flags.get("control-loops-thread") : local !== undefined || flags.get("storage-backend") === "etcd";
  try {
    const options = { flags, context, kubeconfigPath: server.kubeconfigPath, log };
    controlLoops = await sayIfSlow("starting the control loops", onThread ? startControlLoopsThread(options) : startControlLoops(options), log);
  } catch (err) {
    // A port in use: say which flag moves it.
    log(`${context.command}: ${(err as Error).message} (--controller-manager-port and --scheduler-port pick other ports, 0 any free one, -1 none)`);
    for (const c of Object.values(clients)) c.close();
    await server.close();
    return 1;
  }
  await sayIfSlow("creating the default storage class", ensureDefaultStorageClass(clients.setup, log), log);
  if (local !== undefined) {
    const host = advertiseOf(flags).includes(":") ? `[${advertiseOf(flags)}]` : advertiseOf(flags);
    const published = publishControlPlane(clients.setup, { dataDir: flags.get("data-dir"), naming, serverUrl: `https://${host}:${server.port}`, etcdEndpoints: local.storage.etcdServers });
    await sayIfSlow(`writing the Secret ${CONTROL_PLANE_SECRET}`, published, log).catch((err: unknown) => log(`control plane: the Secret ${CONTROL_PLANE_SECRET} was not written: ${(err as Error).message}`));
  }
  const loops = [controlLoops.done];
  loops.push(startProxy(flags, clients.proxy, context, log));
  let agent: NodeAgent | undefined;
  let agentPort: RunningComponentServer | undefined;
  try {
    let node = "no node agent";
    const dns = await sayIfSlow("starting cluster DNS", startDns(flags, clients.proxy, context, log), log);
    if (!flags.get("disable-agent")) {
      ({ agent, port: agentPort } = await sayIfSlow("starting the node agent", startAgent(flags, clients.agent, agentMetrics, cluster, context, log, registries, dns), log));
      await untilNodeReady(clients.agent, agent.nodeName, context.signal, log);
      node = `node ${agent.nodeName} Ready`;
    }
    await untilDefaultServiceAccount(clients.setup, context.signal, log);
    if (!context.signal.aborted) {
      const partPorts = [...controlLoops.ports, ...(agentPort ? [agentPort] : [])].map((p) => `${p.name.replace(/^orch-/, "")} ${p.port}`).join(", ");
      const storage = local === undefined ? flags.get("storage-backend") : `etcd member ${local.member.name}, client ${local.member.clientPort}, peer ${local.member.peerPort}`;
      log(`orch server ready: serving ${server.url} (storage ${storage}); ${node}; kubeconfig ${server.kubeconfigPath}${partPorts ? `; ports: ${partPorts}` : ""}${onThread ? "; control loops on their own thread" : ""}${server.dashboardUrl !== undefined ? `; dashboard ${server.dashboardUrl}` : ""}${slotSummary(flags, slot)}`);
      context.stdout.write(`kubeconfig: ${server.kubeconfigPath}\ntry: kubectl --kubeconfig ${server.kubeconfigPath} get nodes\n`);
    }
  } catch (err) {
    log(`nodeagent failed: ${(err as Error).message}`);
  }
  await untilStopped(context);
  if (agent !== undefined) await stopAgent(agent, flags, log);
  await agentPort?.close();
  await Promise.all(loops);
  for (const c of Object.values(clients)) c.close();
  await server.close();
  await local?.etcd.stop();
  log(`${context.command}: stopped`);
  return 0;
}

/** The address other machines reach this server's etcd member and API server at. */
function advertiseOf(flags: ServerFlags): string {
  return flags.get("advertise-address") || flags.get("node-ip") || nodeAddress() || "127.0.0.1";
}

/** This server's etcd member: started from its data folder, or new (--cluster-init), or joined (--control-plane). */
function startMember(flags: ServerFlags, signal: AbortSignal, log: (line: string) => void): Promise<LocalMember> {
  const port = (flag: "etcd-client-port" | "etcd-peer-port") => ({ port: flags.get(flag), given: flags.isSet(flag) });
  return startLocalMember({
    dataDir: flags.get("data-dir"),
    name: nodeNameOf(flags),
    advertise: advertiseOf(flags),
    clientPort: port("etcd-client-port"),
    peerPort: port("etcd-peer-port"),
    ...(flags.get("control-plane") ? { join: { server: flags.get("join"), token: flags.get("token") } } : {}),
    signal,
    log,
    // The API server's credentials, made now: the member's certificates come from the same CA.
    ensureCa: async () => {
      mkdirSync(flags.get("data-dir"), { recursive: true, mode: 0o700 });
      await ensureCredentials(flags.get("data-dir"));
    },
  });
}

async function runJoinedAgent(flags: ServerFlags, context: RunContext, registries: RegistriesConfig | undefined): Promise<number> {
  const log = (line: string) => context.stderr.write(`${line}\n`);
  let config: ClientConfig;
  let rotation: Omit<RotationOptions, "onRotated"> | undefined;
  // A --join agent reaches the API servers through its load balancer: the join URL first, then every
  // server the control plane publishes, so the loss of one server costs it a reconnect, not the node.
  let balancer: LoadBalancer | undefined;
  try {
    if (flags.get("kubeconfig")) config = loadKubeconfig(flags.get("kubeconfig"));
    else {
      balancer = new LoadBalancer({ servers: [flags.get("join")], log });
      await balancer.listen();
      ({ config, rotation } = await joinConfig(flags, balancer.url, context, log));
    }
  } catch (err) {
    await balancer?.close();
    log(`${context.command}: ${(err as Error).message}`);
    return 1;
  }
  const agentMetrics = registryOf(context);
  const client = await componentClient(config, "nodeagent", { metrics: agentMetrics });
  const proxyClient = await componentClient(config, "proxy");
  // A node certificate is renewed at 80 % of its life; the clients reconnect with the new one.
  const rotating = rotation === undefined ? Promise.resolve() : rotateNodeCertificate({ ...rotation, onRotated: () => [client, proxyClient].forEach((c) => c.reconnect()) });
  void startProxy(flags, proxyClient, context, log);
  const refreshing = balancer === undefined ? Promise.resolve() : refreshServers(balancer, flags.get("join"), client, context.signal);
  try {
    const { agent, port } = await startAgent(flags, client, agentMetrics, config, context, log, registries, flags.get("disable-dns") ? undefined : await clusterDnsAddress(client));
    await untilNodeReady(client, agent.nodeName, context.signal, log);
    if (!context.signal.aborted) log(`orch server ready: node ${agent.nodeName} joined ${balancer === undefined ? config.server : flags.get("join")} and is Ready${balancer === undefined ? "" : ` (API servers through the load balancer at ${balancer.url})`}`);
    await untilStopped(context);
    await stopAgent(agent, flags, log);
    await port.close();
  } finally {
    client.close();
    proxyClient.close();
  }
  await rotating;
  await refreshing;
  await balancer?.close();
  log(`${context.command}: stopped`);
  return 0;
}

/** Keeps the balancer's list current: the join URL, then the servers the control plane publishes (every 30 s). */
async function refreshServers(balancer: LoadBalancer, joinUrl: string, client: RestClient, signal: AbortSignal): Promise<void> {
  const naming = await namingOfServer(client).catch(() => namingFor());
  while (!signal.aborted) {
    const published = await publishedServers(client, naming).catch(() => [] as string[]);
    if (published.length > 0) balancer.setServers([joinUrl, ...published]);
    await sleep(30_000, signal).catch(() => {});
  }
}

/**
 * Where and how a --join agent reaches the cluster: the CA from its file, or
 * fetched and checked against the join token's digest. A bootstrap token
 * (`<id>.<secret>`) only buys the node its client certificate
 * (system:node:NAME), kept in DATA_DIR/nodeagent/pki and rotated; any other
 * token (the admin's, a --token-auth-file one) is used as it is.
 */
async function joinConfig(flags: ServerFlags, server: string, context: RunContext, log: (line: string) => void): Promise<{ config: ClientConfig; rotation?: Omit<RotationOptions, "onRotated"> }> {
  const pinned = parseJoinToken(flags.get("token"));
  const token = pinned?.token ?? flags.get("token");
  const ca = flags.get("certificate-authority") ? readFileSync(flags.get("certificate-authority"), "utf8") : await fetchPinnedCa(server, pinned!.caSha256).catch((err: Error) => {
    // Through the load balancer: name the server the user gave.
    throw new Error(err.message.replaceAll(server, flags.get("join")), { cause: err });
  });
  const cluster: ClientConfig = { server, token, ca };
  if (!BOOTSTRAP_TOKEN_PATTERN.test(token)) return { config: cluster };
  const dir = join(flags.get("data-dir"), "nodeagent", "pki");
  const nodeName = nodeNameOf(flags);
  // The naming table decides the certificate file's name: ask the server with the stored certificate if there is one, else the token.
  const stored = [namingFor(), namingFor("k8s.io")].map((n) => loadNodeCertificate(clientCertificateFile(dir, n), nodeName)).find((c) => c !== undefined);
  const probe = new RestClient(stored === undefined ? cluster : { server, ca, cert: stored.cert, key: stored.key });
  const naming = await namingOfServer(probe).finally(() => probe.close());
  const options = { cluster, dir, nodeName, naming, signal: context.signal, log };
  const { config, certificate } = await nodeClientConfig(options);
  return { config, rotation: { ...options, config, certificate } };
}

/**
 * The client config of this server's own node agent: the API server's address and CA with a client certificate
 * for system:node:NAME (group system:nodes) that this server signs with its CA, kept in
 * DATA_DIR/nodeagent/pki/<agent>-client-current.pem as a joined agent keeps its own, and issued again at a start
 * past 80 % of its life.
 */
async function ownNodeConfig(flags: ServerFlags, naming: Naming, kubeconfigPath: string, log: (line: string) => void): Promise<ClientConfig> {
  const { server, ca, tlsServerName } = loadKubeconfig(kubeconfigPath);
  const nodeName = nodeNameOf(flags);
  const file = clientCertificateFile(join(flags.get("data-dir"), "nodeagent", "pki"), naming);
  let certificate = loadNodeCertificate(file, nodeName);
  if (certificate === undefined || rotationTime(certificate) <= Date.now()) {
    const dataDir = flags.get("data-dir");
    const caPair = { cert: readFileSync(join(dataDir, PKI_FILES.caCert), "utf8"), key: readFileSync(join(dataDir, PKI_FILES.caKey), "utf8") };
    const issued = await issueClientCert(caPair, `${NODE_USER_PREFIX}${nodeName}`, [NODES_GROUP]);
    storeNodeCertificate(file, issued.cert, issued.key);
    certificate = loadNodeCertificate(file, nodeName)!;
    log(`${naming.agentName}: client certificate for ${NODE_USER_PREFIX}${nodeName} stored in ${file}`);
  }
  return { server, ...(ca !== undefined ? { ca } : {}), ...(tlsServerName !== undefined ? { tlsServerName } : {}), cert: certificate.cert, key: certificate.key };
}

/** The `local-path` StorageClass, marked default, from the first start (a class a user deleted comes back). */
async function ensureDefaultStorageClass(client: RestClient, log: (line: string) => void): Promise<void> {
  const naming = await namingOfServer(client);
  try {
    await client.create(storageClassResource(naming), localPathStorageClass(naming));
  } catch (err) {
    if (!isApiError(err, "AlreadyExists")) log(`default storage class not created: ${(err as Error).message}`);
  }
}


/** Stops the node agent and says what became of the pods it ran. */
async function stopAgent(agent: NodeAgent, flags: ServerFlags, log: (line: string) => void): Promise<void> {
  const running = agent.pods().filter((p) => p.status.phase === "Running").length;
  await agent.stop();
  if (running === 0) return;
  log(flags.get("stop-pods-on-exit")
    ? `orch server: stopped the containers of ${running} running pods (--stop-pods-on-exit)`
    : `orch server: ${running} pods keep running; the next orch server with --data-dir ${flags.get("data-dir")} re-adopts them`);
}


/** Resolves once the node reports Ready=True (or the signal fires); says so when it takes long. */
function untilNodeReady(client: RestClient, name: string, signal: AbortSignal, log: (line: string) => void): Promise<void> {
  return untilTrue(`node ${name} to become Ready`, async () => {
    const node = (await client.get(NODES, { name })) as { status?: { conditions?: { type: string; status: string }[] } };
    return node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
  }, signal, log);
}

/**
 * Resolves once the default namespace has its `default` ServiceAccount: the
 * ServiceAccount admission step refuses pods until their namespace's account
 * exists, so a workload created right after the ready line would otherwise
 * see its pods refused (and retried with back-off) for a moment.
 */
function untilDefaultServiceAccount(client: RestClient, signal: AbortSignal, log: (line: string) => void): Promise<void> {
  return untilTrue("the default ServiceAccount", () => client.get(SERVICE_ACCOUNTS, { namespace: "default", name: "default" }).then(() => true), signal, log);
}

/** Awaits `step`, saying every 30 s that the server is still at it: a start that does not finish says where it stands. */
async function sayIfSlow<T>(what: string, step: Promise<T>, log: (line: string) => void): Promise<T> {
  const started = Date.now();
  const timer = setInterval(() => log(`orch server: still ${what} after ${Math.round((Date.now() - started) / 1000)} s`), 30_000);
  timer.unref();
  try {
    return await step;
  } finally {
    clearInterval(timer);
  }
}

/** Polls `check` (an error counts as false) until it answers true or the signal fires; logs once after 30 s. */
async function untilTrue(what: string, check: () => Promise<boolean>, signal: AbortSignal, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  let warned = false;
  while (!signal.aborted) {
    if (await check().catch(() => false)) return;
    if (!warned && Date.now() - started > 30_000) {
      warned = true;
      log(`orch server: still waiting for ${what}`);
    }
    await sleep(200);
  }
}

