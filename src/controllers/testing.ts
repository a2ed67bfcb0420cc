// Test support: a controller context over a real test API server, with the
// informers started, and a poll helper. Test code only.

import { namingFor } from "../api/naming.js";
import type { TestServer } from "../apiserver/testing/harness.js";
import { DiscoveryCache, InformerFactory, RestClient, loadKubeconfig } from "../client/index.js";
import type { ControllerContext } from "./controller.js";

export interface TestContext extends ControllerContext {
  lines: string[];
  /** Starts the informers the controller asked for. */
  start(): void;
  stop(): void;
}

export function controllerContext(t: TestServer): TestContext {
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
