// The rule for tests that need something installed: without it they skip
// with the reason, except under CI=true, where the missing piece is an error.

/** Returns `reason` as a skip reason, or throws it when CI=true; undefined stays undefined. */
export function skipOrFailInCi(reason: string | undefined): string | undefined {
  if (reason !== undefined && process.env.CI === "true") throw new Error(`${reason}; CI=true, so the test fails instead of skipping`);
  return reason;
}
