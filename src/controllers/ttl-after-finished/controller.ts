// The TTL-after-finished controller: a Job with spec.ttlSecondsAfterFinished
// is deleted (with its pods, foreground, as upstream) that many seconds after
// its Complete or Failed condition became true.

import { parseTimestamp } from "../../machinery/index.js";
import { WorkQueue, keyOf, splitKey, type ProcessResult } from "../../client/index.js";
import type { Job } from "../../api/batch/types.js";
import { type ControllerContext, type ControllerDescriptor, nowMs } from "../controller.js";
import { runQueue } from "../run-queue.js";
import { exponentialBuckets, type Histogram, MetricsRegistry } from "../../component/metrics/index.js";
import { deleteIfExists, getIfExists } from "../resources.js";
import { JOBS } from "../../api/resource-refs.js";

export const ttlAfterFinishedController: ControllerDescriptor = {
  name: "ttl-after-finished-controller",
  aliases: ["ttl-after-finished"],
  enabledByDefault: true,
  run: (context) => new TtlAfterFinishedController(context).run(),
};

export class TtlAfterFinishedController {
  readonly #ctx: ControllerContext;
  readonly #queue = new WorkQueue({ name: "ttl_jobs_to_delete", baseDelayMs: 20, maxDelayMs: 60_000 });
  readonly #deletionDelay: Histogram;

  constructor(context: ControllerContext) {
    this.#ctx = context;
    this.#deletionDelay = (context.metrics ?? new MetricsRegistry()).histogram({
      name: "ttl_after_finished_controller_job_deletion_duration_seconds",
      help: "The time it took to delete the job since it became eligible for deletion",
      buckets: exponentialBuckets(0.1, 2, 14),
    });
  }

  async run(): Promise<void> {
    const { informers } = this.#ctx;
    const jobs = informers.informerFor<Job>({ resource: JOBS });
    const onJob = (job: Job) => {
      if (job.spec?.ttlSecondsAfterFinished != null && finishedAt(job) !== undefined && !job.metadata.deletionTimestamp) this.#queue.add(keyOf(job));
    };
    jobs.addEventHandler({ onAdd: onJob, onUpdate: (_o, j) => onJob(j) });
    await runQueue(this.#ctx, { name: "ttl-after-finished-controller", queue: this.#queue, workers: 2, process: (key) => this.sync(key) });
  }

  /** Deletes the Job if its time is up, else says when it will be; exported for tests. */
  async sync(key: string): Promise<ProcessResult | void> {
    const { namespace, name } = splitKey(key);
    // Fresh: the TTL may have been changed since the cache saw it.
    const job = await getIfExists<Job>(this.#ctx.client, JOBS, { namespace: namespace!, name });
    if (job === undefined) return;
    const ttl = job.spec?.ttlSecondsAfterFinished;
    const finished = finishedAt(job);
    if (ttl == null || finished === undefined || job.metadata.deletionTimestamp) return;
    const now = nowMs(this.#ctx);
    const expireAt = finished + ttl * 1000;
    if (now < expireAt) return { requeueAfterMs: expireAt - now };
    const preconditions = { uid: job.metadata.uid!, resourceVersion: job.metadata.resourceVersion! };
    if (await deleteIfExists(this.#ctx.client, JOBS, { namespace: namespace!, name, propagationPolicy: "Foreground", preconditions })) {
      this.#deletionDelay.observe({}, (now - expireAt) / 1000);
    }
  }
}

/** When the Job's Complete or Failed condition became true (ms), if it has. */
function finishedAt(job: Job): number | undefined {
  const c = (job.status?.conditions ?? []).find((x) => (x.type === "Complete" || x.type === "Failed") && x.status === "True");
  if (c === undefined) return undefined;
  const t = c.lastTransitionTime ?? job.status?.completionTime;
  return t ? parseTimestamp(t).getTime() : undefined;
}
