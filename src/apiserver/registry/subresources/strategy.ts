// What the registry store needs of a subresource: how an update through it
// becomes the object to write, and which rule checks it. The store calls
// these hooks at fixed points of its update pipeline (registry/store.ts);
// everything HTTP-facing about a subresource is in ./subresource.ts.

import type { StrategyContext } from "../../../api/resource.js";
import type { ApiObject, FieldError } from "../../../machinery/index.js";

export interface SubresourceStrategy<T extends ApiObject = ApiObject> {
  /** The URL segment (`pods/NAME/status` → "status"); admission sees it as the request's subresource. */
  readonly name: string;
  /**
   * An update (PUT, PATCH, apply) through this subresource: the object to
   * write, from the client's `input` and a private copy of `current`.
   * Without it the input is written as it is (binding: its handler built it).
   */
  prepareUpdate?(input: T, current: T): T;
  /**
   * An update of the main resource: keep here what only this subresource may
   * change (status: .status stays as stored).
   */
  prepareMainUpdate?(next: T, current: T): void;
  /**
   * The kind's rule for updates through this subresource, in place of its
   * validateUpdate (which runs when this is absent).
   */
  validate?(obj: T, old: T, ctx: StrategyContext): FieldError[];
}

/**
 * A copy of `current` where only the field at `path` is taken from `input`
 * (removed when `input` has none): the "only this part moves" rule of
 * upstream's status, finalize and ephemeral-containers strategies.
 */
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
