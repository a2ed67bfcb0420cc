// The CronJob controller: at each scheduled time (cron fields or `@every`, in spec.timeZone) creates
// the Job `<cronjob>-<scheduled time in minutes>` from jobTemplate, honouring concurrencyPolicy
// (Allow/Forbid/Replace), startingDeadlineSeconds and suspend; keeps status.active,
// lastScheduleTime and lastSuccessfulTime, and prunes finished Jobs beyond the history limits.

import { formatTimestamp, isApiError, parseTimestamp } from "../../machinery/index.js";
import { WorkQueue, keyOf, splitKey, type ProcessResult } from "../../client/index.js";
import { parseCronSchedule } from "../../api/batch/cron.js";
import type { CronJob, CronJobStatus, Job } from "../../api/batch/types.js";
import { errorMessage, type ControllerContext, type ControllerDescriptor, nowMs } from "../controller.js";
import { runQueue } from "../run-queue.js";
import { type Histogram, MetricsRegistry } from "../../component/metrics/index.js";
import { controllerOf, controllerRef, deleteIfExists, getIfExists } from "../resources.js";
import { mostRecentRun, nextRunAfter } from "./schedule.js";
import { EventRecorder } from "../events.js";
import { CRONJOBS, JOBS } from "../../api/resource-refs.js";

export const cronJobController: ControllerDescriptor = {
  name: "cronjob-controller",
  aliases: ["cronjob"],
  enabledByDefault: true,
  run: (context) => new CronJobController(context).run(),
};

/** Upstream gives up counting (and warns) past this many missed start times. */
const TOO_MANY_MISSED = 100;

export class CronJobController {
  readonly #ctx: ControllerContext;
  readonly #queue = new WorkQueue({ name: "cronjob", baseDelayMs: 10, maxDelayMs: 60_000 });
  readonly #skew: Histogram;
  readonly #events: EventRecorder;

