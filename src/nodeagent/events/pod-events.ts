// Events about pods and their containers, as upstream's kubelet records them
// (seed 001): involvedObject is the pod, fieldPath `spec.containers{NAME}` (or
// `spec.initContainers{NAME}`) when a container is meant. Written through the
// client's EventRecorder (aggregation, bounded queue, 25 per pod then one per
// 5 minutes); only a joined agent has one.

import type { Pod } from "../../api/core/types.js";
import { EventRecorder, type RestClient } from "../../client/index.js";

export type EventType = "Normal" | "Warning";

export interface PodEvents {
  /** Records `reason`/`message` about `pod`, or about its container `container` when given. */
  record(pod: Pod, container: string | undefined, type: EventType, reason: string, message: string): void;
}

/** A standalone agent has no API server to tell. */
export const NO_POD_EVENTS: PodEvents = { record: () => {} };

export interface PodEventsOptions {
  client: RestClient;
  /** source.component and reportingComponent: the naming table's agentName. */
  component: string;
  /** The node's name (source.host, reportingInstance). */
  host: string;
  log?: (line: string) => void;
}

export function podEvents(options: PodEventsOptions): PodEvents {
  // client-go's spam filter, as upstream's kubelet has it: a pod whose probe fails every second for
  // hours must not write to the API server every second.
  const recorder = new EventRecorder({ client: options.client, component: options.component, host: options.host, perObject: { burst: 25, everyMs: 300_000 }, ...(options.log ? { log: options.log } : {}) });
  return {
    record(pod, container, type, reason, message) {
      // Pods read from manifest files or lists may lack their type; the reference needs it.
      const object = { ...pod, apiVersion: "v1", kind: "Pod" };
      recorder.event(object, type, reason, message, container === undefined ? {} : { fieldPath: containerFieldPath(pod, container) });
    },
  };
}

/** Upstream's reference to a container of a pod: `spec.containers{web}`, `spec.initContainers{setup}`. */
export function containerFieldPath(pod: Pod, container: string): string {
  const init = (pod.spec?.initContainers ?? []).some((c) => c.name === container);
  return `spec.${init ? "initContainers" : "containers"}{${container}}`;
}
