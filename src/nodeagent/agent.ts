// startNodeAgent: the node agent as a component (seed 001). It checks swap,
// takes the lock file, creates its local files, connects to the runtime (the
// embedded one when no endpoint is configured), and runs the sync loop, pod
// workers, PLEG and probes; joined to a cluster it also registers the Node,
// keeps its status and lease fresh, follows its pods and mirrors static pods.

import { podContainers } from "../api/core/pod-containers.js";
import { chmodSync, mkdirSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { join, resolve } from "node:path";
import type { ConfigMap, Pod, Secret } from "../api/core/types.js";
import { namingFor, type Naming } from "../api/naming.js";
import { Informer, RestClient, leaseResource, loadKubeconfig, type ResourceRef } from "../client/index.js";
import { defaultFeatureGates, versionInfo, type FeatureGates } from "../component/index.js";
import type { MetricsRegistry } from "../component/metrics/index.js";
import { isApiError } from "../machinery/index.js";
import { defaultConfig, type NodeAgentConfig } from "./config/index.js";
import { CriClient, type InProcessRuntime } from "./cri/index.js";
import type { ObjectSource } from "./env/env.js";
import { NO_OBJECTS } from "./env/env.js";
import * as host from "./host/host.js";
import { NodeLease } from "./lease/lease.js";
import type { Lease } from "../api/coordination/types.js";
import { LockContentionError, acquireLockFile, type HeldLock } from "./lock/lock-file.js";
import { NodeStatusManager, allocatableNumbers, type NodeFacts, type Signals } from "./node-status/node-status.js";
import { Pleg } from "./pleg/pleg.js";
import { ContainerLogs } from "./logs/container-logs.js";
import { ContainerExec } from "./exec/container-exec.js";
import { ContainerAttach } from "./exec/container-attach.js";
import type { Request, Response } from "../component/endpoints.js";
import { agentMetrics } from "./metrics/metrics.js";
import { PodWorkers, type WorkerState } from "./pod-workers/pod-workers.js";
import { Prober } from "./probes/prober.js";
import { NO_POD_EVENTS, podEvents } from "./events/pod-events.js";
import { Backoff } from "./runtime-manager/backoff.js";
import { runtimeLabels } from "./runtime-manager/labels.js";
import { PodSyncer } from "./runtime-manager/pod-syncer.js";
import { startEmbeddedRuntime, type EmbeddedRuntime } from "./runtime/embedded/index.js";
import { StaticPodSource, configAnnotations } from "./sources/static-pods.js";
import { buildPodStatus, rfc3339 } from "./status/pod-status.js";
import { PODS, StatusManager } from "./status/status-manager.js";
import { cgroupV2, checkSwap } from "./swap/swap.js";
import { SyncLoop } from "./sync/sync-loop.js";
import { startWatchdog } from "./watchdog/watchdog.js";
import type { PodStatus } from "../api/core/types.js";

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
  /** Takes an Upgrade to /exec/{namespace}/{pod}/{container} (the component server checks access first). */
  serveExec(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void>;
  /** Takes an Upgrade to /attach/{namespace}/{pod}/{container} (the component server checks access first). */
  serveAttach(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void>;
  /** Stops the loops, releases the lock; pods' containers are stopped only with stopContainersOnExit. */
  stop(): Promise<void>;
  /**
   * Settles once the agent has stopped, by stop() or the options' signal (undefined) or on its own
   * (why: another agent contended for the lock file under --exit-on-lock-contention), so its process can exit.
   */
  readonly done: Promise<string | undefined>;
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
    [join(rootDir, "image_manager"), 0o700],
    [join(rootDir, "image_manager", "pulling"), 0o700],
    [join(rootDir, "image_manager", "pulled"), 0o700],
    [certDir, 0o700],
    [podLogsDir, 0o755],
  ];
}

const CONFIGMAPS: ResourceRef = { group: "", version: "v1", resource: "configmaps", namespaced: true };
const SECRETS: ResourceRef = { group: "", version: "v1", resource: "secrets", namespaced: true };

function apiObjects(client: RestClient): ObjectSource {
  const get = async <T,>(ref: ResourceRef, namespace: string, name: string): Promise<T | undefined> => {
    try {
      return (await client.get(ref, { namespace, name })) as T;
    } catch (err) {
      if (isApiError(err) && err.code === 404) return undefined;
      throw err;
    }
  };
  return {
    configMap: (ns, name) => get<ConfigMap>(CONFIGMAPS, ns, name),
    secret: async (ns, name) => {
      const s = await get<Secret>(SECRETS, ns, name);
      if (!s) return undefined;
      return Object.fromEntries([
        ...Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]),
        ...Object.entries((s as { stringData?: Record<string, string> }).stringData ?? {}),
      ]);
    },
  };
}

