// Waiting on a callback or an AbortSignal, whichever comes first, without
// leaving a listener on the signal (a stream that waits thousands of times on
// one signal would otherwise pile them up); and writing to a stream with
// backpressure under such a signal. Used by the log streams on both ends.

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
