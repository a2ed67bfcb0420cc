// Events as controllers report them (what `kubectl describe` lists): one
// core/v1 Event per call, named `<object>.<hex nanoseconds>` as upstream's
// recorder names them. Fire and forget: a lost event must not fail a sync.
// Not done: upstream's aggregation of repeats into one event with a count.

import type { ApiObject } from "../machinery/index.js";
import { formatTimestamp } from "../machinery/index.js";
import type { Event } from "../api/core/types.js";
import { errorMessage, nowMs, type ControllerContext } from "./controller.js";
import { EVENTS } from "../api/resource-refs.js";

export class EventRecorder {
  readonly #ctx: ControllerContext;
  readonly #component: string;

  constructor(context: ControllerContext, component: string) {
    this.#ctx = context;
    this.#component = component;
  }

  /** Records `reason`/`message` about `obj` (a Normal or Warning event). */
  record(obj: ApiObject, type: "Normal" | "Warning", reason: string, message: string): void {
    const now = nowMs(this.#ctx);
    const stamp = formatTimestamp(new Date(now));
    const namespace = obj.metadata.namespace || "default";
    const event: Event = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: `${obj.metadata.name}.${(BigInt(now) * 1_000_000n + BigInt(Math.floor(Math.random() * 1e6))).toString(16)}`, namespace },
      involvedObject: {
        kind: obj.kind,
        apiVersion: obj.apiVersion,
        name: obj.metadata.name!,
        uid: obj.metadata.uid!,
        resourceVersion: obj.metadata.resourceVersion!,
        ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
      },
      reason,
      message,
      type,
      source: { component: this.#component },
      firstTimestamp: stamp,
      lastTimestamp: stamp,
      count: 1,
      reportingComponent: this.#component,
      reportingInstance: this.#component,
    };
    this.#ctx.client.create(EVENTS, event).catch((err: unknown) => this.#ctx.log(`${this.#component}: event ${reason} on ${obj.metadata.name} not recorded: ${errorMessage(err)}`));
  }
}
