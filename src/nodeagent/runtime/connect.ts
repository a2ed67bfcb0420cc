// The agent's container runtime (seed 001, "What the service does" 4): the CRI
// endpoint configured, or, when none is, the embedded runtime started under the
// agent's root and called in this process (its socket stays served for crictl
// and others). Whether stopping the agent stops the pods' containers
// (stopContainersOnExit) is carried out here, for either kind.

import { join } from "node:path";
import { CriClient, type InProcessRuntime } from "../cri/index.js";
import type { Shutdown } from "../shutdown/shutdown.js";
import { startEmbeddedRuntime } from "./embedded/index.js";
import type { RegistriesConfig } from "./images/registries.js";

export interface ConnectRuntimeOptions {
  /** A CRI socket; "" starts the embedded runtime under <rootDir>/runtime. */
  endpoint: string;
  imageEndpoint?: string;
  rootDir: string;
  stopContainersOnExit: boolean;
  /** The embedded runtime's host-root fallback: who may use it (agent.ts hostRootFallback), the pods' marker annotation, the host paths hidden from it. */
  hostRoot?: { fallback: "marked" | "any" | "off"; marker: string; masks: string[] };
  /** The label every container of the agent's pods has (its pod's uid). */
  podUidLabel: string;
  /** The embedded runtime's mirrors, credentials and TLS settings per registry (a CRI runtime reads its own). */
  registries?: RegistriesConfig;
  /** Where closing the runtime (and stopping containers) is registered. */
  shutdown: Shutdown;
  log: (line: string) => void;
}

export interface ConnectedRuntime {
  client: CriClient;
  endpoint: string;
  /** As the runtime's Version answers: "containerd", "orch-embedded". */
  name: string;
  version: string;
}

export async function connectRuntime(o: ConnectRuntimeOptions): Promise<ConnectedRuntime> {
  let endpoint = o.endpoint;
  let inProcess: InProcessRuntime | undefined;
  if (endpoint && o.registries?.file) {
    o.log(`registries: ${o.registries.file} applies to the embedded runtime; ${endpoint} reads its registry hosts from its own configuration (containerd: config_path; "orch images containerd-hosts DIR --registry-config ${o.registries.file}" writes them)`);
  }
  if (!endpoint) {
    if (o.registries?.file) {
      const mirrors = [...o.registries.mirrors].map(([registry, m]) => `${registry} → ${m.endpoints.map((u) => u.href).join(", ") || "itself"}`);
      o.log(`registries: ${o.registries.file}: ${mirrors.length > 0 ? `mirrors ${mirrors.join("; ")}` : "no mirrors"}; settings for ${o.registries.configs.size} hosts`);
    }
    const hostRoot = o.hostRoot ?? { fallback: "any", marker: "", masks: [] };
    const embedded = await startEmbeddedRuntime({
      root: join(o.rootDir, "runtime"),
      log: o.log,
      absentImages: hostRoot.fallback === "off" ? "error" : "host-root",
      ...(hostRoot.fallback === "marked" ? { hostRootMarker: hostRoot.marker } : {}),
      hostRootMasks: hostRoot.masks,
      ...(o.registries ? { registries: o.registries } : {}),
    });
    // The embedded runtime stops its own containers on close.
    o.shutdown.defer(() => embedded.close({ stopContainers: o.stopContainersOnExit }));
    endpoint = embedded.endpoint;
    // Called in this process, without the socket.
    inProcess = embedded.inProcess;
  }
  const client = new CriClient({ endpoint, ...(inProcess ? { inProcess } : {}), ...(o.imageEndpoint ? { imageEndpoint: o.imageEndpoint } : {}) });
  o.shutdown.defer(() => client.close());
  // (Steps run last first: this one before the client closes.)
  if (o.stopContainersOnExit && !inProcess) o.shutdown.defer(() => stopPodContainers(client, o.podUidLabel));
  await client.waitForReady(30_000);
  const version = await client.version({ version: "v1" });
  return { client, endpoint, name: version.runtimeName, version: version.runtimeVersion };
}

/** Stops every running container of the agent's pods (those with its pod UID label) at once, as the embedded runtime's close does. */
async function stopPodContainers(runtime: CriClient, podUidLabel: string): Promise<void> {
  const { containers } = await runtime.listContainers({ filter: { id: "", podSandboxId: "", state: { state: "CONTAINER_RUNNING" }, labelSelector: {} } });
  const ours = containers.filter((c) => c.labels[podUidLabel] !== undefined);
  await Promise.all(ours.map((c) => runtime.stopContainer({ containerId: c.id, timeout: 0 }).catch(() => {})));
}
