// A pod as the runtime has it: its sandboxes (newest first) and every
// container with its detailed status, found by the pod-uid label. Pod workers
// read it before acting; the status builder turns it into the API status.

import type { ContainerStatus, CriClient, PodSandboxStatus } from "../cri/index.js";
import type { RuntimeLabels } from "./labels.js";
import { terminationMessage } from "./termination-message.js";

/** A container's status plus the sandbox it belongs to (which the status call does not say). */
export interface RuntimeContainer extends ContainerStatus {
  podSandboxId: string;
}

export interface RuntimePod {
  uid: string;
  /** Newest first. */
  sandboxes: PodSandboxStatus[];
  /** Every container of the pod, newest first. */
  containers: RuntimeContainer[];
}

export async function fetchRuntimePod(runtime: CriClient, labels: RuntimeLabels, uid: string): Promise<RuntimePod> {
  const selector = { [labels.podUid]: uid };
  const [{ items }, { containers }] = await Promise.all([
    runtime.listPodSandbox({ filter: { labelSelector: selector } }),
    runtime.listContainers({ filter: { labelSelector: selector } }),
  ]);
  const sandboxes = await Promise.all(
    items.sort((a, b) => b.createdAt - a.createdAt).map(async (s) => (await runtime.podSandboxStatus({ podSandboxId: s.id })).status!),
  );
  const statuses = await Promise.all(
    containers.map(async (c) => {
      try {
        const status = (await runtime.containerStatus({ containerId: c.id })).status;
        if (!status) return undefined;
        if (status.state === "CONTAINER_EXITED") {
          // The application's message follows the runtime's (upstream's "<runtime message>: <termination message>").
          const annotations = status.annotations ?? {};
          const own = await terminationMessage(status, annotations[labels.terminationMessagePath] ?? "", annotations[labels.terminationMessagePolicy] ?? "");
          if (own !== "") status.message = status.message ? `${status.message}: ${own}` : own;
        }
        return { ...status, podSandboxId: c.podSandboxId };
      } catch {
        return undefined; // removed between the list and the status call
      }
    }),
  );
  return {
    uid,
    sandboxes: sandboxes.filter((s) => s !== null),
    containers: statuses.filter((s): s is RuntimeContainer => s !== undefined).sort((a, b) => b.createdAt - a.createdAt),
  };
}

/** The newest container named `name` (optionally in one sandbox). */
export function latestContainer(pod: RuntimePod, name: string, sandboxId?: string): RuntimeContainer | undefined {
  return pod.containers.find((c) => c.metadata?.name === name && (sandboxId === undefined || c.podSandboxId === sandboxId));
}
