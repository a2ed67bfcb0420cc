// The loop every workload controller runs: wait for its informers, run
// workers over its queue until the signal fires, then drain; write
// conflicts (a stale cache) are retried shortly rather than backed off. Also the
// slow-start batching upstream uses for creations, so a failing create
// (quota, admission) costs one request, not hundreds.

import { runWorkers, type ProcessResult, type WorkQueue } from "../../client/index.js";
import { isApiError } from "../../machinery/index.js";
import { errorMessage, untilAborted, type ControllerContext } from "../controller.js";

export interface LoopOptions {
  name: string;
  queue: WorkQueue;
  workers: number;
  informers: readonly { waitForSync(signal?: AbortSignal): Promise<boolean> }[];
  process(key: string): Promise<ProcessResult | void>;
}

const CONFLICT_RETRY_MS = 50;

export async function runLoop(ctx: ControllerContext, options: LoopOptions): Promise<void> {
  for (const informer of options.informers) if (!(await informer.waitForSync(ctx.signal))) return;
  const workers = runWorkers(options.queue, {
    workers: options.workers,
    process: async (key) => {
      try {
        return await options.process(key);
      } catch (err) {
        // A conflict means a newer version exists, whose event is on its way to the cache: look again
        // shortly, without growing the key's backoff (stale reads are routine, not failures).
        if (isApiError(err, "Conflict")) return { requeueAfterMs: CONFLICT_RETRY_MS };
        throw err;
      }
    },
    onError: (key, err) => ctx.log(`${options.name}: ${key}: ${errorMessage(err)} (will retry)`),
  });
  await untilAborted(ctx.signal);
  options.queue.shutDown();
  await workers;
}

/**
 * Runs `count` calls in batches of 1, 2, 4, ... (upstream's slowStartBatch);
 * stops after the first batch with a failure. Returns how many succeeded and
 * the first error.
 */
export async function slowStartBatch(count: number, call: (index: number) => Promise<void>, initialBatchSize = 1): Promise<{ succeeded: number; error?: unknown }> {
  let done = 0;
  let succeeded = 0;
  for (let batch = Math.min(count, initialBatchSize); batch > 0; batch = Math.min(2 * batch, count - done)) {
    const results = await Promise.allSettled(Array.from({ length: batch }, (_, i) => call(done + i)));
    done += batch;
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    succeeded += results.filter((r) => r.status === "fulfilled").length;
    if (failed !== undefined) return { succeeded, error: failed.reason };
  }
  return { succeeded };
}
