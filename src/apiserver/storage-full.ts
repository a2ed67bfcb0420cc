// Starting on a full disk (docs/reliability.md, "Disk full"): the embedded
// store opens read-only until space is freed, so a start-up step that only
// makes sure something exists (system namespaces, the `kubernetes` service,
// the bootstrap policy) is skipped with a log line instead of stopping the
// start; what it would write was written by an earlier start.

import { isApiError } from "../machinery/index.js";

/** A write refused because the store's disk is full (507). */
export function isStorageFull(err: unknown): boolean {
  return isApiError(err) && err.code === 507;
}

/** Runs `step`; on a full disk logs that `what` was skipped and returns `otherwise`. */
export async function unlessStorageFull<T>(what: string, log: (line: string) => void, step: () => Promise<T>, otherwise: T): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (!isStorageFull(err)) throw err;
    log(`${what}: skipped, the store is read-only until space is freed (${(err as Error).message})`);
    return otherwise;
  }
}
