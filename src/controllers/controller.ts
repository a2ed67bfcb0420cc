// What every controller gets and gives: one shared client, informer factory
// and discovery cache in; a name and a run() that works until the signal
// fires out. Controllers are level-based: informers feed keys to a work
// queue, and each key is reconciled from the current state.

import type { Naming } from "../api/naming.js";
import type { DiscoveryCache, InformerFactory, RestClient } from "../client/index.js";
import type { MetricsRegistry } from "../component/metrics/index.js";

export interface ControllerContext {
  client: RestClient;
  informers: InformerFactory;
  discovery: DiscoveryCache;
  naming: Naming;
  /** Ends the controller. */
  signal: AbortSignal;
  log(line: string): void;
  /** Where controllers record their metrics (the component's registry); none: not recorded. */
  metrics?: MetricsRegistry;
}

export interface ControllerDescriptor {
  /** As `--controllers` names it: "namespace-controller". */
  readonly name: string;
  /** Older names `--controllers` also accepts ("namespace"). */
  readonly aliases?: readonly string[];
  /** Whether `*` includes it. */
  readonly enabledByDefault: boolean;
  /** Starts the controller's informers and workers; resolves once it has stopped (after the signal). */
  run(context: ControllerContext): Promise<void>;
}

/** Resolves when the signal fires. */
export function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
