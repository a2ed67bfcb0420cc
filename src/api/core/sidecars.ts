// Sidecars (upstream's SidecarContainers): init containers with restartPolicy
// Always. They start in order with the other init containers but keep running
// beside the containers; the pod table, the agent and its prober treat them so.

import type { Container } from "./types.js";

export function isSidecar(c: Container | undefined): boolean {
  return c?.restartPolicy === "Always";
}
