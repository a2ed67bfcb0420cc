// What the node's status is built from (seed 001, "Node status"): its facts
// (addresses, capacity, versions: read again at each registration or update,
// as memory and disk may change) and the signals its conditions come from
// (pressure on memory, disk and PIDs; whether the runtime, its network and
// PLEG are ready).

import type { FeatureGates } from "../../component/index.js";
import { versionInfo } from "../../component/index.js";
import type { NodeAgentConfig } from "../config/index.js";
import type { CriClient } from "../cri/index.js";
import * as host from "../host/host.js";
import type { NodeFacts, Signals } from "./node-status.js";

export interface NodeFactsOptions {
  nodeName: string;
  hostnameOverride: string | undefined;
  hostIP: string;
  rootDir: string;
  config: Pick<NodeAgentConfig, "maxPods" | "evictionHard" | "port">;
  /** "containerd://2.0.0": the runtime's name and version. */
  runtimeVersion: string;
  gates: FeatureGates;
}

export function nodeFacts(o: NodeFactsOptions): NodeFacts {
  return {
    nodeName: o.nodeName,
    // The hostname label names this node alone (topology keys, nodeSelectors rely on it): the override, else the
    // node's name, which is the host's name unless a second node on the same host was given one of its own.
    hostname: host.nodeHostname(o.hostnameOverride || o.nodeName),
    internalIP: o.hostIP,
    ...(host.isPrivateIPv4(o.hostIP) ? {} : { externalIP: o.hostIP }),
    cpu: host.cpuCount(),
    memoryBytes: host.memoryTotalBytes(),
    ephemeralStorageBytes: host.fsStats(o.rootDir).capacityBytes,
    maxPods: o.config.maxPods,
    evictionHard: o.config.evictionHard,
    runtimeVersion: o.runtimeVersion,
    agentVersion: versionInfo().gitVersion,
    port: o.config.port,
    // Features in beta or alpha that are on (upstream's declared features).
    declaredFeatures: o.gates.list().filter((g) => g.enabled && g.stage !== "GA" && !g.name.startsWith("All")).map((g) => g.name),
  };
}

export interface NodeSignalsOptions {
  runtime: Pick<CriClient, "status">;
  rootDir: string;
  pleg: { healthy(): { ok: boolean; message: string } };
}

/** The signals now; a runtime that does not answer is not ready, with why. */
export async function nodeSignals(o: NodeSignalsOptions): Promise<Signals> {
  let runtimeReady = { ok: false, message: "container runtime status check may not have completed yet" };
  let networkReady = { ok: false, message: "container runtime network not ready" };
  try {
    const st = await o.runtime.status({});
    const cond = (type: string) => st.status?.conditions.find((c) => c.type === type);
    const r = cond("RuntimeReady");
    const n = cond("NetworkReady");
    runtimeReady = { ok: r?.status === true, message: `container runtime not ready: RuntimeReady=false reason:${r?.reason ?? ""} message:${r?.message ?? ""}` };
    networkReady = { ok: n?.status === true, message: `container runtime network not ready: NetworkReady=false reason:${n?.reason ?? ""} message:${n?.message ?? ""}` };
  } catch (err) {
    runtimeReady = { ok: false, message: `container runtime is down: ${(err as Error).message}` };
  }
  return {
    memoryAvailableBytes: host.memoryAvailableBytes(),
    memoryTotalBytes: host.memoryTotalBytes(),
    fs: host.fsStats(o.rootDir),
    pids: host.pidStats(),
    runtimeReady,
    networkReady,
    pleg: o.pleg.healthy(),
  };
}
