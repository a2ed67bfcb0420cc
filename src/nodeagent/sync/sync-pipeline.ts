// Seed 001's sync loop, assembled ("What the service does" 2-5): config
// sources (the static pod directory; joined, the API's pods bound to this node)
// feed the SyncLoop, which merges them, admits new pods and hands each to its
// pod worker; a worker's pass runs the PodSyncer against the runtime and ends
// with the pod's status. PLEG relists and probe changes wake workers. Mirror
// pods and housekeeping run beside it (mirror-pods/, housekeeping/).

import type { Pod, PodStatus } from "../../api/core/types.js";
import { configAnnotations, type Naming } from "../../machinery/naming.js";
import { Informer, type RestClient } from "../../client/index.js";
import type { MetricsRegistry } from "../../component/metrics/index.js";
import type { NodeAgentConfig } from "../config/index.js";
import type { CriClient } from "../cri/index.js";
import { apiObjects } from "../env/api-objects.js";
import { NO_OBJECTS } from "../env/env.js";
import { NO_POD_EVENTS, podEvents } from "../events/pod-events.js";
import type { AgentMetrics } from "../metrics/metrics.js";
import { Pleg } from "../pleg/pleg.js";
import { PodWorkers } from "../pod-workers/pod-workers.js";
import { Prober, type ProbeResult } from "../probes/prober.js";
import { Backoff } from "../runtime-manager/backoff.js";
import type { RuntimeLabels } from "../runtime-pod/labels.js";
import { PodSyncer, type PodSyncerOptions } from "../runtime-manager/pod-syncer.js";
import { StaticPodSource } from "../sources/static-pods.js";
import { PODS, StatusManager } from "../status/status-manager.js";
import { PodStatusWriter } from "./status-writer.js";
import { activeDeadlineRemainingMs, DEADLINE_EXCEEDED, DEADLINE_MESSAGE } from "../status/active-deadline.js";
import { SyncLoop } from "./sync-loop.js";
import type { DeviceAdmission } from "../admission/admission.js";

export interface SyncPipelineOptions {
  runtime: CriClient;
  /** As the runtime's Version names it (containerIDs are "NAME://ID"). */
  runtimeName: string;
  labels: RuntimeLabels;
  nodeName: string;
  hostIP: string;
  rootDir: string;
  podLogsDir: string;
  naming: Naming;
  config: Pick<NodeAgentConfig, "clusterDNS" | "clusterDomain" | "resolvConf" | "memorySwap" | "staticPodPath" | "fileCheckFrequency">;
  /** What containers may know of the node (resource fields, swap limits). */
  node: { memoryBytes: number; swapBytes: number; cpu: number; cgroupV2: boolean };
  /** What admission counts new pods against. */
  allocatable: ReadonlyMap<string, number>;
  /** Joined mode: events, ConfigMaps and Secrets, status writes and the API's pods. */
  client?: RestClient;
  metrics: AgentMetrics;
  /** Each probe run (the agent's /metrics/probes). */
  probeResults?: (result: ProbeResult) => void;
  /** The component's registry, for the pods informer. */
  registry?: MetricsRegistry;
  /** Device plugins' devices: allocated at admission, handed to containers at creation (devices/device-manager.ts). */
  devices?: PodSyncerOptions["devices"] & DeviceAdmission;
  tuning: { plegPeriodMs?: number; crashLoopBackOff?: { initialMs: number; maxMs: number } };
  log: (line: string) => void;
}

export class SyncPipeline {
  readonly syncLoop: SyncLoop;
  readonly workers: PodWorkers;
  readonly syncer: PodSyncer;
  readonly statuses: StatusManager;
  readonly pleg: Pleg;
  readonly #o: SyncPipelineOptions;
  readonly #prober: Prober;
  /** Stops what the pipeline watches on its own (the services for service links) at stop(). */
  readonly #stopping = new AbortController();

