// Lists that follow watches: list once, then watch from the list's
// resourceVersion (bookmarks keep it fresh); a 410 Gone or a dropped stream
// lists again. Changes are gathered and rendered once per animation frame, so
// a burst of events on a 1,000-pod list costs one render.

import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, getJson, isNetworkError, sleep, watchEvents, type KObject, type Status, type Table, type TableColumn, type TableRow } from "./api.js";
import { collectionPath, tableAccept, type Discovery, type Resource } from "./discovery.js";

interface Reflection<T> {
  path: string;
  query?: Record<string, string>;
  accept: string;
  signal: AbortSignal;
  /** The list's items, keyed; called on every (re)list. */
  reset(list: unknown): void;
  event(type: "ADDED" | "MODIFIED" | "DELETED", object: T): void;
  error(message: string | undefined): void;
}

function rvOf(o: unknown): string | undefined {
  const x = o as { metadata?: { resourceVersion?: string }; rows?: TableRow[] };
  return x.metadata?.resourceVersion || x.rows?.[0]?.object?.metadata.resourceVersion;
}

export async function reflect<T>(r: Reflection<T>): Promise<void> {
  while (!r.signal.aborted) {
    try {
      const q = new URLSearchParams(r.query);
      const list = await getJson<unknown>(`${r.path}?${q}`, { accept: r.accept, signal: r.signal });
      r.reset(list);
      r.error(undefined);
      let rv = rvOf(list);
      for (;;) {
        const wq = new URLSearchParams(r.query);
        wq.set("watch", "1");
        wq.set("allowWatchBookmarks", "true");
        wq.set("timeoutSeconds", "290");
        if (rv) wq.set("resourceVersion", rv);
        let gone = false;
        for await (const ev of watchEvents<T>(`${r.path}?${wq}`, { accept: r.accept, signal: r.signal })) {
          if (ev.type === "ERROR") {
            const status = ev.object as Status;
            if (status.code === 410) {
              gone = true;
              break;
            }
            throw new ApiError(status.code ?? 500, status.message ?? "watch failed");
          }
          rv = rvOf(ev.object) ?? rv;
          if (ev.type !== "BOOKMARK") r.event(ev.type, ev.object);
        }
        if (gone || r.signal.aborted) break;
      }
    } catch (err) {
      if (r.signal.aborted) return;
      if (!isNetworkError(err)) r.error((err as Error).message);
      // A dropped connection is listed again at once (quietly); the server's refusals are retried slowly.
      if (isNetworkError(err)) {
        await sleep(200, r.signal);
        continue;
      }
      await sleep(err instanceof ApiError && (err.code === 403 || err.code === 404) ? 10_000 : 1_000, r.signal);
    }
  }
}

/** Re-renders at most once per frame after `bump()`. */
function useFrameTick(): () => void {
  const [, setTick] = useState(0);
  const pending = useRef(false);
  return () => {
    if (pending.current) return;
    pending.current = true;
    requestAnimationFrame(() => {
      pending.current = false;
      setTick((t) => t + 1);
    });
  };
}

/** Keeps the latest error of a reflection (undefined once it lists again), rendering on a change. */
function reportError(state: { current: { error?: string } }, bump: () => void): (message: string | undefined) => void {
  return (message) => {
    if (state.current.error === message) return;
    state.current.error = message;
    bump();
  };
}

export interface LiveTable {
  columns: TableColumn[];
  rows: TableRow[];
  error: string | undefined;
  loaded: boolean;
}

const rowKey = (row: TableRow) => row.object?.metadata.uid ?? `${row.object?.metadata.namespace ?? ""}/${row.object?.metadata.name ?? ""}`;

/** A kind's Table (its own columns), live. `r` undefined: nothing. */
export function useLiveTable(d: Discovery, r: Resource | undefined, namespace: string | undefined, query: Record<string, string> = {}): LiveTable {
  const bump = useFrameTick();
  const state = useRef<{ columns: TableColumn[]; rows: Map<string, TableRow>; error?: string; loaded: boolean }>({ columns: [], rows: new Map(), loaded: false });
  const queryKey = JSON.stringify(query);
  useEffect(() => {
    state.current = { columns: [], rows: new Map(), loaded: false };
    bump();
    if (r === undefined) return;
    const abort = new AbortController();
    void reflect<Table>({
      path: collectionPath(r, namespace),
      query: { ...query, includeObject: "Metadata" },
      accept: tableAccept(d),
      signal: abort.signal,
      reset(list) {
        const t = list as Table;
        if (t.kind !== "Table") throw new Error(`the server answered ${r.resource} with ${t.kind ?? "something else"}, not a Table (${d.metaGroup})`);
        state.current.columns = t.columnDefinitions;
        state.current.rows = new Map(t.rows.map((row) => [rowKey(row), row]));
        state.current.loaded = true;
        bump();
      },
      event(type, t) {
        if (t.columnDefinitions?.length) state.current.columns = t.columnDefinitions;
        for (const row of t.rows ?? []) {
          if (type === "DELETED") state.current.rows.delete(rowKey(row));
          else state.current.rows.set(rowKey(row), row);
        }
        bump();
      },
      error: reportError(state, bump),
    });
    return () => abort.abort();
  }, [r?.group, r?.resource, namespace, queryKey]);
  const s = state.current;
  const rows = [...s.rows.values()].sort((a, b) => {
    const ma = a.object?.metadata, mb = b.object?.metadata;
    return (ma?.namespace ?? "").localeCompare(mb?.namespace ?? "") || (ma?.name ?? "").localeCompare(mb?.name ?? "");
  });
  return { columns: s.columns, rows, error: s.error, loaded: s.loaded };
}

export interface LiveObjects<T> {
  items: T[];
  error: string | undefined;
  loaded: boolean;
}

/** Full objects of a collection (path undefined: nothing), live. */
export function useLiveObjects<T extends KObject>(path: string | undefined, query: Record<string, string> = {}): LiveObjects<T> {
  const bump = useFrameTick();
  const state = useRef<{ items: Map<string, T>; error?: string; loaded: boolean }>({ items: new Map(), loaded: false });
  const queryKey = JSON.stringify(query);
  useEffect(() => {
    state.current = { items: new Map(), loaded: false };
    bump();
    if (path === undefined) return;
    const abort = new AbortController();
    const key = (o: T) => o.metadata.uid ?? `${o.metadata.namespace}/${o.metadata.name}`;
    void reflect<T>({
      path,
      query,
      accept: "application/json",
      signal: abort.signal,
      reset(list) {
        state.current.items = new Map(((list as { items: T[] }).items ?? []).map((o) => [key(o), o]));
        state.current.loaded = true;
        bump();
      },
      event(type, o) {
        if (type === "DELETED") state.current.items.delete(key(o));
        else state.current.items.set(key(o), o);
        bump();
      },
      error: reportError(state, bump),
    });
    return () => abort.abort();
  }, [path, queryKey]);
  const items = [...state.current.items.values()].sort((a, b) => (a.metadata.namespace ?? "").localeCompare(b.metadata.namespace ?? "") || a.metadata.name.localeCompare(b.metadata.name));
  return { items, error: state.current.error, loaded: state.current.loaded };
}

/** One object, live (a watch on its name); undefined until read, null once deleted or missing. */
export function useLiveObject<T extends KObject>(collection: string | undefined, name: string): { object: T | null | undefined; error: string | undefined } {
  const live = useLiveObjects<T>(collection, { fieldSelector: `metadata.name=${name}` });
  const object = live.items[0] ?? (live.loaded ? null : undefined);
  return { object, error: live.error };
}
