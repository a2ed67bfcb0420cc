// Where the embedded runtime keeps each sandbox's and container's files under
// its root, and the cgroup each container runs in: one formula each, shared by
// the parts that create, supervise, measure and remove them.

import { join } from "node:path";
import type { ContainerRecord, SandboxRecord } from "./records.js";

export class RuntimeLayout {
  constructor(readonly root: string) {}

  /** A sandbox's /etc files: hostname, hosts, resolv.conf. */
  sandboxDir(id: string): string {
    return join(this.root, "sandboxes", id);
  }

  /** The container's own directory: launch scripts, overlay layers, shim log, exit code, seccomp filter. */
  containerDir(id: string): string {
    return join(this.root, "containers", id);
  }
}

/** The container's cgroup: under the agent's cgroup parent for the pod, or the runtime's own per-pod one. */
export function containerCgroup(sandbox: SandboxRecord, c: Pick<ContainerRecord, "id">): string {
  const parent = sandbox.config.linux?.cgroupParent ?? "";
  return join(parent !== "" ? parent.replace(/^\/+/, "") : `orch-embedded/${sandbox.id}`, c.id);
}

/** The runtime's own cgroup of a sandbox (removed with it; a cgroup parent from the agent is the agent's). */
export const sandboxCgroup = (sandboxId: string): string => `orch-embedded/${sandboxId}`;
