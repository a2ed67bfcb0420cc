// The one run loop of every controller: level-based (a work item is a key,
// reconciled from the current state), `workers` loops over a rate-limited
// queue until the controller's signal fires, then shut down and drained.
// The queue reports workqueue_*{name} into the context's registry (seed 002,
// "workqueue metrics with label name"), whichever controller owns it.

import type { ProcessResult, WorkQueue } from "../client/index.js";
import { isApiError } from "../machinery/index.js";
import { untilAborted } from "../machinery/until.js";
import { errorMessage, type ControllerContext } from "./controller.js";

/** A cache the loop waits for: an informer, or the whole informer factory. */
export interface Syncable {
  waitForSync(signal?: AbortSignal): Promise<boolean>;
}

/** What the loop uses of a controller's context: its signal, log, registry, and the informer factory to wait for. */
export type RunQueueContext = Pick<ControllerContext, "signal" | "log" | "metrics"> & { informers: Syncable };

export interface RunQueueOptions {
  /** The controller's name, which starts its log lines: "replicaset-controller". */
  name: string;
  queue: WorkQueue;
  workers: number;
  /** The caches `process` reads; the workers start once all have synced. Default: every informer of the context's factory. */
  informers?: readonly Syncable[];
  /** A key as log lines name it (default: the key itself), e.g. "namespace web". */
  describe?(key: string): string;
  /** Reconciles one key; throw to retry it after the key's backoff, or return when to look again. */
  process(key: string): Promise<ProcessResult | void>;
}

/**
 * How soon a key whose write met a Conflict is looked at again. A conflict
 * means a newer version exists, whose event is on its way to the cache: a
 * stale read is routine, not a failure, so it is neither logged nor backed off.
 */
export const CONFLICT_RETRY_MS = 50;

/**
 * Waits for the informers, runs the workers until the context's signal
 * fires, then shuts the queue down and waits for the workers. A key is
 * forgotten (its backoff reset) when it succeeds; a failing key is logged as
 * `<name>: <key>: <error> (will retry)` and retried after its backoff. A key
 * is never processed by two workers at once (the queue sees to that).
 */
export async function runQueue(context: RunQueueContext, options: RunQueueOptions): Promise<void> {
  const { signal } = context;
  const { queue, process, describe = (key: string) => key } = options;
  queue.instrument(context.metrics);
  for (const cache of options.informers ?? [context.informers]) {
    if (!(await cache.waitForSync(signal))) return queue.shutDown();
  }
  /** After a pass: back off if asked to, else forget the key's failures and look again when asked. */
  const settle = (key: string, result: ProcessResult | void): void => {
    if (result?.requeueWithBackoff) return queue.addRateLimited(key);
    queue.forget(key);
    if (result?.requeueAfterMs !== undefined) queue.addAfter(key, result.requeueAfterMs);
  };
  const pass = async (key: string): Promise<void> => {
    try {
      settle(key, await process(key));
    } catch (err) {
      if (isApiError(err, "Conflict")) return settle(key, { requeueAfterMs: CONFLICT_RETRY_MS });
      context.log(`${options.name}: ${describe(key)}: ${errorMessage(err)} (will retry)`);
      queue.addRateLimited(key);
    } finally {
      queue.done(key);
    }
  };
  const worker = async (): Promise<void> => {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) await pass(key);
  };
  // At least one worker, whatever a controller's options left undefined.
  const workers = Promise.all(Array.from({ length: options.workers >= 1 ? options.workers : 1 }, worker));
  await untilAborted(signal);
  queue.shutDown();
  await workers;
}
