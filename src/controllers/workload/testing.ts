// Test support for the workload controllers. No node agent or scheduler runs
// in these tests: the test plays the node agent where readiness matters, by
// writing pod status (Running, Ready) through pods/status. Test code only.

import { after, before } from "node:test";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import { formatTimestamp } from "../../machinery/index.js";
import { isApiError } from "../../machinery/index.js";
import type { ResourceRef, RestClient } from "../../client/index.js";
import { controllerContext, eventually, type TestContext } from "../testing.js";
import type { Pod } from "./pods.js";
import { PODS } from "../../api/resource-refs.js";

/** What the node agent would report for a started pod: phase Running, Ready True (since `readySince`). */
export async function markPodReady(client: RestClient, pod: Pod, options: { readySince?: Date; ready?: boolean } = {}): Promise<Pod> {
  const at = formatTimestamp(options.readySince ?? new Date());
  const ready = options.ready ?? true;
  const status = {
    ...pod.status,
    phase: "Running",
    conditions: [
      { type: "PodScheduled", status: "True", lastTransitionTime: at },
      { type: "Initialized", status: "True", lastTransitionTime: at },
      { type: "ContainersReady", status: ready ? "True" : "False", lastTransitionTime: at },
      { type: "Ready", status: ready ? "True" : "False", lastTransitionTime: at },
    ],
  };
  return client.patch<Pod>(PODS, { namespace: pod.metadata.namespace!, name: pod.metadata.name!, subresource: "status", patch: { status } });
}

/** The pods of `namespace` whose controller has this uid. */
export async function podsOwnedBy(client: RestClient, namespace: string, ownerUid: string | undefined): Promise<Pod[]> {
  const list = await client.list<Pod>(PODS, { namespace });
  return list.items.filter((p) => (p.metadata.ownerReferences ?? []).some((r) => r.uid === ownerUid && r.controller));
}

/** Plays the node agent for a whole namespace: marks every pod not yet Ready as Running and Ready. Returns how many it marked. */
export async function markAllReady(client: RestClient, namespace: string): Promise<number> {
  const list = await client.list<Pod>(PODS, { namespace });
  let marked = 0;
  for (const p of list.items) {
    if (p.metadata.deletionTimestamp || (p.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True")) continue;
    await markPodReady(client, p).catch(() => undefined); // it may be gone already
    marked++;
  }
  return marked;
}

/**
 * Registers before/after hooks in the current suite: a test API server with
 * the built-in API, a controller context over it (with `extra`: a metrics
 * registry, config, a clock), and the controllers `start` runs (stopped and
 * awaited after the suite).
 */
export function useControllers(start: (ctx: TestContext) => Promise<void>[], extra: Parameters<typeof controllerContext>[1] = {}): void {
  let t: TestServer;
  let ctx: TestContext;
  let running: Promise<void>[] = [];
  before(async () => {
    t = await startTestServer({ modules: builtinModules() });
    ctx = controllerContext(t, extra);
    running = start(ctx);
    ctx.start();
  });
  after(async () => {
    ctx.stop();
    await Promise.all(running);
    // A sync that was under way when the signal fired may have reopened the client's session; an open
    // session would keep the server's close() waiting for ever.
    ctx.client.close();
    await t.close();
  });
}

/**
 * PATCHes the scale subresource, again on a 409: this branch's server reads
 * the object before applying a scale patch and can lose the race to a status
 * write (wip/writes applies the patch inside the write).
 */
export function scaleTo(client: RestClient, resource: ResourceRef, name: string, replicas: number, namespace = "default"): Promise<boolean> {
  return eventually(`${name} scaled to ${replicas}`, () =>
    client.patch(resource, { namespace, name, subresource: "scale", patch: { spec: { replicas } } }).then(
      () => true,
      (err: unknown) => {
        if (isApiError(err, "Conflict")) return false;
        throw err;
      },
    ),
  );
}
