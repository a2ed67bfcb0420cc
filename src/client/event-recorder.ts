// Events about objects (core/v1 Event), as client-go's recorder writes them:
// fire and forget, the same event again within ten minutes bumps `count` and
// `lastTimestamp` instead of adding an object, similar events (one object,
// type and reason, different messages) become one combined event from the
// tenth message on (client-go's aggregator), and at most `maxPending`
// writes wait (more are dropped: events are advice, never worth stalling
// the component that reports them); optionally client-go's spam filter, a
// token bucket per involved object. `kubectl describe` shows them.

import type { Event, ObjectReference } from "../api/core/types.js";
import { formatTimestamp, type ApiObject } from "../machinery/index.js";
import type { RestClient } from "./rest.js";
import { EVENTS } from "../api/resource-refs.js";

const AGGREGATE_MS = 10 * 60_000;
/**
 * Distinct messages of one object, type and reason that are written as events of
 * their own within AGGREGATE_MS; from the tenth on they go into one combined
 * event (client-go's EventAggregator: maxEvents 10). A ReplicaSet of 500
 * replicas reports "Created pod: ..." 500 times: 9 events and one combined one
 * with count 491, not 500 events (bench/density stored 30,000 of them).
 */
export const MAX_SIMILAR = 10;
const COMBINED = "(combined from similar events): ";
/**
 * Events and per-object buckets remembered, least recently used dropped
 * first (client-go's correlator keeps LRU caches of 4,096): a sweep of the
 * whole map per write, as before, cost O(n) per event once thousands of
 * pods each had a recent event (bench/density at 30,000 pods).
 */
export const MAX_REMEMBERED = 4096;

export interface EventRecorderOptions {
  client: RestClient;
  /** source.component and reportingComponent: "default-scheduler". */
  component: string;
  host?: string;
  /** Writes in flight or waiting before new events are dropped (default 1000, upstream's queue). */
  maxPending?: number;
  concurrency?: number;
  /**
   * Per involved object, at most `burst` events, then one more every `everyMs` (client-go's spam
   * filter: 25, then one per 5 minutes); more are dropped. Off unless given.
   */
  perObject?: { burst: number; everyMs: number };
  log?: (line: string) => void;
}

export class EventRecorder {
  readonly #o: EventRecorderOptions;
  /**
   * involved uid + fieldPath + reason + message → the stored event, when it was last seen, and its
   * last write: writes of one event go in order (a repeat right after the first must not create a second).
   */
  readonly #seen = new Map<string, { name: string; namespace: string; count: number; at: number; last: Promise<void> }>();
  readonly #queue: (() => Promise<void>)[] = [];
  #running = 0;
  #dropped = 0;
  /** Source + involved object + type + reason → the distinct messages seen (fewer than MAX_SIMILAR) and when last. */
  readonly #similar = new Map<string, { messages: Set<string>; at: number }>();
  /** Involved object → tokens left and when they were counted (perObject). */
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(options: EventRecorderOptions) {
    this.#o = options;
  }

  /** Events dropped because too many were waiting or their object had used up its share (perObject). */
  get dropped(): number {
    return this.#dropped;
  }

  /** `fieldPath` names the part of the object the event is about (`spec.containers{web}`). */
  event(object: ApiObject, type: "Normal" | "Warning", reason: string, message: string, options: { fieldPath?: string } = {}): void {
    if (this.#queue.length + this.#running >= (this.#o.maxPending ?? 1000) || !this.#take(object)) {
      this.#dropped++;
      return;
    }
    this.#queue.push(() => this.#write(object, type, reason, message, options.fieldPath));
    this.#pump();
  }

  /** Takes a token from the object's bucket (always true without perObject). */
  #take(object: ApiObject): boolean {
    const limit = this.#o.perObject;
    if (limit === undefined) return true;
    const m = object.metadata;
    const key = `${object.kind}\u0000${m.namespace ?? ""}\u0000${m.name}\u0000${m.uid ?? ""}`;
    const now = Date.now();
    const b = this.#buckets.get(key) ?? { tokens: limit.burst, at: now };
    b.tokens = Math.min(limit.burst, b.tokens + (now - b.at) / limit.everyMs);
    b.at = now;
    remember(this.#buckets, key, b);
    if (b.tokens < 1) return false;
    b.tokens--;
    return true;
  }

