// `orch server` on either node runtime for the e2e suites that run once per
// runtime: the embedded one, or a private containerd (./containerd.ts) with
// busybox imported under a tag, so pods naming `busybox:1.36` get the pull
// policy IfNotPresent (containerd has no registry here).

import { join } from "node:path";
import { buildBusyboxImage } from "./busybox-image.js";
import { containerdSkipReason, startContainerd, type Containerd } from "./containerd.js";
import { startOrch, type OrchProcess } from "./orch-process.js";

export const NODE_RUNTIMES = ["embedded", "containerd"] as const;
export type NodeRuntime = (typeof NODE_RUNTIMES)[number];

/** Why a suite on `runtime` cannot run here (containerd's own reasons), or false. */
export function runtimeSkipReason(runtime: NodeRuntime): string | false {
  return runtime === "containerd" ? containerdSkipReason() ?? false : false;
}

export interface OrchOnRuntime {
  readonly orch: OrchProcess;
  /** The private containerd, on that runtime. */
  readonly containerd?: Containerd;
  /** Stops orch, then containerd. */
  stop(): Promise<void>;
}

export async function startOrchOn(runtime: NodeRuntime, args: string[]): Promise<OrchOnRuntime> {
  let containerd: Containerd | undefined;
  if (runtime === "containerd") {
    containerd = await startContainerd();
    await buildBusyboxImage({ file: join(containerd.dir, "busybox.tar"), tags: ["docker.io/library/busybox:1.36"] });
    await containerd.importImage(join(containerd.dir, "busybox.tar"));
  }
  const extra = containerd !== undefined ? [`--container-runtime-endpoint=${containerd.endpoint}`] : [];
  // 120 s: the e2e machine may be loaded by parallel builds.
  const orch = await startOrch("server", [...args, ...extra], { readyTimeoutMs: 120_000 }).catch(async (err: unknown) => {
    await containerd?.stop();
    throw err;
  });
  return {
    orch,
    ...(containerd !== undefined ? { containerd } : {}),
    async stop() {
      await orch.stop();
      await containerd?.stop();
    },
  };
}
