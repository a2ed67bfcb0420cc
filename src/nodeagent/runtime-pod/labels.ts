// The labels and annotations the agent puts on sandboxes and containers so it
// can find a pod's parts in the runtime again (after a restart too). Keys are
// upstream's `io.kubernetes.*` with the naming table's domain reversed.

import type { Naming } from "../../machinery/naming.js";

export interface RuntimeLabels {
  podUid: string;
  podName: string;
  podNamespace: string;
  containerName: string;
  /** Annotations. */
  restartCount: string;
  terminationGracePeriod: string;
  terminationMessagePath: string;
  terminationMessagePolicy: string;
}

export function runtimeLabels(naming: Naming): RuntimeLabels {
  const prefix = naming.keyDomain.split(".").reverse().join(".");
  return {
    podUid: `${prefix}.pod.uid`,
    podName: `${prefix}.pod.name`,
    podNamespace: `${prefix}.pod.namespace`,
    containerName: `${prefix}.container.name`,
    restartCount: `${prefix}.container.restartCount`,
    terminationGracePeriod: `${prefix}.pod.terminationGracePeriod`,
    terminationMessagePath: `${prefix}.container.terminationMessagePath`,
    terminationMessagePolicy: `${prefix}.container.terminationMessagePolicy`,
  };
}