  constructor(context: ControllerContext) {
    this.#ctx = context;
    this.#events = new EventRecorder(context, "cronjob-controller");
    this.#skew = (context.metrics ?? new MetricsRegistry()).histogram({
      name: "cronjob_controller_job_creation_skew_duration_seconds",
      help: "Time between when a cronjob is scheduled to be run, and when the corresponding job is created",
      stabilityLevel: "STABLE",
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    });
  }

  async run(): Promise<void> {
    const { informers } = this.#ctx;
    const cronjobs = informers.informerFor<CronJob>({ resource: CRONJOBS });
    const jobs = informers.informerFor<Job>({ resource: JOBS });
    cronjobs.addEventHandler({ onAdd: (c) => this.#queue.add(keyOf(c)), onUpdate: (_o, c) => this.#queue.add(keyOf(c)) });
    const onJob = (job: Job) => {
      const owner = controllerOf(job);
      if (owner?.kind === "CronJob") this.#queue.add(`${job.metadata.namespace}/${owner.name}`);
    };
    jobs.addEventHandler({ onAdd: onJob, onUpdate: (_o, j) => onJob(j), onDelete: onJob });
    await runQueue(this.#ctx, { name: "cronjob-controller", queue: this.#queue, workers: 5, process: (key) => this.sync(key) });
  }

  /** One pass over one CronJob (namespace/name); returns when to look again. Exported for tests. */
  async sync(key: string): Promise<ProcessResult | void> {
    const { client } = this.#ctx;
    const { namespace, name } = splitKey(key);
    const cj = await getIfExists<CronJob>(client, CRONJOBS, { namespace: namespace!, name });
    if (cj === undefined || cj.metadata.deletionTimestamp) return;
    const now = nowMs(this.#ctx);
    const owned = (await client.listAll<Job>(JOBS, { namespace: namespace! })).items.filter((j) => controllerOf(j)?.uid === cj.metadata.uid);
    const status: CronJobStatus = structuredClone(cj.status ?? {});

    // 1. The active list follows the Jobs: finished ones leave it (a success is remembered), vanished ones too.
    const byUid = new Map(owned.map((j) => [j.metadata.uid, j]));
    status.active = (status.active ?? []).filter((ref) => {
      const job = byUid.get(ref.uid);
      const end = job === undefined ? undefined : finishedAs(job);
      if (end !== undefined) this.#events.record(cj, "Normal", "SawCompletedJob", `Saw completed job: ${ref.name}, condition: ${end}`);
      return job !== undefined && end === undefined;
    });
    for (const job of owned) {
      const end = finishedAs(job);
      if (end === undefined && !status.active.some((r) => r.uid === job.metadata.uid)) status.active.push(jobRef(job));
      if (end === "Complete" && job.status?.completionTime) {
        const t = job.status.completionTime;
        if (!status.lastSuccessfulTime || parseTimestamp(t) > parseTimestamp(status.lastSuccessfulTime)) status.lastSuccessfulTime = t;
      }
    }
    await this.#pruneHistory(cj, owned);

    const result = await this.#schedule(cj, status, now);
    if (JSON.stringify(status) !== JSON.stringify(cj.status ?? {})) {
      await client.update<CronJob>(CRONJOBS, { ...cj, status }, { subresource: "status" });
    }
    return result;
  }

  /** Decides whether a run is due now and starts it; returns when the next one is. */
  async #schedule(cj: CronJob, status: CronJobStatus, now: number): Promise<ProcessResult | void> {
    const spec = cj.spec ?? {};
    if (spec.suspend) return;
    let schedule;
    try {
      schedule = parseCronSchedule(spec.schedule ?? "");
    } catch (err) {
      this.#ctx.log(`cronjob-controller: cronjob ${keyOf(cj)}: unparseable schedule ${JSON.stringify(spec.schedule)}: ${errorMessage(err)}`);
      return; // nothing to do until the spec changes
    }
    const tz = spec.timeZone ?? undefined;
    const created = parseTimestamp(cj.metadata.creationTimestamp ?? formatTimestamp(new Date(now))).getTime();
    let earliest = status.lastScheduleTime ? parseTimestamp(status.lastScheduleTime).getTime() : created;
    const deadline = spec.startingDeadlineSeconds;
    if (deadline != null) earliest = Math.max(earliest, now - deadline * 1000);
    const next = nextRunAfter(schedule, now, tz);
    const requeue = next === undefined ? undefined : { requeueAfterMs: Math.max(0, next - now) + 100 };
    const due = mostRecentRun(schedule, earliest, now, tz);
    if (due.time === undefined) return requeue;
    if (due.missed > TOO_MANY_MISSED) {
      this.#ctx.log(`cronjob-controller: cronjob ${keyOf(cj)}: too many missed start times (> ${TOO_MANY_MISSED}); set or decrease .spec.startingDeadlineSeconds or check clock skew`);
    }
    const scheduled = due.time;
    if (deadline != null && scheduled + deadline * 1000 < now) return requeue; // missed its window: wait for the next
    const jobName = `${cj.metadata.name}-${Math.floor(scheduled / 60_000)}`;
    if ((status.active ?? []).some((r) => r.name === jobName)) return requeue;

    const policy = spec.concurrencyPolicy ?? "Allow";
    if (policy === "Forbid" && (status.active ?? []).length > 0) {
      this.#events.record(cj, "Normal", "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid");
      return requeue; // try again at the next time
    }
    if (policy === "Replace") {
      for (const ref of status.active ?? []) await this.#deleteJob(cj, ref.name!);
      status.active = [];
    }

    const template = spec.jobTemplate ?? {};
    const job: Job = {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: {
        name: jobName,
        namespace: cj.metadata.namespace!,
        labels: { ...(template.metadata?.labels ?? {}) },
        annotations: {
          ...(template.metadata?.annotations ?? {}),
          [`batch.${this.#ctx.naming.keyDomain}/cronjob-scheduled-timestamp`]: formatTimestamp(new Date(scheduled)),
        },
        ownerReferences: [controllerRef(cj)],
      },
      spec: structuredClone(template.spec ?? {}),
    };
    let made: Job;
    try {
      made = await this.#ctx.client.create<Job>(JOBS, job);
      this.#events.record(cj, "Normal", "SuccessfulCreate", `Created job ${jobName}`);
      this.#skew.observe({}, Math.max(0, (now - scheduled) / 1000));
    } catch (err) {
      if (!isApiError(err, "AlreadyExists")) throw err;
      // Made by an earlier pass whose status write was lost: adopt it in the status if it is ours.
      made = await this.#ctx.client.get<Job>(JOBS, { namespace: cj.metadata.namespace!, name: jobName });
      if (controllerOf(made)?.uid !== cj.metadata.uid) return requeue;
    }
    if (finishedAs(made) === undefined && !(status.active ?? []).some((r) => r.uid === made.metadata.uid)) (status.active ??= []).push(jobRef(made));
    status.lastScheduleTime = formatTimestamp(new Date(scheduled));
    return requeue;
  }

  /** Keeps the newest successfulJobsHistoryLimit (default 3) and failedJobsHistoryLimit (default 1) finished Jobs. */
  async #pruneHistory(cj: CronJob, owned: Job[]): Promise<void> {
    const limits = { Complete: cj.spec?.successfulJobsHistoryLimit ?? 3, Failed: cj.spec?.failedJobsHistoryLimit ?? 1 };
    for (const kind of ["Complete", "Failed"] as const) {
      const finished = owned
        .filter((j) => finishedAs(j) === kind && !j.metadata.deletionTimestamp)
        .sort((a, b) => startOf(a) - startOf(b));
      const excess = finished.slice(0, Math.max(0, finished.length - limits[kind]));
      for (const job of excess) await this.#deleteJob(cj, job.metadata.name!);
    }
  }

  async #deleteJob(cj: CronJob, name: string): Promise<void> {
    if (await deleteIfExists(this.#ctx.client, JOBS, { namespace: cj.metadata.namespace!, name, propagationPolicy: "Background" })) {
      this.#events.record(cj, "Normal", "SuccessfulDelete", `Deleted job ${name}`);
    }
  }
}

function finishedAs(job: Job): "Complete" | "Failed" | undefined {
  for (const c of job.status?.conditions ?? []) if ((c.type === "Complete" || c.type === "Failed") && c.status === "True") return c.type;
  return undefined;
}

function startOf(job: Job): number {
  const t = job.status?.startTime ?? job.metadata.creationTimestamp;
  return t ? parseTimestamp(t).getTime() : 0;
}

function jobRef(job: Job): { kind: string; namespace: string; name: string; uid: string; apiVersion: string; resourceVersion: string } {
  return { kind: "Job", namespace: job.metadata.namespace!, name: job.metadata.name!, uid: job.metadata.uid!, apiVersion: "batch/v1", resourceVersion: job.metadata.resourceVersion! };
}
