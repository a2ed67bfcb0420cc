// Test support: a controller context over a real test API server, with the
// informers started, and a poll helper. Test code only.

import { after, before } from "node:test";
import { namingFor } from "../machinery/naming.js";
import { startTestServer, type TestServer } from "../apiserver/testing/harness.js";
import { builtinModules } from "../api/index.js";
import type { ApiGroupModule } from "../api/resource.js";
import { DiscoveryCache, InformerFactory, RestClient, loadKubeconfig, type ResourceRef } from "../client/index.js";
import type { ControllerContext } from "./controller.js";
import { getIfExists } from "./resources.js";
import type { MetricsRegistry } from "../component/metrics/index.js";
import { parseExposition } from "../component/metrics/testing.js";
import { sleep } from "../machinery/until.js";

export interface TestContext extends ControllerContext {
  lines: string[];
  /** Starts the informers the controller asked for. */
  start(): void;
  /** Stops the informers and controllers, waits for the given runs to end, then closes the client. */
  stop(...running: Promise<void>[]): Promise<void>;
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
    stop: async (...running) => {
      abort.abort();
      // Workers in the middle of a sync may still send a request (which would open a new session): wait for them first.
      await Promise.all(running);
      client.close();
    },
  };
}

/** What `controllerOnTestServer` fills in before the suite's tests run. */
export interface ControllerFixture {
  t: TestServer;
  ctx: TestContext;
}

/**
 * Registers the suite's `before`/`after`: a test API server (the built-in
 * kinds unless `modules` says otherwise) with one controller running on it,
 * its informers started; after the suite the controller and the server stop.
 */
export function controllerOnTestServer(
  make: (ctx: TestContext) => { run(): Promise<void> },
  options: { modules?: readonly ApiGroupModule[]; extra?: Parameters<typeof controllerContext>[1]; ready?: (ctx: TestContext) => Promise<unknown> } = {},
): ControllerFixture {
  const fixture = {} as ControllerFixture;
  let running: Promise<void>;
  before(async () => {
    fixture.t = await startTestServer({ modules: options.modules ?? builtinModules() });
    fixture.ctx = controllerContext(fixture.t, options.extra);
    running = make(fixture.ctx).run();
    fixture.ctx.start();
    await options.ready?.(fixture.ctx);
  });
  after(async () => {
    await fixture.ctx.stop(running);
    await fixture.t.close();
  });
  return fixture;
}

/** Polls until `check` resolves truthy; fails naming `what` after `ms`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, ms = 8000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** The value of one sample in the registry's exposition (`name` as exposed: `x_total`, `x_count`); 0 when absent. */
export function metricValue(registry: MetricsRegistry, name: string, labels: Record<string, string> = {}): number {
  const want = JSON.stringify(Object.entries(labels).sort());
  for (const family of parseExposition(registry.expose()).values()) {
    for (const sample of family.samples) {
      if (sample.name === name && JSON.stringify(Object.entries(sample.labels).sort()) === want) return sample.value;
    }
  }
  return 0;
}

/** Whether the object is on the server (NotFound: false). */
export async function exists(client: RestClient, ref: ResourceRef, name: string, namespace?: string): Promise<boolean> {
  return (await getIfExists(client, ref, { name, ...(namespace ? { namespace } : {}) })) !== undefined;
}

/** Whether the object is being deleted (has a deletionTimestamp) or is gone already. */
export async function deletingOrGone(ctx: Pick<ControllerContext, "client">, ref: ResourceRef, namespace: string, name: string): Promise<boolean> {
  const obj = await getIfExists(ctx.client, ref, { namespace, name });
  return obj === undefined || !!obj.metadata.deletionTimestamp;
}
