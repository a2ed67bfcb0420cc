// Waiting on a callback, a timer or an AbortSignal, whichever comes first,
// without leaving a listener on the signal (a stream that waits thousands of
// times on one signal would otherwise pile them up); and writing to a stream
// with backpressure under such a signal. Used by the log streams on both ends,
// and by every retry loop that sleeps until its component stops.

/** Resolves once `start`'s callback runs or `signal` fires. */
export function untilOr(signal: AbortSignal | undefined, start: (done: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      signal?.removeEventListener("abort", done);
      resolve();
    };
    if (signal?.aborted) return resolve();
    signal?.addEventListener("abort", done, { once: true });
    start(done);
  });
}

/** Resolves when the signal fires (at once if it has): a component's "run until stopped". */
export function untilAborted(signal: AbortSignal): Promise<void> {
  return untilOr(signal, () => {});
}

/**
 * Resolves after `ms`, or at once when `signal` fires (or has fired): a retry
 * loop's pause that does not hold up shutdown. The timer is cleared on abort.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return untilOr(signal, (done) => (timer = setTimeout(done, ms))).finally(() => clearTimeout(timer));
}

/** A writable end: an HTTP response, a socket, a stream. */
export interface ChunkSink {
  write(chunk: Buffer): boolean;
  once(event: "drain", listener: () => void): unknown;
}

/** Writes `chunk`; when the sink asks to wait, waits for "drain" or the signal. */
export async function writeOrWait(sink: ChunkSink, chunk: Buffer, signal?: AbortSignal): Promise<void> {
  if (sink.write(chunk) || signal?.aborted) return;
  await untilOr(signal, (done) => sink.once("drain", done));
}
