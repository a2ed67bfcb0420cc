// The "only this part moves" rule shared by subresources whose updates
// change one part of the object (status, finalize, ephemeralcontainers),
// as upstream's strategies for them reset everything else.

import type { ApiObject } from "../../machinery/index.js";

/** A copy of `current` where only the field at `path` is taken from `input` (removed when `input` has none). */
export function onlyMoving<T extends ApiObject>(current: T, input: T, path: readonly [string, ...string[]]): T {
  const next = structuredClone(current) as Record<string, unknown>;
  let to = next;
  let from = input as Record<string, unknown> | undefined;
  for (const key of path.slice(0, -1)) {
    to = (to[key] ??= {}) as Record<string, unknown>;
    from = from?.[key] as Record<string, unknown> | undefined;
  }
  const last = path[path.length - 1]!;
  if (from?.[last] !== undefined) to[last] = from[last];
  else delete to[last];
  return next as T;
}
