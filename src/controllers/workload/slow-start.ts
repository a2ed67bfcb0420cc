// Upstream's slow-start batching for creations: a failing create (quota,
// admission) costs one request, not hundreds.

export interface SlowStartOptions {
  /** The first batch's size (default 1). */
  readonly initialBatchSize?: number;
  /**
   * The controller's run: once it ends (the lease lost, the server stopping), no further batch
   * starts. Upstream's controller manager exits when it loses its lease; `orch server` runs the
   * next leader in the same process, and a sync that went on creating after the lease was lost
   * would create beside it (in an HA control plane, beside another server's controllers).
   */
  readonly signal?: AbortSignal;
}

/**
 * Runs `count` calls in batches of 1, 2, 4, ... (upstream's slowStartBatch);
 * stops after the first batch with a failure, or before a batch once the
 * signal fired. Returns how many succeeded, the first error, and whether the
 * signal stopped it.
 */
export async function slowStartBatch(count: number, call: (index: number) => Promise<void>, options: SlowStartOptions = {}): Promise<{ succeeded: number; error?: unknown; stopped?: true }> {
  let done = 0;
  let succeeded = 0;
  for (let batch = Math.min(count, options.initialBatchSize ?? 1); batch > 0; batch = Math.min(2 * batch, count - done)) {
    if (options.signal?.aborted) return { succeeded, stopped: true };
    const results = await Promise.allSettled(Array.from({ length: batch }, (_, i) => call(done + i)));
    done += batch;
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    succeeded += results.filter((r) => r.status === "fulfilled").length;
    if (failed !== undefined) return { succeeded, error: failed.reason };
  }
  return { succeeded };
}
