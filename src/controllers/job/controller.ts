// The Job controller: runs a Job's pods to `completions` with `parallelism` at a time, Indexed or
// NonIndexed, replacing failed pods with exponential back-off up to backoffLimit, within
// activeDeadlineSeconds, honouring suspend. Finished pods are counted exactly once through the
// `batch.<domain>/job-tracking` finalizer and status.uncountedTerminatedPods, as upstream; the
// interim FailureTarget/SuccessCriteriaMet conditions precede Failed/Complete (upstream 1.31+).

import { formatTimestamp, isApiError, parseTimestamp, selectorFromLabelSelector } from "../../machinery/index.js";
import { NAMESPACE_INDEX, WorkQueue, keyOf, splitKey, type ProcessResult } from "../../client/index.js";
import type { Naming } from "../../machinery/naming.js";
import type { Pod, PodSpec } from "../../api/core/types.js";
import type { Job, JobCondition, JobStatus } from "../../api/batch/types.js";
import { type ControllerContext, type ControllerDescriptor, nowMs } from "../controller.js";
import { runQueue } from "../run-queue.js";
import { exponentialBuckets, type Counter, type Histogram, MetricsRegistry } from "../../component/metrics/index.js";
import { controllerOf, controllerRef, deleteIfExists, getIfExists, isPodReady, setCondition } from "../resources.js";
import { isPodTerminal } from "../../api/core/pod-phase.js";
import { formatIndexes, parseIndexes } from "./indexes.js";
import { matchPodFailurePolicy, matchSuccessPolicy } from "./policies.js";
import { EventRecorder } from "../events.js";
import { claimObjects } from "../workload/claim.js";
import { JOBS, PODS } from "../../api/resource-refs.js";

export const jobTrackingFinalizer = (naming: Naming) => `batch.${naming.keyDomain}/job-tracking`;
export const completionIndexKey = (naming: Naming) => `batch.${naming.keyDomain}/job-completion-index`;

export interface JobControllerOptions {
  workers?: number;
  /** First delay before replacing a failed pod (upstream: 10 s), doubling per failure. */
  backoffBaseMs?: number;
  /** Longest such delay (upstream: 6 min). */
  backoffMaxMs?: number;
}

export const jobController: ControllerDescriptor = {
  name: "job-controller",
  aliases: ["job"],
  enabledByDefault: true,
  run: (context) => new JobController(context).run(),
};

interface JobMetrics {
  syncs: Counter;
  syncDuration: Histogram;
  finished: Counter;
  podsFinished: Counter;
}

/** What one sync decided, for the metrics' `action` label. */
type Action = "reconciling" | "tracking" | "pods_created" | "pods_deleted";

export class JobController {
  readonly #ctx: ControllerContext;
  readonly #options: Required<JobControllerOptions>;
  readonly #queue = new WorkQueue({ name: "job", baseDelayMs: 10, maxDelayMs: 60_000 });
  readonly #metrics: JobMetrics;
  readonly #tracking: string;
  readonly #indexKey: string;
  readonly #failureCountKey: string;
  readonly #events: EventRecorder;
  /** Job uid → when its last failure was counted (the back-off clock; upstream keeps it in memory too). */
  readonly #lastFailure = new Map<string, number>();

