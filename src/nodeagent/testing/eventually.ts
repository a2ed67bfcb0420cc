// Test helper: wait for a condition instead of sleeping a fixed time.

/** Polls `check` until it returns a value (not undefined), failing after `ms` with the last error. */
export async function eventually<T>(check: () => T | undefined | Promise<T | undefined>, ms = 15_000, what = "condition"): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
