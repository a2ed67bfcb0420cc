// Every container of a pod, and every container status, in one list: init
// containers, then containers, then ephemeral containers (upstream's
// VisitContainers order). Logs, exec and the agent's lookups by name use it,
// so a debug container is found wherever a regular one is.

import type { Container, ContainerStatus, PodSpec, PodStatus } from "./types.js";

export function podContainers(spec: PodSpec | null | undefined): Container[] {
  return [...(spec?.initContainers ?? []), ...(spec?.containers ?? []), ...(spec?.ephemeralContainers ?? [])];
}

export function podContainerStatuses(status: PodStatus | null | undefined): ContainerStatus[] {
  return [...(status?.initContainerStatuses ?? []), ...(status?.containerStatuses ?? []), ...(status?.ephemeralContainerStatuses ?? [])];
}
