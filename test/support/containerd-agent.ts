// A standalone node agent on a test containerd, as the containerd e2e suites
// run it: busybox imported, static pods from <root>/manifests, files under
// <root>, short PLEG and housekeeping periods, containers stopped on exit.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { defaultConfig } from "../../src/nodeagent/config/index.js";
import { startNodeAgent, type NodeAgent, type NodeAgentOptions } from "../../src/nodeagent/index.js";
import { buildBusyboxImage } from "./busybox-image.js";
import type { Containerd } from "./containerd.js";

export async function startContainerdAgent(containerd: Containerd, root: string, nodeName: string, more: Partial<NodeAgentOptions> = {}): Promise<NodeAgent> {
  await buildBusyboxImage({ file: join(root, "busybox.tar") });
  await containerd.importImage(join(root, "busybox.tar"));
  mkdirSync(join(root, "manifests"));
  return startNodeAgent({
    stopContainersOnExit: true, // a test leaves no container behind
    nodeName,
    config: { ...defaultConfig(), staticPodPath: join(root, "manifests"), fileCheckFrequency: 1_000 },
    rootDir: join(root, "agent"),
    podLogsDir: join(root, "logs"),
    runtimeEndpoint: containerd.endpoint,
    log: () => {},
    ...more,
    tuning: { plegPeriodMs: 250, housekeepingMs: 1_000, ...more.tuning },
  });
}
