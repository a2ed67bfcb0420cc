// The status manager: keeps each pod's latest computed status and, in joined
// mode, writes it to the API through pods/status (a merge patch, serialized
// per pod, latest wins), static pods' to their mirror pods; once a deleted
// pod's containers are gone it deletes the pod with grace period 0.

import type { Pod, PodStatus } from "../../api/core/types.js";
import { isApiError } from "../../machinery/index.js";
import type { RestClient } from "../../client/index.js";
import { PODS } from "../../api/resource-refs.js";

export { PODS };

interface Entry {
  pod: Pod;
  status: PodStatus;
  written: string;
  writing: Promise<void> | undefined;
  dirty: boolean;
}

export interface StatusManagerOptions {
  /** Absent in standalone mode: statuses stay local. */
  client?: RestClient;
  log?: (line: string) => void;
  /** Called after a status write reached the API (benchmarks, tests). */
  onWritten?: (pod: Pod, status: PodStatus) => void;
}

/** A merge patch turning `old` into `next` at the top level of status (removed keys become null). */
function statusPatch(old: PodStatus | undefined, next: PodStatus): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...next };
  for (const key of Object.keys(old ?? {})) if (!(key in next)) patch[key] = null;
  return patch;
}

export class StatusManager {
  readonly #o: StatusManagerOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #listeners = new Set<(uid: string, pod: Pod, status: PodStatus | undefined) => void>();
  #closed = false;

  constructor(options: StatusManagerOptions) {
    this.#o = options;
  }

  get(uid: string): PodStatus | undefined {
    return this.#entries.get(uid)?.status;
  }

  all(): { pod: Pod; status: PodStatus }[] {
    return [...this.#entries.values()].map((e) => ({ pod: e.pod, status: e.status }));
  }

  /** Calls `fn` whenever a pod's local state changes (status undefined: the pod left the node); returns the unsubscribe. */
  subscribe(fn: (uid: string, pod: Pod, status: PodStatus | undefined) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** Records `status` for `pod` (the pod as it is in the API: a mirror pod for a static pod). */
  set(pod: Pod, status: PodStatus): void {
    const uid = pod.metadata.uid!;
    let e = this.#entries.get(uid);
    // Compared only when someone listens (the pod-info interface): the sync loop sets statuses often.
    const changed = this.#listeners.size > 0 && (e === undefined || (e.pod !== pod && JSON.stringify(e.pod) !== JSON.stringify(pod)) || JSON.stringify(e.status) !== JSON.stringify(status));
    if (!e) this.#entries.set(uid, (e = { pod, status, written: "", writing: undefined, dirty: false }));
    e.pod = pod;
    e.status = status;
    if (changed) for (const fn of this.#listeners) fn(uid, pod, status);
    if (!this.#o.client) return;
    if (JSON.stringify(status) === e.written) return;
    e.dirty = true;
    if (!e.writing) e.writing = this.#flush(e);
  }

  /** Waits for pending writes of a pod. */
  async flushed(uid: string): Promise<void> {
    await this.#entries.get(uid)?.writing;
  }

  async #flush(e: Entry): Promise<void> {
    const client = this.#o.client!;
    while (e.dirty && !this.#closed) {
      e.dirty = false;
      const status = e.status;
      const text = JSON.stringify(status);
      const { name, namespace } = e.pod.metadata;
      try {
        await client.patch(PODS, { name: name!, namespace: namespace!, subresource: "status", patch: { status: statusPatch(e.pod.status, status) } });
        e.written = text;
        this.#o.onWritten?.(e.pod, status);
      } catch (err) {
        if (isApiError(err) && err.code === 404) break; // the pod is gone
        this.#o.log?.(`status of pod ${namespace}/${name}: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 500));
        e.dirty = true;
      }
    }
    e.writing = undefined;
  }

  /** Stops writing (the agent is stopping); statuses stay readable. */
  close(): void {
    this.#closed = true;
  }

  /** The pod is gone from the node: delete it from the API for good (grace 0, only this uid). */
  async remove(pod: Pod, options: { deleteFromApi: boolean }): Promise<void> {
    const uid = pod.metadata.uid!;
    const e = this.#entries.get(uid);
    await e?.writing;
    if (this.#entries.delete(uid)) for (const fn of this.#listeners) fn(uid, e?.pod ?? pod, undefined);
    if (!options.deleteFromApi || !this.#o.client) return;
    try {
      await this.#o.client.delete(PODS, { name: pod.metadata.name!, namespace: pod.metadata.namespace!, gracePeriodSeconds: 0, preconditions: { uid } });
    } catch (err) {
      if (!isApiError(err) || (err.code !== 404 && err.code !== 409)) this.#o.log?.(`deleting pod ${pod.metadata.namespace}/${pod.metadata.name}: ${(err as Error).message}`);
    }
  }
}
