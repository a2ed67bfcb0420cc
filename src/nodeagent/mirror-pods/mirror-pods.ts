// Mirror pods (seed 001, "Local files": staticPodPath; upstream's mirror
// client): a static pod runs from a file on the node, and the API shows it as a
// mirror pod of the same name, annotated with the static pod's hash and owned by
// the Node. The agent creates those missing every period; the sync loop does
// not run mirror pods (they only show static pods), and the status manager
// writes static pods' status to them.

import type { Pod } from "../../api/core/types.js";
import type { RestClient } from "../../client/index.js";
import { isApiError } from "../../machinery/index.js";
import { PODS } from "../status/status-manager.js";

export interface MirrorPodsOptions {
  client: Pick<RestClient, "create">;
  /** The static pods the agent runs now. */
  staticPods: () => Pod[];
  /** The API's pod under "namespace/name" as the agent last saw it (its informer), if any. */
  inApi: (key: string) => Pod | undefined;
  /** The annotation keys: a mirror pod's (valued with the static pod's hash), and the static pod's hash. */
  annotations: { mirror: string; hash: string };
  nodeName: string;
  /** The Node's uid once registered: the owner of its mirror pods. */
  nodeUid: () => string | undefined;
  /** A mirror pod was created: the static pod's status can go to it now. */
  onCreated: (staticPodUid: string) => void;
  periodMs: number;
  log?: (line: string) => void;
}

/** The mirror pod the API shows for a static pod. */
export function mirrorPodOf(pod: Pod, o: Pick<MirrorPodsOptions, "annotations" | "nodeName"> & { nodeUid: string | undefined }): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: pod.metadata.name!,
      namespace: pod.metadata.namespace!,
      labels: pod.metadata.labels ?? {},
      annotations: { ...pod.metadata.annotations, [o.annotations.mirror]: pod.metadata.annotations?.[o.annotations.hash] ?? "" },
      ownerReferences: o.nodeUid ? [{ apiVersion: "v1", kind: "Node", name: o.nodeName, uid: o.nodeUid, controller: true }] : [],
    },
    spec: pod.spec!,
  };
}

export class MirrorPods {
  readonly #o: MirrorPodsOptions;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: MirrorPodsOptions) {
    this.#o = options;
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.sync(), this.#o.periodMs);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Creates the mirror pods missing from the API (one already there, by its name, is left alone). */
  async sync(): Promise<void> {
    const { client, log } = this.#o;
    for (const pod of this.#o.staticPods()) {
      if (this.#o.inApi(`${pod.metadata.namespace}/${pod.metadata.name}`)) continue;
      try {
        await client.create(PODS, mirrorPodOf(pod, { ...this.#o, nodeUid: this.#o.nodeUid() }));
        // Its status is written on the next pass of the static pod's worker.
        this.#o.onCreated(pod.metadata.uid!);
      } catch (err) {
        if (!isApiError(err) || err.code !== 409) log?.(`mirror pod ${pod.metadata.namespace}/${pod.metadata.name}: ${(err as Error).message}`);
      }
    }
  }
}
