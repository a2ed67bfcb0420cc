// A standalone node agent on a test containerd, as the containerd e2e suites
// run it: busybox imported, static pods from <root>/manifests, files under
// <root>, short PLEG and housekeeping periods, containers stopped on exit.

import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultConfig } from "../../src/nodeagent/config/index.js";
import { startNodeAgent, type NodeAgent, type NodeAgentOptions } from "../../src/nodeagent/index.js";
import { buildBusyboxImage } from "./busybox-image.js";
import { startContainerd, type Containerd } from "./containerd.js";

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

/** A containerd, an agent on it in a fresh folder, and one of the agent's endpoints on a loopback HTTP server. */
export interface ServedContainerdAgent {
  readonly containerd: Containerd;
  readonly agent: NodeAgent;
  /** The agent's files (`manifests/` for static pods, `agent/` its root dir). */
  readonly root: string;
  /** `http://127.0.0.1:PORT` of the endpoint. */
  readonly base: string;
  stop(): Promise<void>;
}

export async function serveContainerdAgent(
  nodeName: string,
  serve: (agent: NodeAgent, req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>,
): Promise<ServedContainerdAgent> {
  const root = mkdtempSync(join(tmpdir(), `${nodeName}-`));
  const containerd = await startContainerd();
  const agent = await startContainerdAgent(containerd, root, nodeName);
  const http = createServer((req, res) => void serve(agent, req, res, new URL(req.url ?? "/", "http://x")));
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  return {
    containerd,
    agent,
    root,
    base: `http://127.0.0.1:${(http.address() as { port: number }).port}`,
    async stop() {
      http.close();
      await agent.stop();
      await containerd.stop();
      rmSync(root, { recursive: true, force: true, maxRetries: 10 });
    },
  };
}
