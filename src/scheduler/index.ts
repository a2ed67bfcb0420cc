// `startScheduler`: the scheduler as a component — what `orch scheduler` runs
// and what `orch server` embeds. With leader election (the default) it
// schedules only while holding the Lease <product>-scheduler in the system
// namespace, so two replicas never bind at once.

import { namingFor, type Naming } from "../machinery/naming.js";
import { LeaderElector, namingOfServer, type InformerFactory, type RestClient } from "../client/index.js";
import type { MetricsRegistry } from "../component/metrics/index.js";
import { DEFAULT_SCHEDULER_NAME, Scheduler, type SchedulerOptions } from "./scheduler.js";

export { Scheduler, DEFAULT_SCHEDULER_NAME, selectHighest, type SchedulerOptions } from "./scheduler.js";
export { SchedulerMetrics } from "./metrics.js";
export { SchedulingQueue, type Clock, type QueuedPodInfo } from "./queue/scheduling-queue.js";

export interface StartSchedulerOptions {
  client: RestClient;
  /** Take the leader lease first (default true). */
  leaderElect?: boolean;
  leaderElection?: { namespace?: string; name?: string; identity?: string; leaseDurationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number };
  /** Stops scheduling (and releases the lease). */
  signal: AbortSignal;
  log?: (line: string) => void;
  metrics?: MetricsRegistry;
  /** Informers shared with other parts of the process (`orch server`); default: the scheduler's own. */
  informers?: InformerFactory;
  /** Default: read from the server's API groups. */
  naming?: Naming;
  schedulerName?: string;
  percentageOfNodesToScore?: number;
  /** Called with the running scheduler (status pages, tests). */
  onStarted?: (scheduler: Scheduler) => void;
}

/** The lease the scheduler's replicas compete for (upstream: kube-system/kube-scheduler). */
export function schedulerLease(naming: Naming = namingFor()): { namespace: string; name: string } {
  return { namespace: naming.systemNamespace, name: naming.systemNamespace.replace(/-system$/, "") + "-scheduler" };
}

/**
 * Runs the scheduler until the signal fires. With leader election, it
 * schedules only while leading; losing the lease rejects (the process should
 * exit and start over, as upstream's does).
 */
export async function startScheduler(options: StartSchedulerOptions): Promise<void> {
  const log = options.log ?? (() => {});
  const naming = options.naming ?? (await namingOfServer(options.client));
  const make = (): Scheduler => {
    const o: SchedulerOptions = { client: options.client, naming, log, schedulerName: options.schedulerName ?? DEFAULT_SCHEDULER_NAME };
    if (options.metrics) o.metrics = options.metrics;
    if (options.informers) o.informers = options.informers;
    if (options.percentageOfNodesToScore !== undefined) o.percentageOfNodesToScore = options.percentageOfNodesToScore;
    const s = new Scheduler(o);
    options.onStarted?.(s);
    return s;
  };
  if (options.leaderElect === false) return make().run(options.signal);
  const settings = options.leaderElection ?? {};
  const lease = { ...schedulerLease(naming), ...(settings.namespace ? { namespace: settings.namespace } : {}), ...(settings.name ? { name: settings.name } : {}) };
  let led = false;
  const elector = new LeaderElector({
    client: options.client,
    lease,
    naming,
    ...(settings.identity ? { identity: settings.identity } : {}),
    ...(settings.leaseDurationMs ? { leaseDurationMs: settings.leaseDurationMs } : {}),
    ...(settings.renewDeadlineMs ? { renewDeadlineMs: settings.renewDeadlineMs } : {}),
    ...(settings.retryPeriodMs ? { retryPeriodMs: settings.retryPeriodMs } : {}),
    log,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    onStartedLeading: async (signal) => {
      led = true;
      await make().run(signal);
    },
    onNewLeader: (identity) => log(`scheduler: lease ${lease.namespace}/${lease.name} is held by ${identity}`),
  });
  await elector.run(options.signal);
  if (led && !options.signal.aborted) throw new Error(`leader election lost: lease ${lease.namespace}/${lease.name}`);
}
