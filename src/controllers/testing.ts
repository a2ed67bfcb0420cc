// Test support: a controller context over a real test API server, with the
// informers started, and a poll helper. Test code only.

import { namingFor } from "../api/naming.js";
import type { TestServer } from "../apiserver/testing/harness.js";
import { DiscoveryCache, InformerFactory, RestClient, loadKubeconfig } from "../client/index.js";
import type { ControllerContext } from "./controller.js";
import type { MetricsRegistryLike } from "./metrics.js";

export interface TestContext extends ControllerContext {
  lines: string[];
  /** Starts the informers the controller asked for. */
  start(): void;
  stop(): void;
}

/** `extra`: metrics, config or a clock for the controller under test. */
export function controllerContext(t: TestServer, extra: Pick<ControllerContext, "metrics" | "config" | "now"> = {}): TestContext {
  const client = new RestClient(loadKubeconfig(t.server.kubeconfigPath));
  const abort = new AbortController();
  const lines: string[] = [];
  const informers = new InformerFactory({ client });
  return {
    client,
    informers,
    discovery: new DiscoveryCache({ client, maxAgeMs: 100 }),
    naming: namingFor(),
    signal: abort.signal,
    log: (line) => lines.push(line),
    lines,
    ...extra,
    start: () => informers.start(abort.signal),
    stop: () => {
      abort.abort();
      client.close();
    },
  };
}

/** Polls until `check` resolves truthy; fails naming `what` after `ms`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, ms = 8000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A metrics registry that keeps every sample in a map (`name{a="1"}` →
 * value), for asserting what a controller recorded.
 */
export function recordingMetrics(): MetricsRegistryLike & { samples: Map<string, number>; value(name: string, labels?: Record<string, string>): number } {
  const samples = new Map<string, number>();
  const key = (name: string, labels: Record<string, string> = {}) =>
    `${name}{${Object.keys(labels).sort().map((k) => `${k}="${labels[k]}"`).join(",")}}`;
  const metric = (name: string) => ({
    inc: (labels?: Record<string, string>, amount = 1) => samples.set(key(name, labels), (samples.get(key(name, labels)) ?? 0) + amount),
    set: (labels: Record<string, string>, value: number) => samples.set(key(name, labels), value),
    observe: (labels: Record<string, string>) => samples.set(key(`${name}_count`, labels), (samples.get(key(`${name}_count`, labels)) ?? 0) + 1),
  });
  return {
    samples,
    value: (name, labels) => samples.get(key(name, labels)) ?? 0,
    counter: (o) => metric(o.name),
    gauge: (o) => metric(o.name),
    histogram: (o) => metric(o.name),
  };
}
