// startNodeAgent: the node agent as a component (seed 001). It checks swap,
// takes the lock file, creates its local files, connects to the runtime (the
// embedded one when no endpoint is configured), and runs the sync loop
// (sync/sync-pipeline.ts: sources, pod workers, PLEG, probes) with
// housekeeping beside it; joined to a cluster it also registers the Node,
// keeps its status and lease fresh, follows its pods and mirrors static pods
// (mirror-pods/). This file only wires those parts; each has its own module.

import { chmodSync, mkdirSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { join, resolve } from "node:path";
import { uptime } from "node:os";
import type { Pod, PodStatus } from "../api/core/types.js";
import { componentName, configAnnotations, namingFor, type Naming } from "../machinery/naming.js";
import { RestClient, loadKubeconfig, namingOfServer } from "../client/index.js";
import { defaultFeatureGates, type FeatureGates } from "../component/index.js";
import type { MetricsRegistry } from "../component/metrics/index.js";
import type { Request, Response } from "../component/endpoints.js";
import { defaultConfig, type NodeAgentConfig } from "./config/index.js";
import { ContainerCheckpoint } from "./checkpoint/checkpoint.js";
import { DeviceManager } from "./devices/device-manager.js";
import { PodInfoServer } from "./podinfo/pod-info.js";
import { ContainerAttach } from "./exec/container-attach.js";
import { ContainerExec } from "./exec/container-exec.js";
import { PortForward } from "./exec/port-forward.js";
import * as host from "./host/host.js";
import { Housekeeping } from "./housekeeping/housekeeping.js";
import { ContainerLogRotation } from "./logs/log-rotation.js";
import { parseQuantity } from "../api/core/quantity.js";
import { NodeLease, leaseApi } from "./lease/lease.js";
import { LockContentionError, acquireLockFile, type HeldLock } from "./lock/lock-file.js";
import { ContainerLogs } from "./logs/container-logs.js";
import { agentMetrics } from "./metrics/metrics.js";
import { MirrorPods } from "./mirror-pods/mirror-pods.js";
import { NodeStatusManager, allocatableNumbers, type NodeFacts, type Signals } from "./node-status/node-status.js";
import { nodeFacts, nodeSignals } from "./node-status/readings.js";
import { runtimeLabels } from "./runtime-pod/labels.js";
import { hostRootAnnotation } from "../api/core/host-root.js";
import { connectRuntime } from "./runtime/connect.js";
import type { RegistriesConfig } from "./runtime/images/registries.js";
import { Shutdown } from "./shutdown/shutdown.js";
import { cgroupV2, checkSwap } from "./swap/swap.js";
import { SyncPipeline } from "./sync/sync-pipeline.js";
import { StatsCollector } from "./stats/collect.js";
import { ProbeMetrics, serveStats } from "./stats/endpoints.js";
import { startWatchdog } from "./watchdog/watchdog.js";

export interface NodeAgentOptions {
  /** The merged configuration (defaults when absent). */
  config?: NodeAgentConfig;
  /** Joined mode: a client, or a kubeconfig path to build one. Neither: standalone. */
  client?: RestClient;
  kubeconfig?: string;
  /** Default: the host name (or hostnameOverride), lower-cased. */
  nodeName?: string;
  hostnameOverride?: string;
  /** The node's InternalIP (upstream's --node-ip): where the API server reaches the agent's port, and pods' host IP. Default: the host's first non-loopback IPv4 address. */
  nodeIP?: string;
  /** Default /var/lib/nodeagent. */
  rootDir?: string;
  /** Default <rootDir>/pki. */
  certDir?: string;
  /** Default /var/log/pods. */
  podLogsDir?: string;
  /** Overrides config.containerRuntimeEndpoint; "" (or unset in both) runs the embedded runtime under <rootDir>/runtime. */
  runtimeEndpoint?: string;
  /**
   * On stop, stop the containers of every pod (default true, so embedders and
   * tests leave nothing behind). false leaves them running, as upstream's
   * agent does: the next agent on this root and runtime re-adopts them. The
   * commands (`orch server`, `orch nodeagent`) default to false.
   */
  stopContainersOnExit?: boolean;
  /**
   * The embedded runtime's host-root fallback (a container whose image it
   * cannot get runs on the host's root file system): "marked" lets only pods
   * annotated `<key domain>/host-root: "true"` use it (what Pod Security counts
   * as privileged), "any" every pod, "off" none (the pull fails). Default
   * "any" here, for embedders and tests; the commands default to "marked".
   */
  hostRootFallback?: "marked" | "any" | "off";
  /** Host paths hidden from host-root containers besides the agent's root dir, cert dir and kubeconfig (orch server adds its data dir). */
  hostRootMasks?: string[];
  /** Registry mirrors, credentials and TLS settings for the embedded runtime's pulls (loadRegistriesConfig; `--registry-config`). */
  registries?: RegistriesConfig;
  lockFile?: string;
  exitOnLockContention?: boolean;
  featureGates?: FeatureGates;
  naming?: Naming;
  signal?: AbortSignal;
  log?: (line: string) => void;
  /** The component's metrics registry (the agent's own metrics are not registered yet). */
  metrics?: MetricsRegistry;
  /** Test and benchmark knobs: shorter periods than upstream's. */
  tuning?: {
    plegPeriodMs?: number;
    crashLoopBackOff?: { initialMs: number; maxMs: number };
    leaseRenewIntervalMs?: number;
    housekeepingMs?: number;
    /** Bytes of swap the node has (default: /proc/swaps). */
    swapTotalBytes?: number;
  };
}

export interface NodeAgent {
  readonly nodeName: string;
  readonly runtimeEndpoint: string;
  readonly mode: "standalone" | "joined";
  /** Every pod the agent knows with its latest status. */
  pods(): { pod: Pod; status: PodStatus }[];
  healthy(): boolean;
  /** Answers GET /containerLogs/{namespace}/{pod}/{container} (the component server checks access first). */
  serveContainerLogs(req: Request, res: Response, url: URL): Promise<void>;
  /** Answers GET /stats/summary, /metrics/resource, /metrics/probes, /metrics/cadvisor and /metrics/statscollector (access checked first). */
  serveStats(req: Request, res: Response, url: URL): Promise<void>;
  /** Answers POST /checkpoint/{namespace}/{pod}/{container} (access checked first; 404 with gate ContainerCheckpoint off). */
  serveCheckpoint(req: Request, res: Response, url: URL): Promise<void>;
  /** Takes an Upgrade to /exec/{namespace}/{pod}/{container} (the component server checks access first). */
  serveExec(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void>;
  /** Takes an Upgrade to /attach/{namespace}/{pod}/{container} (the component server checks access first). */
  serveAttach(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void>;
  /** Takes an Upgrade to /portForward/{namespace}/{pod} (SPDY, or SPDY tunnelled in a WebSocket; access checked first). */
  servePortForward(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void>;
  /** Stops the loops, releases the lock; pods' containers are stopped only with stopContainersOnExit. */
  stop(): Promise<void>;
  /**
   * Settles once the agent has stopped, by stop() or the options' signal (undefined) or on its own
   * (why: another agent contended for the lock file under --exit-on-lock-contention), so its process can exit.
   */
  readonly done: Promise<string | undefined>;
}


/** When the node booted (the summary's node startTime), to the second. */
function bootTime(): string {
  return new Date(Math.floor((Date.now() - uptime() * 1000) / 1000) * 1000).toISOString().replace(/\.\d+Z$/, "Z");
}

/** Local directories of seed 001's table that the agent owns, with their modes. */
export function localDirectories(rootDir: string, certDir: string, podLogsDir: string): [string, number][] {
  return [
    [rootDir, 0o750],
    [join(rootDir, "pods"), 0o750],
    [join(rootDir, "plugins"), 0o750],
    [join(rootDir, "plugins_registry"), 0o750],
    [join(rootDir, "pod-resources"), 0o750],
    // Device plugins' registration socket and the device manager's checkpoint (0750 as upstream's device manager).
    [join(rootDir, "device-plugins"), 0o750],
    [join(rootDir, "seccomp"), 0o750],
    // Container checkpoints hold memory: root only.
    [join(rootDir, "checkpoints"), 0o700],
    [join(rootDir, "image_manager"), 0o700],
    [join(rootDir, "image_manager", "pulling"), 0o700],
    [join(rootDir, "image_manager", "pulled"), 0o700],
    [certDir, 0o700],
    [podLogsDir, 0o755],
  ];
}

/** The naming table of the server the agent joins (asked once at start), or the default one standing alone. */
async function namingOfCluster(options: NodeAgentOptions): Promise<Naming> {
  if (options.client) return namingOfServer(options.client);
  if (!options.kubeconfig) return namingFor();
  const probe = new RestClient(loadKubeconfig(options.kubeconfig));
  try {
    return await namingOfServer(probe);
  } finally {
    probe.close();
  }
}

export async function startNodeAgent(options: NodeAgentOptions = {}): Promise<NodeAgent> {
  const config = options.config ?? defaultConfig();
  // The table of the API server it joins (kube-node-lease, kubernetes.io/hostname on a k8s.io server), unless given.
  const naming = options.naming ?? (await namingOfCluster(options));
  const log = options.log ?? (() => {});
  const tuning = options.tuning ?? {};
  // Absolute: the runtime's socket URI and the containers' scripts must not depend on the working directory.
  const rootDir = resolve(options.rootDir ?? "/var/lib/nodeagent");
  const certDir = options.certDir ?? join(rootDir, "pki");
  const podLogsDir = options.podLogsDir ?? "/var/log/pods";
  const nodeName = options.nodeName ?? host.nodeHostname(options.hostnameOverride);
  const shutdown = new Shutdown({ log });
  const signal = shutdown.signal;

  // Seed 001, "Swap behavior setting": refuse to start before touching anything.
  const swapBytes = tuning.swapTotalBytes ?? host.swapTotalBytes();
  checkSwap({ failSwapOn: config.failSwapOn, swapTotalBytes: swapBytes });

  try {
    if (options.lockFile) {
      const lock = await takeLockFile({ path: options.lockFile, exitOnContention: options.exitOnLockContention ?? false, shutdown, log, ...(options.signal ? { signal: options.signal } : {}) });
      shutdown.defer(() => lock.release());
    }
    for (const [dir, mode] of localDirectories(rootDir, certDir, podLogsDir)) {
      mkdirSync(dir, { recursive: true, mode });
      chmodSync(dir, mode);
    }
    const labels = runtimeLabels(naming);
    const runtime = await connectRuntime({
      endpoint: options.runtimeEndpoint ?? config.containerRuntimeEndpoint,
      ...(config.imageServiceEndpoint ? { imageEndpoint: config.imageServiceEndpoint } : {}),
      rootDir,
      stopContainersOnExit: options.stopContainersOnExit ?? true,
      hostRoot: {
        fallback: options.hostRootFallback ?? "any",
        marker: hostRootAnnotation(naming.keyDomain),
        masks: [rootDir, resolve(certDir), ...(options.kubeconfig ? [resolve(options.kubeconfig)] : []), ...(options.hostRootMasks ?? []).map((p) => resolve(p))],
      },
      podUidLabel: labels.podUid,
      ...(options.registries ? { registries: options.registries } : {}),
      shutdown,
      log,
    });

    // Joined mode: a client from the options or the kubeconfig.
    let client = options.client;
    if (!client && options.kubeconfig) {
      const own = new RestClient(loadKubeconfig(options.kubeconfig), { userAgent: `${componentName(naming, "nodeagent")}/${nodeName}`, ...(options.metrics ? { metrics: options.metrics } : {}) });
      shutdown.defer(() => own.close());
      client = own;
    }

    const hostIP = options.nodeIP || host.primaryAddress();
    const gates = options.featureGates ?? defaultFeatureGates();
    // Device plugins register here; their devices are extended resources of the node (devices/device-manager.ts).
    let sync: SyncPipeline | undefined;
    let nodeStatus: NodeStatusManager | undefined;
    const devices = new DeviceManager({
      dir: join(rootDir, "device-plugins"),
      agentName: naming.agentName,
      nativeDomain: naming.keyDomain,
      activePods: () => sync?.workers.activePods() ?? [],
      onChange: () => void nodeStatus?.sync(false).catch((err: Error) => log(`node status: ${err.message}`)),
      log,
    });
    await devices.start();
    shutdown.defer(() => devices.stop());
    const facts = () => ({ ...nodeFacts({ nodeName, hostnameOverride: options.hostnameOverride, hostIP, rootDir, config, runtimeVersion: `${runtime.name}://${runtime.version}`, gates }), extended: devices.resources() });
    const startFacts = facts();
    const probeMetrics = new ProbeMetrics();
    sync = new SyncPipeline({
      runtime: runtime.client,
      runtimeName: runtime.name,
      labels,
      nodeName,
      hostIP,
      rootDir,
      podLogsDir,
      naming,
      config,
      node: { memoryBytes: startFacts.memoryBytes, swapBytes, cpu: startFacts.cpu, cgroupV2: cgroupV2() },
      // Extended resources are the device manager's to grant when containers are created (it knows the allocations a restart keeps).
      allocatable: allocatableNumbers({ ...startFacts, extended: undefined }),
      ...(client ? { client } : {}),
      metrics: agentMetrics(options.metrics, naming, nodeName),
      probeResults: (r) => probeMetrics.record(r),
      devices,
      ...(options.metrics ? { registry: options.metrics } : {}),
      tuning,
      log,
    });
    shutdown.defer(() => sync.stop());

    if (client) {
      const signals = () => nodeSignals({ runtime: runtime.client, rootDir, pleg: sync.pleg });
      nodeStatus = await joinCluster({ client, naming, nodeName, config, facts, signals, sync, periodMs: tuning.housekeepingMs ?? 10_000, ...(tuning.leaseRenewIntervalMs ? { leaseRenewIntervalMs: tuning.leaseRenewIntervalMs } : {}), shutdown, log });
    }
    // The local pod-info interface (gate PodsAPI): serving from now on, answering once the state is rebuilt.
    if (gates.enabled("PodsAPI")) {
      const s = sync;
      const podInfo = new PodInfoServer({ socket: join(rootDir, "pods", `${naming.agentName}.sock`), pods: () => s.statuses.all(), subscribe: (fn) => s.statuses.subscribe(fn), log });
      await podInfo.start();
      shutdown.defer(() => podInfo.stop());
      void untilInitialized(s, signal).then(() => podInfo.markInitialized(), () => {});
    }
    sync.start(signal);
    const housekeeping = new Housekeeping({ runtime: sync.pleg, workers: sync.workers, syncer: sync.syncer, housekeepingMs: tuning.housekeepingMs ?? 10_000, syncFrequencyMs: config.syncFrequency, log });
    housekeeping.start();
    shutdown.defer(() => housekeeping.stop());
    const logRotation = new ContainerLogRotation({ runtime: runtime.client, maxSizeBytes: parseQuantity(config.containerLogMaxSize) ?? -1, maxFiles: config.containerLogMaxFiles, intervalMs: config.containerLogMonitorInterval || 10_000, log });
    logRotation.start();
    shutdown.defer(() => logRotation.stop());

    const healthy = () => sync.pleg.healthy().ok;
    const known = () => sync.known();
    const logs = new ContainerLogs({ pods: known, runtime: runtime.client });
    const exec = new ContainerExec({ pods: known, runtime: runtime.client });
    const attach = new ContainerAttach({ pods: known, runtime: runtime.client });
    shutdown.defer(() => exec.close(), () => attach.close());
    const portForward = new PortForward({ pods: known, runtime: runtime.client, log });
    shutdown.defer(() => portForward.close());
    const checkpoint = new ContainerCheckpoint({ pods: known, runtime: runtime.client, dir: join(rootDir, "checkpoints"), enabled: gates.enabled("ContainerCheckpoint") });
    startWatchdog({ healthy, signal, log });
    const podStartTimes = () => new Map(sync.statuses.all().flatMap(({ pod, status }) => (status.startTime ? [[pod.metadata.uid!, status.startTime] as const] : [])));
    const stats = { collector: new StatsCollector({ runtime: runtime.client, rootDir, podLogsDir, podStartTimes }), probes: probeMetrics, nodeName, nodeStartTime: bootTime(), log };

    log(`nodeagent: node ${nodeName} running ${client ? "joined" : "standalone"} on ${runtime.name} ${runtime.version} (${runtime.endpoint}); static pods from ${config.staticPodPath}`);
    const done = shutdown.arm(options.signal);
    return {
      nodeName,
      runtimeEndpoint: runtime.endpoint,
      mode: client ? "joined" : "standalone",
      pods: () => sync.statuses.all(),
      healthy,
      serveContainerLogs: (req, res, url) => logs.serve(req, res, url),
      serveStats: (req, res, url) => serveStats(stats, req, res, url),
      serveCheckpoint: (req, res, url) => checkpoint.serve(req, res, url),
      serveExec: (req, socket, head, url) => exec.upgrade(req, socket, head, url),
      serveAttach: (req, socket, head, url) => attach.upgrade(req, socket, head, url),
      servePortForward: (req, socket, head, url) => portForward.upgrade(req, socket, head, url),
      stop: () => shutdown.stop(),
      done,
    };
  } catch (err) {
    await shutdown.abandon();
    // Asked for the lock while still starting: the start failed only because we gave the lock up.
    if (shutdown.endedBecause !== undefined) throw new LockContentionError(shutdown.endedBecause, true);
    throw err;
  }
}

/** Resolves once the PLEG has relisted the runtime and every pod the agent runs has a status again (after a start or restart). */
async function untilInitialized(sync: SyncPipeline, signal: AbortSignal): Promise<void> {
  for (;;) {
    signal.throwIfAborted();
    if (sync.pleg.healthy().ok && sync.workers.activePods().every((p) => sync.statuses.get(p.metadata.uid ?? "") !== undefined)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Takes the lock file; with exitOnContention (upstream's --exit-on-lock-contention) the agent waits for it, and ends when another agent asks for it. */
async function takeLockFile(o: { path: string; exitOnContention: boolean; shutdown: Shutdown; signal?: AbortSignal; log: (line: string) => void }): Promise<HeldLock> {
  o.log(`nodeagent: acquiring the lock file ${o.path}${o.exitOnContention ? " (waiting while another agent holds it)" : ""}`);
  return acquireLockFile({
    path: o.path,
    ...(o.exitOnContention
      ? {
          // Like upstream, an agent with the flag waits for the lock rather than failing, and gives it up when asked.
          wait: true,
          onContention: () => {
            const why = o.shutdown.endedBecause ?? `another agent asked for the lock file ${o.path} (--exit-on-lock-contention)`;
            o.log(`nodeagent: ${why}; exiting`);
            o.shutdown.end(why);
          },
        }
      : {}),
    ...(o.signal ? { signal: o.signal } : {}),
    log: o.log,
  });
}

interface JoinOptions {
  client: RestClient;
  naming: Naming;
  nodeName: string;
  config: NodeAgentConfig;
  facts: () => NodeFacts;
  signals: () => Promise<Signals>;
  sync: SyncPipeline;
  /** How often missing mirror pods are created. */
  periodMs: number;
  leaseRenewIntervalMs?: number;
  shutdown: Shutdown;
  log: (line: string) => void;
}

/** Joined mode (seed 001, "What the service does" 6-7): the Node and its status, its lease, the pods bound to it, and static pods' mirrors; resolves once the pods are listed. */
async function joinCluster(o: JoinOptions): Promise<NodeStatusManager> {
  const { client, naming, nodeName, config, sync, shutdown, log } = o;
  const signal = shutdown.signal;
  const nodeStatus = new NodeStatusManager({
    client,
    naming,
    facts: o.facts,
    signals: o.signals,
    updateFrequencyMs: config.nodeStatusUpdateFrequency,
    reportFrequencyMs: config.nodeStatusReportFrequency,
    log,
  });
  await nodeStatus.register();
  void nodeStatus.run(signal);
  const lease = new NodeLease({
    api: leaseApi(client, naming),
    nodeName,
    namespace: naming.nodeLeaseNamespace,
    leaseDurationSeconds: config.nodeLeaseDurationSeconds,
    apiVersion: `${naming.coordinationGroup}/v1`,
    nodeUid: () => nodeStatus.uid,
    ...(o.leaseRenewIntervalMs ? { renewIntervalMs: o.leaseRenewIntervalMs } : {}),
    log,
  });
  void lease.run(signal);
  const informer = sync.followApi(client, signal);
  const mirrors = new MirrorPods({
    client,
    staticPods: () => sync.syncLoop.staticPods(),
    inApi: (key) => informer.get(key),
    annotations: configAnnotations(naming.keyDomain),
    nodeName,
    nodeUid: () => nodeStatus.uid,
    onCreated: (uid) => sync.workers.wake(uid),
    periodMs: o.periodMs,
    log,
  });
  mirrors.start();
  shutdown.defer(() => mirrors.stop());
  await informer.waitForSync(signal);
  return nodeStatus;
}