  constructor(options: SyncPipelineOptions) {
    this.#o = options;
    const { runtime, client, naming, config, log } = options;
    const events = client ? podEvents({ client, component: naming.agentName, host: options.nodeName, log }) : NO_POD_EVENTS;
    this.#prober = new Prober({ runtime, onChange: (uid) => this.workers.wake(uid), onEvent: (e) => events.record(e.pod, e.container, "Warning", e.reason, e.message), ...(options.probeResults ? { onResult: options.probeResults } : {}), log });
    this.syncer = new PodSyncer({
      runtime,
      labels: options.labels,
      rootDir: options.rootDir,
      podLogsDir: options.podLogsDir,
      keyDomain: naming.keyDomain,
      objects: client ? apiObjects(client, naming.authenticationGroup, this.#stopping.signal) : NO_OBJECTS,
      prober: this.#prober,
      hostIP: () => options.hostIP,
      clusterDNS: config.clusterDNS,
      clusterDomain: config.clusterDomain,
      agentName: naming.agentName,
      resolvConf: config.resolvConf,
      swapBehavior: config.memorySwap.swapBehavior,
      node: options.node,
      events,
      ...(options.devices ? { devices: options.devices } : {}),
      backoff: new Backoff(options.tuning.crashLoopBackOff ? { initialMs: options.tuning.crashLoopBackOff.initialMs, maxMs: options.tuning.crashLoopBackOff.maxMs } : {}),
      log,
    });
    this.statuses = new StatusManager({ ...(client ? { client } : {}), log });
    const status = new PodStatusWriter({ statuses: this.statuses, syncer: this.syncer, prober: this.#prober, hostIP: options.hostIP, runtimeName: options.runtimeName, onRunning: (s) => options.metrics.podStarted(s) });
    this.workers = new PodWorkers({
      log,
      sync: {
        syncPod: async (pod) => {
          // activeDeadlineSeconds (set or changed at any time): past it the pod fails and its containers stop.
          const left = activeDeadlineRemainingMs(pod, status.startTime(pod), Date.now());
          if (left !== undefined && left <= 0) {
            if (status.fail(pod.metadata.uid!, DEADLINE_EXCEEDED, DEADLINE_MESSAGE)) events.record(pod, undefined, "Normal", DEADLINE_EXCEEDED, DEADLINE_MESSAGE);
            return { done: true, gracePeriodSeconds: pod.spec?.terminationGracePeriodSeconds ?? 30 };
          }
          const r = await this.syncer.syncPod(pod);
          return left === undefined || r.done ? r : { ...r, requeueAfterMs: Math.min(r.requeueAfterMs ?? left, left) };
        },
        syncTerminatingPod: async (pod, grace) => {
          await this.syncer.syncTerminatingPod(pod, grace);
        },
        syncTerminatedPod: (pod, o) => this.syncer.syncTerminatedPod(pod, o),
        afterSync: async (pod) => status.write(pod),
        onRemoved: (pod) => {
          status.forget(pod.metadata.uid!);
          // A static pod's mirror is the agent's to keep; a deleted API pod is deleted for good once its containers are gone.
          const fromApi = !!client && !this.syncLoop.isStatic(pod.metadata.uid!) && !!pod.metadata.deletionTimestamp;
          void this.statuses.remove(pod, { deleteFromApi: fromApi });
        },
      },
    });
    this.syncLoop = new SyncLoop({
      workers: this.workers,
      allocatable: () => options.allocatable,
      mirrorAnnotation: configAnnotations(naming.keyDomain).mirror,
      onRejected: (pod, r) => {
        this.statuses.set(pod, { phase: "Failed", reason: r.reason, message: `Pod was rejected: ${r.message}`, ...(pod.status?.qosClass ? { qosClass: pod.status.qosClass } : {}) });
      },
      ...(options.devices ? { devices: options.devices } : {}),
      log,
    });
    const { metrics, tuning } = options;
    this.pleg = new Pleg({ runtime, labels: options.labels, onLists: (at, sandboxes, containers) => this.syncer.observeRelist(at, sandboxes, containers), onEvent: (e) => this.workers.wake(e.uid), onRelist: (seconds, ready) => { metrics.relisted(seconds); metrics.runningPods(ready); }, ...(tuning.plegPeriodMs ? { periodMs: tuning.plegPeriodMs } : {}), log });
  }

  /** Joined mode's source: the API's pods bound to this node, through an informer (also what mirror pods look at). */
  followApi(client: RestClient, signal: AbortSignal): Informer<Pod> {
    const { nodeName, registry, log } = this.#o;
    const informer = new Informer<Pod>({ client, resource: PODS, fieldSelector: `spec.nodeName=${nodeName}`, log, ...(registry ? { metrics: registry } : {}) });
    informer.addEventHandler({
      onAdd: (p) => this.syncLoop.apiPodChanged(p),
      onUpdate: (_o, p) => this.syncLoop.apiPodChanged(p),
      onDelete: (p) => this.syncLoop.apiPodDeleted(p),
    });
    void informer.run(signal);
    return informer;
  }

  /** The static pod source (both modes) and PLEG: the loop runs until `signal` aborts. */
  start(signal: AbortSignal): void {
    const { config, naming, nodeName, log } = this.#o;
    new StaticPodSource({ dir: config.staticPodPath, nodeName, keyDomain: naming.keyDomain, periodMs: config.fileCheckFrequency, onChange: (pods) => this.syncLoop.setStaticPods(pods), log }).start(signal);
    this.pleg.start(signal);
  }

  /** Pods with a status, and those just admitted whose first status is not computed yet (their containers are "not available"). */
  known(): { pod: Pod; status: PodStatus }[] {
    const withStatus = this.statuses.all();
    const seen = new Set(withStatus.map((e) => e.pod.metadata.uid));
    return [...withStatus, ...this.workers.pods().filter((p) => !seen.has(p.metadata.uid)).map((pod) => ({ pod, status: {} }))];
  }

  stop(): void {
    this.#stopping.abort();
    this.workers.stop();
    this.#prober.stopAll();
    this.statuses.close();
  }
}
