// API Priority and Fairness objects, as the API server keeps them (upstream's
// APF configuration controller, the parts that do not classify requests):
// - at start, upstream's mandatory and suggested FlowSchemas and
//   PriorityLevelConfigurations are created when missing (existing ones,
//   edited or not, are left alone);
// - every FlowSchema carries the `Dangling` condition: True (reason NotFound)
//   while the priority level it names does not exist, False (Found) once it
//   does; reconciled at start and then every few seconds.

import { bootstrapObjects, type FlowSchema } from "../api/flowcontrol/index.js";
import { findSubresource } from "../api/resource.js";
import { isApiError, type ApiObject } from "../machinery/index.js";
import type { Naming } from "../machinery/naming.js";
import type { Stores } from "./storage-factory.js";

const RECONCILE_INTERVAL_MS = 5000;

function dangling(level: string, exists: boolean, now: Date) {
  return {
    type: "Dangling",
    status: exists ? "False" : "True",
    lastTransitionTime: now.toISOString().replace(/\.\d+Z$/, "Z"),
    reason: exists ? "Found" : "NotFound",
    message: exists
      ? `This FlowSchema references the PriorityLevelConfiguration object named "${level}" and it exists`
      : `This FlowSchema references the PriorityLevelConfiguration object named "${level}" but there is no such object`,
  };
}

/** Sets each FlowSchema's Dangling condition where it is missing or wrong. */
export async function reconcileDangling(stores: Stores, naming: Naming): Promise<void> {
  const schemas = stores.for({ group: naming.flowcontrolGroup, resource: "flowschemas" });
  const levels = stores.for({ group: naming.flowcontrolGroup, resource: "prioritylevelconfigurations" });
  if (schemas === undefined || levels === undefined) return;
  const names = new Set((await levels.list(undefined, {})).items.map((i) => i.object.metadata.name));
  const subresource = findSubresource(schemas.def, "status");
  for (const item of (await schemas.list(undefined, {})).items) {
    const fs = item.object as FlowSchema;
    const level = fs.spec?.priorityLevelConfiguration?.name ?? "";
    const exists = names.has(level);
    const current = (fs.status?.conditions ?? []).find((c) => c.type === "Dangling");
    const want = dangling(level, exists, new Date());
    if (current?.status === want.status && current.message === want.message) continue;
    try {
      await schemas.modify(undefined, fs.metadata.name!, (obj) => {
        const cur = obj as FlowSchema;
        cur.status = { conditions: [...(cur.status?.conditions ?? []).filter((c) => c.type !== "Dangling"), want] };
        return cur as ApiObject;
      }, subresource ? { subresource } : {});
    } catch (err) {
      // Deleted or changed meanwhile: the next round sees it.
      if (!isApiError(err, "NotFound") && !isApiError(err, "Conflict")) throw err;
    }
  }
}

/** Creates the missing bootstrap objects, reconciles once, and keeps reconciling; returns the stop function. */
export async function startFlowControlBootstrap(stores: Stores, naming: Naming, log: (line: string) => void): Promise<() => void> {
  const schemas = stores.for({ group: naming.flowcontrolGroup, resource: "flowschemas" });
  const levels = stores.for({ group: naming.flowcontrolGroup, resource: "prioritylevelconfigurations" });
  if (schemas === undefined || levels === undefined) return () => {};
  const objects = bootstrapObjects(naming);
  for (const [store, list] of [[levels, objects.levels], [schemas, objects.schemas]] as const) {
    for (const obj of list) {
      try {
        await store.create(undefined, obj as ApiObject);
      } catch (err) {
        if (!isApiError(err, "AlreadyExists")) throw err;
      }
    }
  }
  await reconcileDangling(stores, naming);
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    reconcileDangling(stores, naming)
      .catch((err: unknown) => log(`flowcontrol: reconciling FlowSchema conditions: ${String(err)}`))
      .finally(() => (running = false));
  }, RECONCILE_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