export async function startNodeAgent(options: NodeAgentOptions = {}): Promise<NodeAgent> {
  const config = options.config ?? defaultConfig();
  const naming = options.naming ?? namingFor();
  const log = options.log ?? (() => {});
  const gates = options.featureGates ?? defaultFeatureGates();
  const tuning = options.tuning ?? {};
  // Absolute: the runtime's socket URI and the containers' scripts must not depend on the working directory.
  const rootDir = resolve(options.rootDir ?? "/var/lib/nodeagent");
  const certDir = options.certDir ?? join(rootDir, "pki");
  const podLogsDir = options.podLogsDir ?? "/var/log/pods";
  const stopContainersOnExit = options.stopContainersOnExit ?? true;
  const nodeName = options.nodeName ?? host.nodeHostname(options.hostnameOverride);
  const stopping = new AbortController();
  const signal = stopping.signal;
  const cleanups: (() => Promise<void> | void)[] = [];
  /** Set when the agent stops on its own; `done` settles with it. */
  let endedBecause: string | undefined;
  const cleanup = async () => {
    for (const c of cleanups.splice(0).reverse()) {
      // A step that hangs (a runtime waiting on calls) must not keep the agent from stopping.
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<void>((resolve) => (timer = setTimeout(() => { log("nodeagent: stopping: a cleanup step took over 10 s; going on"); resolve(); }, 10_000)));
      await Promise.race([Promise.resolve(c()).catch((err: Error) => log(`nodeagent: stopping: ${err.message}`)), limit]);
      clearTimeout(timer);
    }
  };

  // Seed 001, "Swap behavior setting": refuse to start before touching anything.
  const swapBytes = tuning.swapTotalBytes ?? host.swapTotalBytes();
  checkSwap({ failSwapOn: config.failSwapOn, swapTotalBytes: swapBytes });

  try {
    if (options.lockFile) {
      log(`nodeagent: acquiring the lock file ${options.lockFile}${options.exitOnLockContention ? " (waiting while another agent holds it)" : ""}`);
      const lock: HeldLock = await acquireLockFile({
        path: options.lockFile,
        ...(options.exitOnLockContention
          ? {
              // Like upstream, an agent with the flag waits for the lock rather than failing, and gives it up when asked.
              wait: true,
              onContention: () => {
                endedBecause ??= `another agent asked for the lock file ${options.lockFile} (--exit-on-lock-contention)`;
                log(`nodeagent: ${endedBecause}; exiting`);
                stopping.abort();
              },
            }
          : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      cleanups.push(() => lock.release());
    }
    for (const [dir, mode] of localDirectories(rootDir, certDir, podLogsDir)) {
      mkdirSync(dir, { recursive: true, mode });
      chmodSync(dir, mode);
    }

    // The runtime: a configured CRI socket, or the embedded runtime.
    let endpoint = options.runtimeEndpoint ?? config.containerRuntimeEndpoint;
    let inProcess: InProcessRuntime | undefined;
    if (!endpoint) {
      const embedded: EmbeddedRuntime = await startEmbeddedRuntime({ root: join(rootDir, "runtime"), log });
      cleanups.push(() => embedded.close({ stopContainers: stopContainersOnExit }));
      endpoint = embedded.endpoint;
      // Called in this process, without the socket (which stays served for crictl and others).
      inProcess = embedded.inProcess;
    }
    const ownRuntime = inProcess !== undefined;
    const runtime = new CriClient({ endpoint, ...(inProcess ? { inProcess } : {}), ...(config.imageServiceEndpoint ? { imageEndpoint: config.imageServiceEndpoint } : {}) });
    cleanups.push(() => runtime.close());
    // (Cleanups run last first: this one before the client closes.) The embedded runtime stops its own on close.
    if (stopContainersOnExit && !ownRuntime) cleanups.push(() => stopPodContainers(runtime, runtimeLabels(naming).podUid));
    await runtime.waitForReady(30_000);
    const version = await runtime.version({ version: "v1" });
    const runtimeName = version.runtimeName;

    // Joined mode: a client from the options or the kubeconfig.
    let client = options.client;
    if (!client && options.kubeconfig) {
      const own = new RestClient(loadKubeconfig(options.kubeconfig), { userAgent: `orch-${naming.agentName}/${nodeName}`, ...(options.metrics ? { metrics: options.metrics } : {}) });
      cleanups.push(() => own.close());
      client = own;
    }

    const labels = runtimeLabels(naming);
    const hostIP = options.nodeIP || host.primaryAddress();
    const facts = (): NodeFacts => ({
      nodeName,
      hostname: host.nodeHostname(options.hostnameOverride),
      internalIP: hostIP,
      ...(host.isPrivateIPv4(hostIP) ? {} : { externalIP: hostIP }),
      cpu: host.cpuCount(),
      memoryBytes: host.memoryTotalBytes(),
      ephemeralStorageBytes: host.fsStats(rootDir).capacityBytes,
      maxPods: config.maxPods,
      evictionHard: config.evictionHard,
      runtimeVersion: `${runtimeName}://${version.runtimeVersion}`,
      agentVersion: versionInfo().gitVersion,
      port: config.port,
      declaredFeatures: gates.list().filter((g) => g.enabled && g.stage !== "GA" && !g.name.startsWith("All")).map((g) => g.name),
    });
    const nodeFacts = facts();

    let workers!: PodWorkers;
    const events = client ? podEvents({ client, component: naming.agentName, host: nodeName, log }) : NO_POD_EVENTS;
    const prober = new Prober({ runtime, onChange: (uid) => workers.wake(uid), onEvent: (e) => events.record(e.pod, e.container, "Warning", e.reason, e.message), log });
    const syncer = new PodSyncer({
      runtime,
      labels,
      rootDir,
      podLogsDir,
      keyDomain: naming.keyDomain,
      objects: client ? apiObjects(client) : NO_OBJECTS,
      prober,
      hostIP: () => hostIP,
      clusterDNS: config.clusterDNS,
      clusterDomain: config.clusterDomain,
      swapBehavior: config.memorySwap.swapBehavior,
      node: { memoryBytes: nodeFacts.memoryBytes, swapBytes, cpu: nodeFacts.cpu, cgroupV2: cgroupV2() },
      events,
      backoff: new Backoff(tuning.crashLoopBackOff ? { initialMs: tuning.crashLoopBackOff.initialMs, maxMs: tuning.crashLoopBackOff.maxMs } : {}),
      log,
    });
    const statuses = new StatusManager({ ...(client ? { client } : {}), log });
    const startTimes = new Map<string, string>();
    const metrics = agentMetrics(options.metrics, naming, nodeName);
    /** When the agent first saw each pod, until it ran (pod start duration). */
    const firstSeen = new Map<string, number>();
    const annotations = configAnnotations(naming.keyDomain);

    const writeStatus = (pod: Pod): void => {
      const uid = pod.metadata.uid!;
      if (!startTimes.has(uid)) {
        startTimes.set(uid, pod.status?.startTime ?? rfc3339(new Date()));
        firstSeen.set(uid, performance.now());
      }
      const spec = (name: string) => podContainers(pod.spec).find((c) => c.name === name) ?? {};
      const status = buildPodStatus({
        pod,
        runtime: syncer.lastRuntime(uid),
        waiting: syncer.waiting(uid),
        ready: (name, id) => prober.ready(uid, name, id, spec(name)),
        started: (name, id) => prober.started(uid, name, id, spec(name)),
        hostIP,
        startTime: startTimes.get(uid)!,
        runtimeName,
        now: new Date(),
      });
      statuses.set(pod, status);
      const seen = firstSeen.get(uid);
      if (seen !== undefined && status.phase === "Running") {
        metrics.podStarted((performance.now() - seen) / 1000);
        firstSeen.delete(uid);
      }
    };

    let syncLoop!: SyncLoop;
    workers = new PodWorkers({
      log,
      sync: {
        syncPod: (pod) => syncer.syncPod(pod),
        syncTerminatingPod: async (pod, grace) => {
          await syncer.syncTerminatingPod(pod, grace);
        },
        syncTerminatedPod: (pod, o) => syncer.syncTerminatedPod(pod, o),
        afterSync: async (pod: Pod, _state: WorkerState) => writeStatus(pod),
        onRemoved: (pod) => {
          startTimes.delete(pod.metadata.uid!);
          firstSeen.delete(pod.metadata.uid!);
          const fromApi = !!client && !syncLoop.isStatic(pod.metadata.uid!) && !!pod.metadata.deletionTimestamp;
          void statuses.remove(pod, { deleteFromApi: fromApi });
        },
      },
    });
    cleanups.push(() => {
      workers.stop();
      prober.stopAll();
      statuses.close();
    });

    const nodeStatus = client
      ? new NodeStatusManager({
          client,
          naming,
          facts,
          signals: () => signals(),
          updateFrequencyMs: config.nodeStatusUpdateFrequency,
          reportFrequencyMs: config.nodeStatusReportFrequency,
          log,
        })
      : undefined;
    const allocatable = allocatableNumbers(nodeFacts);
    syncLoop = new SyncLoop({
      workers,
      allocatable: () => allocatable,
      mirrorAnnotation: annotations.mirror,
      onRejected: (pod, r) => {
        statuses.set(pod, { phase: "Failed", reason: r.reason, message: `Pod was rejected: ${r.message}`, ...(pod.status?.qosClass ? { qosClass: pod.status.qosClass } : {}) });
      },
      log,
    });

    const pleg = new Pleg({ runtime, labels, onEvent: (e) => workers.wake(e.uid), onRelist: (seconds, ready) => { metrics.relisted(seconds); metrics.runningPods(ready); }, ...(tuning.plegPeriodMs ? { periodMs: tuning.plegPeriodMs } : {}), log });
    const signals = async (): Promise<Signals> => {
      let runtimeReady = { ok: false, message: "container runtime status check may not have completed yet" };
      let networkReady = { ok: false, message: "container runtime network not ready" };
      try {
        const st = await runtime.status({});
        const cond = (type: string) => st.status?.conditions.find((c) => c.type === type);
        const r = cond("RuntimeReady");
        const n = cond("NetworkReady");
        runtimeReady = { ok: r?.status === true, message: `container runtime not ready: RuntimeReady=false reason:${r?.reason ?? ""} message:${r?.message ?? ""}` };
        networkReady = { ok: n?.status === true, message: `container runtime network not ready: NetworkReady=false reason:${n?.reason ?? ""} message:${n?.message ?? ""}` };
      } catch (err) {
        runtimeReady = { ok: false, message: `container runtime is down: ${(err as Error).message}` };
      }
      return {
        memoryAvailableBytes: host.memoryAvailableBytes(),
        memoryTotalBytes: host.memoryTotalBytes(),
        fs: host.fsStats(rootDir),
        pids: host.pidStats(),
        runtimeReady,
        networkReady,
        pleg: pleg.healthy(),
      };
    };

    // Joined mode: the Node, its lease, and the pods bound to it.
    if (client && nodeStatus) {
      await nodeStatus.register();
      void nodeStatus.run(signal);
      const lease = new NodeLease({
        api: leaseApi(client, naming),
        nodeName,
        namespace: naming.nodeLeaseNamespace,
        leaseDurationSeconds: config.nodeLeaseDurationSeconds,
        apiVersion: `${naming.coordinationGroup}/v1`,
        nodeUid: () => nodeStatus.uid,
        ...(tuning.leaseRenewIntervalMs ? { renewIntervalMs: tuning.leaseRenewIntervalMs } : {}),
        log,
      });
      void lease.run(signal);
      const informer = new Informer<Pod>({ client, resource: PODS, fieldSelector: `spec.nodeName=${nodeName}`, log, ...(options.metrics ? { metrics: options.metrics } : {}) });
      informer.addEventHandler({
        onAdd: (p) => syncLoop.apiPodChanged(p),
        onUpdate: (_o, p) => syncLoop.apiPodChanged(p),
        onDelete: (p) => syncLoop.apiPodDeleted(p),
      });
      void informer.run(signal);
      // Mirror pods make static pods visible in the API (upstream's mirror client).
      const mirrors = async () => {
        for (const pod of syncLoop.staticPods()) {
          if (informer.get(`${pod.metadata.namespace}/${pod.metadata.name}`)) continue;
          const mirror: Pod = {
            apiVersion: "v1",
            kind: "Pod",
            metadata: {
              name: pod.metadata.name!,
              namespace: pod.metadata.namespace!,
              labels: pod.metadata.labels ?? {},
              annotations: { ...pod.metadata.annotations, [annotations.mirror]: pod.metadata.annotations?.[annotations.hash] ?? "" },
              ownerReferences: nodeStatus.uid ? [{ apiVersion: "v1", kind: "Node", name: nodeName, uid: nodeStatus.uid, controller: true }] : [],
            },
            spec: pod.spec!,
          };
          try {
            await client!.create(PODS, mirror);
            // Its status is written on the next pass of the static pod's worker.
            workers.wake(pod.metadata.uid!);
          } catch (err) {
            if (!isApiError(err) || err.code !== 409) log(`mirror pod ${pod.metadata.namespace}/${pod.metadata.name}: ${(err as Error).message}`);
          }
        }
      };
      const mirrorTimer = setInterval(() => void mirrors(), tuning.housekeepingMs ?? 10_000);
      cleanups.push(() => clearInterval(mirrorTimer));
      await informer.waitForSync(signal);
    }

    // Static pods, in both modes.
    const staticSource = new StaticPodSource({
      dir: config.staticPodPath,
      nodeName,
      keyDomain: naming.keyDomain,
      periodMs: config.fileCheckFrequency,
      onChange: (pods) => syncLoop.setStaticPods(pods),
      log,
    });
    staticSource.start(signal);
    pleg.start(signal);

    // Housekeeping: a full resync every syncFrequency, and runtime pods no source wants are removed.
    const housekeeping = setInterval(async () => {
      for (const uid of pleg.runtimeUids()) {
        if (workers.has(uid)) continue;
        const orphan: Pod = { apiVersion: "v1", kind: "Pod", metadata: { uid, name: uid, namespace: "" } };
        await syncer.syncTerminatingPod(orphan, 0).then(() => syncer.syncTerminatedPod(orphan, { remove: true })).catch((err: Error) => log(`housekeeping: pod ${uid}: ${err.message}`));
      }
    }, tuning.housekeepingMs ?? 10_000);
    const resync = setInterval(() => {
      for (const p of workers.pods()) workers.wake(p.metadata.uid!);
    }, config.syncFrequency);
    cleanups.push(() => {
      clearInterval(housekeeping);
      clearInterval(resync);
    });
    const healthy = () => pleg.healthy().ok;
    // Pods with a status, and those just admitted whose first status is not computed yet (their containers are "not available").
    const known = () => {
      const withStatus = statuses.all();
      const seen = new Set(withStatus.map((e) => e.pod.metadata.uid));
      return [...withStatus, ...workers.pods().filter((p) => !seen.has(p.metadata.uid)).map((pod) => ({ pod, status: {} }))];
    };
    const logs = new ContainerLogs({ pods: known, runtime });
    const exec = new ContainerExec({ pods: known, runtime });
    const attach = new ContainerAttach({ pods: known, runtime });
    cleanups.push(() => exec.close(), () => attach.close());
    startWatchdog({ healthy, signal, log });

    let stopped: Promise<void> | undefined;
    const stop = () => {
      stopped ??= (async () => {
        // `stopped` is set before the abort listeners (which call stop again) run.
        await Promise.resolve();
        stopping.abort();
        await cleanup();
      })();
      return stopped;
    };
    options.signal?.addEventListener("abort", () => void stop(), { once: true });
    signal.addEventListener("abort", () => void stop(), { once: true });
    log(`nodeagent: node ${nodeName} running ${client ? "joined" : "standalone"} on ${runtimeName} ${version.runtimeVersion} (${endpoint}); static pods from ${config.staticPodPath}`);
    return {
      nodeName,
      runtimeEndpoint: endpoint,
      mode: client ? "joined" : "standalone",
      pods: () => statuses.all(),
      healthy,
      serveContainerLogs: (req, res, url) => logs.serve(req, res, url),
      serveExec: (req, socket, head, url) => exec.upgrade(req, socket, head, url),
      serveAttach: (req, socket, head, url) => attach.upgrade(req, socket, head, url),
      stop,
      done: new Promise((resolve) => {
        const settle = () => void stop().then(() => resolve(endedBecause));
        if (signal.aborted) settle();
        else signal.addEventListener("abort", settle, { once: true });
      }),
    };
  } catch (err) {
    stopping.abort();
    await cleanup();
    // Asked for the lock while still starting: the start failed only because we gave the lock up.
    if (endedBecause !== undefined) throw new LockContentionError(endedBecause, true);
    throw err;
  }
}

/** Stops every running container of the agent's pods (those with its pod UID label) at once, as the embedded runtime's close does. */
async function stopPodContainers(runtime: CriClient, podUidLabel: string): Promise<void> {
  const { containers } = await runtime.listContainers({ filter: { id: "", podSandboxId: "", state: { state: "CONTAINER_RUNNING" }, labelSelector: {} } });
  const ours = containers.filter((c) => c.labels[podUidLabel] !== undefined);
  await Promise.all(ours.map((c) => runtime.stopContainer({ containerId: c.id, timeout: 0 }).catch(() => {})));
}

function leaseApi(client: RestClient, naming: Naming) {
  const ref = leaseResource(naming);
  return {
    get: (namespace: string, name: string) => client.get<Lease>(ref, { namespace, name }),
    create: (lease: Lease) => client.create<Lease>(ref, lease),
    update: (lease: Lease) => client.update<Lease>(ref, lease),
  };
}
