// Events older than the watch cache's window, replayed from the backend's own
// history: the state at `after` (a list at that revision) tells additions
// from modifications, then the backend's watch from `after` up to `upTo`
// goes through the same applyChange as the cache's live events.
// CompactedError when the backend no longer holds `after`.

import type { KeyValue, Storage } from "../storage.js";
import { applyChange, decodeRecord, type Cached, type CacheEvent, type WithRevision } from "./cached.js";

export interface HistoryOptions<T> {
  backend: Storage;
  decode(kv: KeyValue): T;
  withRevision: WithRevision<T> | undefined;
}

/** Events under `prefix` in (after, upTo], oldest first. */
export async function historyEvents<T>(options: HistoryOptions<T>, prefix: string, after: number, upTo: number): Promise<CacheEvent<T>[]> {
  const { backend, decode, withRevision } = options;
  const listed = await backend.list(prefix, { revision: after });
  const state = new Map<string, Cached<T>>(listed.items.map((kv) => [kv.key, decodeRecord(kv, decode)]));
  const out: CacheEvent<T>[] = [];
  if (upTo <= after) return out;
  const watch = backend.watch(prefix, { fromRevision: after, prevKv: false });
  watch.requestProgress();
  try {
    for await (const e of watch) {
      if (e.revision > upTo) break;
      if (e.type === "progress") {
        if (e.revision >= upTo) break;
        continue;
      }
      const change =
        e.type === "put"
          ? { key: e.kv.key, current: decodeRecord(e.kv, decode), revision: e.revision }
          : { key: e.key, current: undefined, revision: e.revision };
      const event = applyChange(state, change, withRevision);
      if (event !== undefined) out.push(event);
      if (e.revision === upTo) break;
    }
  } finally {
    watch.close();
  }
  return out;
}
