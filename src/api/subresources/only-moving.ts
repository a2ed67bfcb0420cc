// The "only this part moves" rule shared by subresources whose updates
// change one part of the object (status, finalize, ephemeralcontainers),
// as upstream's strategies for them reset everything else.

import type { ApiObject } from "../../machinery/index.js";
import { copyJson } from "../../machinery/patch/json-value.js";

type Path = readonly [string, ...string[]];

/**
 * A copy of `current` where only the fields at `paths` are taken from
 * `input` (removed where `input` has none). One copy of `current` for all
 * the paths: a status write moves three (status, labels, annotations).
 * `input` is the caller's private copy; its moved parts are taken as they are.
 */
export function onlyMoving<T extends ApiObject>(current: T, input: T, ...paths: Path[]): T {
  const next = copyJson(current) as Record<string, unknown>;
  for (const path of paths) {
    let to = next;
    let from = input as Record<string, unknown> | undefined;
    for (const key of path.slice(0, -1)) {
      to = (to[key] ??= {}) as Record<string, unknown>;
      from = from?.[key] as Record<string, unknown> | undefined;
    }
    const last = path[path.length - 1]!;
    if (from?.[last] !== undefined) to[last] = from[last];
    else delete to[last];
  }
  return next as T;
}
