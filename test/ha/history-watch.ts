// Watch invariants for the fault suite. A watcher's record is the sequence of
// what it saw across reconnects: "connect" (a new watch from resourceVersion
// N), events and bookmarks, "gone" (410 Expired) and "relist" (a list at
// resourceVersion R, after which the watcher resumes from R). The invariants:
// - resourceVersions never go backwards, across reconnects too: every event
//   after a connect from N has rv > N, and each event's rv is above the last;
// - every acknowledged create/update whose rv falls in a span the watcher
//   covered (from the rv it connected at, or relisted at, up to the last rv it
//   saw on that connection) appears exactly once, with its key;
// - a 410 followed by a relist is allowed; the writes between the last rv seen
//   and the relist's rv are then not covered.

export type WatchRecord =
  | { kind: "connect"; fromRv: number; server?: string }
  | { kind: "event"; type: string; key: string; rv: number }
  | { kind: "bookmark"; rv: number }
  | { kind: "gone" }
  /** A watch request answered with an error status (not 410): no events, nothing covered. */
  | { kind: "refused"; status: number; body: string }
  | { kind: "relist"; rv: number };

export interface AckedWrite {
  key: string;
  rv: number;
}

export interface WatchViolation {
  watcher: string;
  what: string;
}

/** Checks one watcher's record against the acknowledged writes; returns every violation. */
export function checkWatcher(name: string, record: WatchRecord[], acked: AckedWrite[]): WatchViolation[] {
  const violations: WatchViolation[] = [];
  const spans: [number, number][] = []; // covered (from, to]
  const seenRv = new Map<number, number>();
  const ackedAt = new Map(acked.map((a) => [a.rv, a]));
  let last = -1; // highest rv seen so far (events, bookmarks, relists)
  let spanFrom: number | undefined;
  let spanTo = -1;
  const closeSpan = () => {
    if (spanFrom !== undefined && spanTo > spanFrom) spans.push([spanFrom, spanTo]);
    spanFrom = undefined;
  };
  for (const r of record) {
    switch (r.kind) {
      case "connect":
        closeSpan();
        if (r.fromRv < last) violations.push({ watcher: name, what: `reconnected from rv ${r.fromRv}, below rv ${last} it had already seen` });
        spanFrom = r.fromRv;
        spanTo = r.fromRv;
        break;
      case "gone":
      case "refused":
        closeSpan();
        break;
      case "relist":
        closeSpan();
        if (r.rv < last) violations.push({ watcher: name, what: `relist at rv ${r.rv} went back from rv ${last}` });
        last = Math.max(last, r.rv);
        break;
      case "bookmark":
      case "event": {
        if (spanFrom === undefined) {
          violations.push({ watcher: name, what: `${r.kind} at rv ${r.rv} outside a connection` });
          break;
        }
        if (r.kind === "event" ? r.rv <= spanTo : r.rv < spanTo) {
          violations.push({ watcher: name, what: `${r.kind} rv ${r.rv}${r.kind === "event" ? ` (${r.type} ${r.key})` : ""} not after rv ${spanTo}: out of order or repeated` });
        }
        if (r.kind === "event") {
          seenRv.set(r.rv, (seenRv.get(r.rv) ?? 0) + 1);
          const w = ackedAt.get(r.rv);
          if (w !== undefined && w.key !== r.key) violations.push({ watcher: name, what: `event rv ${r.rv} names ${r.key}, the write at that rv was to ${w.key}` });
        }
        spanTo = Math.max(spanTo, r.rv);
        last = Math.max(last, r.rv);
        break;
      }
    }
  }
  closeSpan();
  for (const w of acked) {
    if (!spans.some(([from, to]) => w.rv > from && w.rv <= to)) continue;
    const count = seenRv.get(w.rv) ?? 0;
    if (count !== 1) violations.push({ watcher: name, what: `acknowledged write ${w.key}@${w.rv} seen ${count} times` });
  }
  return violations;
}

export function checkWatchers(records: Map<string, WatchRecord[]>, acked: AckedWrite[]): WatchViolation[] {
  return [...records].flatMap(([name, record]) => checkWatcher(name, record, acked));
}
