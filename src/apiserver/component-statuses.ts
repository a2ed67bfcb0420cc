// Keeps the ComponentStatus objects (`kubectl get cs`) current: every few
// seconds the API server asks the controller manager's and the scheduler's
// /healthz at their default addresses (as upstream's API server does) and
// its storage whether it is reachable (reported as etcd-0, whatever the
// backend), and writes an object only when its answer changed. Clients can
// only read the kind (its declaration serves get and list).

import { request } from "node:https";
import { isApiError, type ApiObject } from "../machinery/index.js";
import type { ComponentCondition } from "../api/core/index.js";
import type { RegistryStore } from "./registry/store.js";

export interface ComponentProbe {
  readonly name: string;
  /** An https URL whose 200 means healthy (the component's /healthz). */
  readonly url: string;
}

/** upstream's default probes: the controller manager and the scheduler on this machine. */
export const DEFAULT_PROBES: readonly ComponentProbe[] = [
  { name: "controller-manager", url: "https://127.0.0.1:10257/healthz" },
  { name: "scheduler", url: "https://127.0.0.1:10259/healthz" },
];

export interface ComponentStatusOptions {
  store: RegistryStore;
  storageHealthy(): boolean;
  probes?: readonly ComponentProbe[];
  /** Default 10 s. */
  intervalMs?: number;
  log(line: string): void;
}

function probe(url: string): Promise<ComponentCondition> {
  return new Promise((resolve) => {
    const req = request(url, { rejectUnauthorized: false, timeout: 2000 }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk.length + body.length <= 4096 ? chunk : ""));
      res.on("end", () => {
        if (res.statusCode === 200) resolve({ type: "Healthy", status: "True", message: body.trim() });
        else resolve({ type: "Healthy", status: "False", error: `unhealthy http status code: ${res.statusCode ?? 0} (${res.statusMessage ?? ""})` });
      });
    });
    req.on("timeout", () => req.destroy(new Error("context deadline exceeded")));
    req.on("error", (err) => resolve({ type: "Healthy", status: "False", error: `Get "${url}": ${err.message}` }));
    req.end();
  });
}

/** Starts the refresh loop (first round at once); returns its stop. */
export function startComponentStatuses(options: ComponentStatusOptions): () => void {
  const { store } = options;
  let stopped = false;
  const write = async (name: string, condition: ComponentCondition): Promise<void> => {
    const conditions = [condition];
    try {
      const current = (await store.get(undefined, name)).object as ApiObject & { conditions?: unknown };
      if (JSON.stringify(current.conditions) === JSON.stringify(conditions)) return;
      await store.modify(undefined, name, (obj) => ({ ...obj, conditions }) as ApiObject);
    } catch (err) {
      if (!isApiError(err, "NotFound")) throw err;
      await store.create(undefined, { apiVersion: "v1", kind: "ComponentStatus", metadata: { name }, conditions } as ApiObject);
    }
  };
  const round = async (): Promise<void> => {
    const storage: ComponentCondition = options.storageHealthy()
      ? { type: "Healthy", status: "True", message: '{"health":"true","reason":""}' }
      : { type: "Healthy", status: "False", error: "the storage backend is not reachable" };
    const results = await Promise.all((options.probes ?? DEFAULT_PROBES).map(async (p) => [p.name, await probe(p.url)] as const));
    for (const [name, condition] of [...results, ["etcd-0", storage] as const]) {
      if (stopped) return;
      await write(name, condition).catch((err: unknown) => options.log(`component statuses: ${name}: ${err instanceof Error ? err.message : String(err)}`));
    }
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const loop = (): void => {
    void round().finally(() => {
      if (!stopped) timer = setTimeout(loop, options.intervalMs ?? 10_000).unref();
    });
  };
  loop();
  return () => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
  };
}