  #pump(): void {
    while (this.#running < (this.#o.concurrency ?? 8) && this.#queue.length > 0) {
      const job = this.#queue.shift()!;
      this.#running++;
      void job()
        .catch((err: unknown) => this.#o.log?.(`event recorder: ${err instanceof Error ? err.message : String(err)}`))
        .finally(() => {
          this.#running--;
          this.#pump();
        });
    }
  }

  /**
   * The message to write and whether it is the object's combined event: the
   * tenth distinct message of one object, type and reason within ten minutes
   * and every later one go into one event (the oldest message is forgotten so
   * the set stays under MAX_SIMILAR, as client-go's PopAny keeps it bounded).
   */
  #aggregate(object: ApiObject, type: string, reason: string, message: string, now: number): { message: string; combined: boolean } {
    const m = object.metadata;
    const key = [this.#o.component, this.#o.host ?? "", object.kind, m.namespace ?? "", m.name, m.uid ?? "", object.apiVersion, type, reason].join("\u0000");
    let similar = this.#similar.get(key);
    if (similar === undefined || now - similar.at > AGGREGATE_MS) similar = { messages: new Set(), at: now };
    similar.at = now;
    similar.messages.add(message);
    remember(this.#similar, key, similar);
    if (similar.messages.size < MAX_SIMILAR) return { message, combined: false };
    similar.messages.delete(similar.messages.values().next().value!);
    return { message: COMBINED + message, combined: true };
  }

  async #write(object: ApiObject, type: string, reason: string, said: string, fieldPath: string | undefined): Promise<void> {
    const m = object.metadata;
    const namespace = m.namespace || "default";
    const now = Date.now();
    const { message, combined } = this.#aggregate(object, type, reason, said, now);
    // A combined event is one per object, type and reason: its key leaves the message out.
    const key = `${m.uid ?? `${namespace}/${m.name}`}\u0000${fieldPath ?? ""}\u0000${reason}\u0000${combined ? `\u0000${type}` : message}`;
    const ts = formatTimestamp(new Date(now));
    const seen = this.#seen.get(key);
    if (seen !== undefined && now - seen.at < AGGREGATE_MS) {
      const count = ++seen.count;
      seen.at = now;
      remember(this.#seen, key, seen);
      const patch = combined ? { count, lastTimestamp: ts, message } : { count, lastTimestamp: ts };
      const write = seen.last.then(() => this.#o.client.patch(EVENTS, { namespace: seen.namespace, name: seen.name, patch }));
      seen.last = write.then(noop, noop);
      await write;
      return;
    }
    const involvedObject: ObjectReference = {
      kind: object.kind,
      apiVersion: object.apiVersion,
      namespace: m.namespace,
      name: m.name,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      ...(fieldPath !== undefined ? { fieldPath } : {}),
    };
    const name = `${m.name}.${now.toString(16)}${Math.floor(Math.random() * 0xfff).toString(16)}`;
    const ev: Event = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name, namespace },
      involvedObject,
      reason,
      message,
      type,
      source: { component: this.#o.component, ...(this.#o.host ? { host: this.#o.host } : {}) },
      reportingComponent: this.#o.component,
      reportingInstance: this.#o.host ?? "",
      firstTimestamp: ts,
      lastTimestamp: ts,
      count: 1,
    };
    const created = this.#o.client.create(EVENTS, ev);
    const entry = { name, namespace, count: 1, at: now, last: created.then(noop, noop) };
    remember(this.#seen, key, entry);
    try {
      await created;
    } catch (err) {
      if (this.#seen.get(key) === entry) this.#seen.delete(key);
      throw err;
    }
  }
}

/** Sets `key` as the most recently used entry of `map` (a Map iterates in insertion order), dropping the least recently used past MAX_REMEMBERED. */
export function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > MAX_REMEMBERED) map.delete(map.keys().next().value!);
}

function noop(): void {}