  constructor(context: ControllerContext, options: JobControllerOptions = {}) {
    this.#ctx = context;
    this.#options = { workers: 5, backoffBaseMs: context.config?.jobBackoffBaseMs ?? 10_000, backoffMaxMs: 360_000, ...options };
    this.#tracking = jobTrackingFinalizer(context.naming);
    this.#indexKey = completionIndexKey(context.naming);
    this.#events = new EventRecorder(context, "job-controller");
    this.#failureCountKey = `batch.${context.naming.keyDomain}/job-index-failure-count`;
    const m = (context.metrics ?? new MetricsRegistry());
    const labelNames = ["action", "completion_mode", "result"];
    this.#metrics = {
      syncs: m.counter({ name: "job_controller_job_syncs_total", help: "The number of job syncs", labelNames, stabilityLevel: "STABLE" }),
      syncDuration: m.histogram({ name: "job_controller_job_sync_duration_seconds", help: "The time it took to sync a job", labelNames, stabilityLevel: "STABLE", buckets: exponentialBuckets(0.004, 2, 15) }),
      finished: m.counter({ name: "job_controller_jobs_finished_total", help: "The number of finished jobs", labelNames: ["completion_mode", "result", "reason"], stabilityLevel: "STABLE" }),
      podsFinished: m.counter({ name: "job_controller_job_pods_finished_total", help: "The number of finished Pods that are fully tracked", labelNames: ["completion_mode", "result"], stabilityLevel: "STABLE" }),
    };
  }

  async run(): Promise<void> {
    const { informers } = this.#ctx;
    const jobs = informers.informerFor<Job>({ resource: JOBS });
    const pods = informers.informerFor<Pod>({ resource: PODS });
    jobs.addEventHandler({ onAdd: (j) => this.#queue.add(keyOf(j)), onUpdate: (_o, j) => this.#queue.add(keyOf(j)), onDelete: (j) => this.#queue.add(keyOf(j)) });
    const onPod = (pod: Pod) => {
      const owner = controllerOf(pod);
      if (owner?.kind === "Job") this.#queue.add(`${pod.metadata.namespace}/${owner.name}`);
      else if (owner === undefined && !pod.metadata.deletionTimestamp) {
        // An orphan: every Job of its namespace that selects it may adopt it.
        for (const job of jobs.byIndex(NAMESPACE_INDEX, pod.metadata.namespace ?? "")) {
          if (job.spec?.selector && selectorFromLabelSelector(job.spec.selector).matches(pod.metadata.labels ?? {})) this.#queue.add(keyOf(job));
        }
      }
    };
    pods.addEventHandler({ onAdd: onPod, onUpdate: (_o, p) => onPod(p), onDelete: onPod });
    await runQueue(this.#ctx, { name: "job-controller", queue: this.#queue, workers: this.#options.workers, process: (key) => this.sync(key) });
  }

  /** One pass over one Job (namespace/name); exported for tests. */
  async sync(key: string): Promise<ProcessResult | void> {
    const started = performance.now();
    let mode = "NonIndexed";
    let action: Action = "reconciling";
    try {
      const { namespace, name } = splitKey(key);
      const job = await getIfExists<Job>(this.#ctx.client, JOBS, { namespace: namespace!, name });
      const pods = await this.#pods(namespace!, job);
      if (job === undefined || job.metadata.deletionTimestamp) {
        // Gone or going: its pods must not stay held by our finalizer.
        await this.#releaseAll(pods);
        return;
      }
      mode = job.spec?.completionMode ?? "NonIndexed";
      const result = await this.#reconcile(job, pods);
      action = result.action;
      this.#observe(action, mode, "success", started);
      return result.requeueAfterMs !== undefined ? { requeueAfterMs: result.requeueAfterMs } : undefined;
    } catch (err) {
      this.#observe(action, mode, "error", started);
      throw err;
    }
  }

  #observe(action: Action, mode: string, result: string, started: number): void {
    const labels = { action, completion_mode: mode, result };
    this.#metrics.syncs.inc(labels);
    this.#metrics.syncDuration.observe(labels, (performance.now() - started) / 1000);
  }

  /** The Job's pods, read fresh (counting must not trust a cache that may lag our own writes). */
  async #pods(namespace: string, job: Job | undefined): Promise<Pod[]> {
    const { client } = this.#ctx;
    if (job === undefined) {
      // Only our finalizer matters now: find the pods still holding it by their owner.
      const all = await client.listAll<Pod>(PODS, { namespace });
      return all.items.filter((p) => (p.metadata.finalizers ?? []).includes(this.#tracking) && controllerOf(p)?.kind === "Job" && !this.#ownerExists(p));
    }
    // Every pod of the namespace: ours whose labels no longer match are released (and our finalizer with them),
    // orphans that match are adopted (upstream's ControllerRefManager).
    const selector = selectorFromLabelSelector(job.spec?.selector);
    const all = (await client.listAll<Pod>(PODS, { namespace })).items;
    const claimed = await claimObjects<Pod>({ client, resource: PODS, owner: job, ownerResource: JOBS, selector, candidates: all });
    const kept = new Set(claimed.map((p) => p.metadata.uid));
    const released = all.filter((p) => controllerOf(p)?.uid === job.metadata.uid && !kept.has(p.metadata.uid));
    if (!job.metadata.deletionTimestamp) await this.#releaseAll(released);
    return claimed;
  }

  #ownerExists(pod: Pod): boolean {
    const owner = controllerOf(pod)!;
    const job = this.#ctx.informers.informerFor<Job>({ resource: JOBS }).get(`${pod.metadata.namespace}/${owner.name}`);
    return job !== undefined && job.metadata.uid === owner.uid;
  }

  async #reconcile(job: Job, pods: Pod[]): Promise<{ action: Action; requeueAfterMs?: number }> {
    const now = nowMs(this.#ctx);
    const spec = job.spec ?? {};
    const indexed = spec.completionMode === "Indexed";
    const status: JobStatus = structuredClone(job.status ?? {});
    const conditions = (status.conditions ??= []);
    const finished = conditions.some((c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True");
    if (finished) {
      await this.#releaseAll(pods);
      return { action: "tracking" };
    }

    // 1. Count finished pods exactly once: record their uids, drop our finalizer, then move them into the counters.
    const tracked = await this.#track(job, status, pods);
    job = tracked.job;

    const active = pods.filter((p) => !isPodTerminal(p) && !p.metadata.deletionTimestamp);
    const terminating = pods.filter((p) => !isPodTerminal(p) && p.metadata.deletionTimestamp).length;
    const completions = spec.completions ?? undefined;
    const parallelism = spec.parallelism ?? 1;
    const succeeded = status.succeeded ?? 0;
    const failed = status.failed ?? 0;
    const completed = indexed ? parseIndexes(status.completedIndexes, completions ?? 0) : new Set<number>();
    const failedIndexes = indexed ? parseIndexes(status.failedIndexes, completions ?? 0) : new Set<number>();
    const successRule = indexed && spec.successPolicy ? matchSuccessPolicy(job, completed) : undefined;

    let action: Action = tracked.changed ? "tracking" : "reconciling";
    let requeueAfterMs: number | undefined;

    // 2. Decide whether the Job has met its end (interim conditions first, as upstream 1.31+).
    const target = conditions.find((c) => (c.type === "FailureTarget" || c.type === "SuccessCriteriaMet") && c.status === "True");
    let verdict: JobCondition | undefined = target;
    if (verdict === undefined && !spec.suspend) {
      const deadline = spec.activeDeadlineSeconds;
      const start = status.startTime ? parseTimestamp(status.startTime).getTime() : undefined;
      if (tracked.failJob !== undefined) {
        verdict = { type: "FailureTarget", status: "True", reason: "PodFailurePolicy", message: tracked.failJob };
      } else if (spec.maxFailedIndexes != null && failedIndexes.size > spec.maxFailedIndexes) {
        verdict = { type: "FailureTarget", status: "True", reason: "MaxFailedIndexesExceeded", message: "Job has exceeded the specified maximal number of failed indexes" };
      } else if (failed > (spec.backoffLimit ?? 6)) {
        verdict = { type: "FailureTarget", status: "True", reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" };
      } else if (successRule !== undefined) {
        verdict = { type: "SuccessCriteriaMet", status: "True", reason: "SuccessPolicy", message: successRule };
      } else if (indexed && failedIndexes.size > 0 && completed.size + failedIndexes.size >= (completions ?? 0)) {
        verdict = { type: "FailureTarget", status: "True", reason: "FailedIndexes", message: "Job has failed indexes" };
      } else if (deadline != null && start !== undefined && now - start >= deadline * 1000) {
        verdict = { type: "FailureTarget", status: "True", reason: "DeadlineExceeded", message: "Job was active longer than specified deadline" };
      } else if (
        indexed ? completed.size >= (completions ?? 0) : completions != null ? succeeded >= completions : succeeded > 0 && active.length === 0
      ) {
        verdict = { type: "SuccessCriteriaMet", status: "True", reason: "CompletionsReached", message: "Reached expected number of succeeded pods" };
      } else if (deadline != null && start !== undefined) {
        requeueAfterMs = Math.max(0, start + deadline * 1000 - now);
      }
      if (verdict !== undefined) {
        setCondition(conditions, { ...verdict, lastProbeTime: formatTimestamp(new Date(now)) }, now);
      }
    }

    let wantActive: Pod[] = [];
    let created = 0;
    let ended: { result: string; reason: string } | undefined;
    if (verdict === undefined && !spec.suspend) {
      // 3. Start the clock, then create or delete pods toward the wanted number.
      if (!status.startTime) status.startTime = formatTimestamp(new Date(now));
      const wait = this.#backoffRemaining(job, failed, now);
      const plan = indexed ? this.#planIndexed(active, new Set([...completed, ...failedIndexes]), completions ?? 0, parallelism) : this.#planNonIndexed(active, succeeded, completions, parallelism);
      wantActive = active.filter((p) => !plan.excess.includes(p));
      if (plan.excess.length > 0) {
        await this.#deletePods(job, plan.excess);
        action = "pods_deleted";
      }
      if (plan.create.length > 0) {
        if (wait > 0) requeueAfterMs = Math.min(requeueAfterMs ?? wait, wait);
        else {
          await this.#createPods(job, plan.create, pods);
          created = plan.create.length;
          action = "pods_created";
        }
      }
    } else if (active.length > 0) {
      // Suspended, or decided: the remaining pods go.
      await this.#deletePods(job, active);
      action = "pods_deleted";
    }

    const events: [type: "Normal" | "Warning", reason: string, message: string][] = [];
    if (spec.suspend) {
      if (setCondition(conditions, { type: "Suspended", status: "True", reason: "JobSuspended", message: "Job suspended" }, now)) events.push(["Normal", "Suspended", "Job suspended"]);
    } else if (conditions.some((c) => c.type === "Suspended" && c.status === "True")) {
      setCondition(conditions, { type: "Suspended", status: "False", reason: "JobResumed", message: "Job resumed" }, now);
      events.push(["Normal", "Resumed", "Job resumed"]);
      status.startTime = formatTimestamp(new Date(now)); // a resumed Job's deadline counts from the resumption
    }

    // 4. With every pod gone, the interim condition becomes the final one.
    if (verdict !== undefined && active.length === 0 && terminating === 0) {
      const success = verdict.type === "SuccessCriteriaMet";
      setCondition(conditions, { type: success ? "Complete" : "Failed", status: "True", reason: verdict.reason ?? "", message: verdict.message ?? "" }, now);
      if (success) status.completionTime = formatTimestamp(new Date(now));
      ended = { result: success ? "succeeded" : "failed", reason: verdict.reason ?? "" };
      events.push(success ? ["Normal", "Completed", "Job completed"] : ["Warning", verdict.reason ?? "Failed", verdict.message ?? ""]);
    }
    status.active = wantActive.length + created;
    status.ready = wantActive.filter(isPodReady).length;
    status.terminating = terminating;
    if (indexed) status.completedIndexes = formatIndexes(completed);
    if (indexed && spec.backoffLimitPerIndex != null) status.failedIndexes = formatIndexes(failedIndexes);
    await this.#writeStatus(job, status);
    // After the write: a conflict retries the pass, and must not repeat its events.
    for (const [type, reason, message] of events) this.#events.record(job, type, reason, message);
    if (ended !== undefined) {
      this.#metrics.finished.inc({ completion_mode: spec.completionMode ?? "NonIndexed", ...ended });
      this.#lastFailure.delete(job.metadata.uid!);
    }
    return requeueAfterMs !== undefined ? { action, requeueAfterMs } : { action };
  }

  #planNonIndexed(active: Pod[], succeeded: number, completions: number | undefined, parallelism: number): { create: (number | undefined)[]; excess: Pod[] } {
    // Without completions, the first success means no new pods (the Job ends as the rest finish).
    const remaining = completions != null ? completions - succeeded : succeeded > 0 ? 0 : parallelism;
    const want = Math.max(0, Math.min(parallelism, remaining));
    if (active.length > want) return { create: [], excess: newestFirst(active).slice(0, active.length - want) };
    return { create: Array.from({ length: want - active.length }, () => undefined), excess: [] };
  }

  #planIndexed(active: Pod[], completed: Set<number>, completions: number, parallelism: number): { create: (number | undefined)[]; excess: Pod[] } {
    const seen = new Set<number>();
    const excess: Pod[] = [];
    for (const pod of active) {
      const index = this.#indexOf(pod);
      // A pod for a finished index, a bad index or a duplicate is surplus.
      if (index === undefined || index >= completions || completed.has(index) || seen.has(index)) excess.push(pod);
      else seen.add(index);
    }
    const room = Math.max(0, parallelism - seen.size);
    const create: number[] = [];
    for (let i = 0; i < completions && create.length < room; i++) if (!completed.has(i) && !seen.has(i)) create.push(i);
    return { create, excess };
  }

  #indexOf(pod: Pod): number | undefined {
    const raw = pod.metadata.annotations?.[this.#indexKey] ?? pod.metadata.labels?.[this.#indexKey];
    const n = raw === undefined ? NaN : Number(raw);
    return Number.isInteger(n) && n >= 0 ? n : undefined;
  }

  #backoffRemaining(job: Job, failed: number, now: number): number {
    const last = this.#lastFailure.get(job.metadata.uid!);
    if (failed === 0 || last === undefined) return 0;
    const delay = Math.min(this.#options.backoffMaxMs, this.#options.backoffBaseMs * 2 ** (failed - 1));
    return Math.max(0, last + delay - now);
  }

  /**
   * Upstream's tracking with finalizers: a finished pod's uid goes into uncountedTerminatedPods
   * (written first), then its finalizer is dropped, then it moves into succeeded/failed. A crash
   * anywhere in between neither loses nor double-counts a pod.
   */
  async #track(job: Job, status: JobStatus, pods: Pod[]): Promise<{ job: Job; changed: boolean; failJob?: string }> {
    const uncounted = { succeeded: [...(status.uncountedTerminatedPods?.succeeded ?? [])], failed: [...(status.uncountedTerminatedPods?.failed ?? [])] };
    const known = new Set([...uncounted.succeeded, ...uncounted.failed]);
    let added = false;
    for (const pod of pods) {
      const uid = pod.metadata.uid!;
      // A pod being deleted will not succeed any more: upstream counts it as failed at once.
      const done = isPodTerminal(pod) || pod.metadata.deletionTimestamp != null;
      if (!done || !(pod.metadata.finalizers ?? []).includes(this.#tracking) || known.has(uid)) continue;
      (pod.status?.phase === "Succeeded" ? uncounted.succeeded : uncounted.failed).push(uid);
      known.add(uid);
      added = true;
    }
    if (added) {
      status.uncountedTerminatedPods = uncounted;
      job = await this.#writeStatus(job, status);
    }
    const held = pods.filter((p) => known.has(p.metadata.uid!) && (p.metadata.finalizers ?? []).includes(this.#tracking));
    await Promise.all(held.map((p) => this.#release(p)));
    if (known.size === 0) return { job, changed: false };

    // Every uncounted pod is now free of our finalizer (or gone): count it.
    const mode = job.spec?.completionMode ?? "NonIndexed";
    const completions = job.spec?.completions ?? 0;
    const completed = parseIndexes(status.completedIndexes, completions);
    const byUid = new Map(pods.map((p) => [p.metadata.uid!, p]));
    let newSucceeded = 0;
    for (const uid of uncounted.succeeded) {
      const index = byUid.has(uid) ? this.#indexOf(byUid.get(uid)!) : undefined;
      if (mode === "Indexed") {
        if (index !== undefined && index < completions && !completed.has(index)) completed.add(index);
      } else newSucceeded++;
    }
    status.succeeded = mode === "Indexed" ? completed.size : (status.succeeded ?? 0) + newSucceeded;
    if (mode === "Indexed") status.completedIndexes = formatIndexes(completed);
    // Failures go through podFailurePolicy (Ignore: not counted; FailJob: the Job fails) and backoffLimitPerIndex.
    let failJob: string | undefined;
    let counted = 0;
    const failedIndexes = parseIndexes(status.failedIndexes, completions);
    for (const uid of uncounted.failed) {
      const pod = byUid.get(uid);
      const match = pod?.status?.phase === "Failed" ? matchPodFailurePolicy(job, pod) : undefined;
      if (match?.action === "Ignore") continue;
      counted++;
      if (match?.action === "FailJob") failJob ??= match.message;
      const index = pod !== undefined && mode === "Indexed" ? this.#indexOf(pod) : undefined;
      const perIndex = job.spec?.backoffLimitPerIndex;
      if (index !== undefined && perIndex != null && (match?.action === "FailIndex" || this.#indexFailures(pod!) + 1 > perIndex)) failedIndexes.add(index);
    }
    if (job.spec?.backoffLimitPerIndex != null) status.failedIndexes = formatIndexes(failedIndexes);
    status.failed = (status.failed ?? 0) + counted;
    if (counted > 0) this.#lastFailure.set(job.metadata.uid!, nowMs(this.#ctx));
    if (uncounted.succeeded.length > 0) this.#metrics.podsFinished.inc({ completion_mode: mode, result: "succeeded" }, uncounted.succeeded.length);
    if (uncounted.failed.length > 0) this.#metrics.podsFinished.inc({ completion_mode: mode, result: "failed" }, uncounted.failed.length);
    status.uncountedTerminatedPods = { succeeded: [], failed: [] };
    return failJob !== undefined ? { job, changed: true, failJob } : { job, changed: true };
  }

  async #releaseAll(pods: Pod[]): Promise<void> {
    await Promise.all(pods.filter((p) => (p.metadata.finalizers ?? []).includes(this.#tracking)).map((p) => this.#release(p)));
  }

  /** Drops our finalizer (a JSON patch that tests the list first, so a concurrent change is not lost). */
  async #release(pod: Pod): Promise<void> {
    const finalizers = pod.metadata.finalizers ?? [];
    try {
      await this.#ctx.client.patch(PODS, {
        namespace: pod.metadata.namespace!,
        name: pod.metadata.name!,
        type: "json",
        patch: [
          { op: "test", path: "/metadata/finalizers", value: finalizers },
          { op: "replace", path: "/metadata/finalizers", value: finalizers.filter((f) => f !== this.#tracking) },
        ],
      });
    } catch (err) {
      if (!isApiError(err, "NotFound")) throw err;
    }
  }

  /** How many pods of this pod's index failed before it (upstream's job-index-failure-count annotation). */
  #indexFailures(pod: Pod): number {
    const n = Number(pod.metadata.annotations?.[this.#failureCountKey] ?? 0);
    return Number.isInteger(n) && n >= 0 ? n : 0;
  }

  async #createPods(job: Job, indexes: (number | undefined)[], existing: Pod[]): Promise<void> {
    const name = job.metadata.name!;
    const template = job.spec?.template ?? {};
    await Promise.all(
      indexes.map((index) => {
        const labels = { ...(template.metadata?.labels ?? {}) };
        const annotations = { ...(template.metadata?.annotations ?? {}) };
        const spec = structuredClone(template.spec ?? {}) as PodSpec;
        if (index !== undefined) {
          labels[this.#indexKey] = String(index);
          annotations[this.#indexKey] = String(index);
          if (job.spec?.backoffLimitPerIndex != null) {
            const failedBefore = existing.filter((p) => this.#indexOf(p) === index && p.status?.phase === "Failed").map((p) => this.#indexFailures(p) + 1);
            annotations[this.#failureCountKey] = String(Math.max(0, ...failedBefore));
          }
          // Stable DNS names for Indexed pods (with a headless service named by subdomain).
          spec.hostname = `${name}-${index}`;
          for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
            (c.env ??= []).push({ name: "JOB_COMPLETION_INDEX", valueFrom: { fieldRef: { fieldPath: `metadata.labels['${this.#indexKey}']` } } });
          }
        }
        const pod: Pod = {
          apiVersion: "v1",
          kind: "Pod",
          metadata: {
            generateName: index === undefined ? `${name}-` : `${name}-${index}-`,
            namespace: job.metadata.namespace!,
            labels,
            annotations,
            finalizers: [this.#tracking],
            ownerReferences: [controllerRef(job)],
          },
          spec,
        };
        return this.#ctx.client.create<Pod>(PODS, pod).then((made) => this.#events.record(job, "Normal", "SuccessfulCreate", `Created pod: ${made.metadata.name}`));
      }),
    );
  }

  async #deletePods(job: Job, pods: Pod[]): Promise<void> {
    await Promise.all(
      pods.map(async (p) => {
        if (await deleteIfExists(this.#ctx.client, PODS, { namespace: p.metadata.namespace!, name: p.metadata.name! })) {
          this.#events.record(job, "Normal", "SuccessfulDelete", `Deleted pod: ${p.metadata.name}`);
        }
      }),
    );
  }

  async #writeStatus(job: Job, status: JobStatus): Promise<Job> {
    return this.#ctx.client.update<Job>(JOBS, { ...job, status }, { subresource: "status" });
  }
}

function newestFirst(pods: Pod[]): Pod[] {
  return [...pods].sort((a, b) => (b.metadata.creationTimestamp ?? "").localeCompare(a.metadata.creationTimestamp ?? ""));
}
