// Upstream's slow-start batching for creations: a failing create (quota,
// admission) costs one request, not hundreds.

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
