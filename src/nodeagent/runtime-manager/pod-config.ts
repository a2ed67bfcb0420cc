// Translating a pod into CRI configs: the sandbox (names, hostname, DNS, ports,
// namespaces, pod-level seccomp) and each container (image, command, env,
// mounts, resources with the swap decision, security context, log path).

import { join } from "node:path";
import { parseQuantity } from "../../api/core/quantity.js";
import type { Container, Pod } from "../../api/core/types.js";
import type { DNSConfig } from "../cri/types.js";
import { podDnsConfig } from "./pod-dns.js";
import type { ContainerConfig, KeyValue, LinuxContainerResources, Mount, NamespaceOption, PodSandboxConfig, PortMapping, SecurityProfile } from "../cri/index.js";
import type { DeepPartial } from "../cri/index.js";
import { expand } from "../env/env.js";
import type { SwapResources } from "../swap/swap.js";
import type { RuntimeLabels } from "../runtime-pod/labels.js";
import { podHostnameAndDomain } from "../runtime-pod/etc-hosts.js";

export interface SandboxInput {
  pod: Pod;
  attempt: number;
  labels: RuntimeLabels;
  podLogsDir: string;
  clusterDNS: readonly string[];
  clusterDomain: string;
  /** The host's DNS settings, the base of Default-policy pods' DNS (pod-dns.ts). */
  hostDns: DNSConfig;
  /** When the sandbox is being made: what of the pod's DNS settings upstream warns about. */
  dnsWarning?: (reason: string, message: string) => void;
  /** The agent's name in the naming table, which the DNS warnings name. */
  agentName?: string;
  seccomp: SecurityProfile;
}

/** Upstream's log directory of a pod: <podLogsDir>/<namespace>_<name>_<uid>. */
export function podLogDirectory(podLogsDir: string, pod: Pod): string {
  return join(podLogsDir, `${pod.metadata.namespace ?? "default"}_${pod.metadata.name}_${pod.metadata.uid}`);
}

/** The pod's namespaces; an ephemeral container with a target shares that container's PID namespace (CRI's TARGET mode). */
export function namespaceOptions(pod: Pod, targetId = ""): NamespaceOption {
  const spec = pod.spec ?? {};
  const pid = spec["hostPID"] ? "NODE" : spec["shareProcessNamespace"] ? "POD" : targetId !== "" ? "TARGET" : "CONTAINER";
  return {
    network: spec.hostNetwork ? "NODE" : "POD",
    pid,
    ipc: spec["hostIPC"] ? "NODE" : "POD",
    targetId: pid === "TARGET" ? targetId : "",
    usernsOptions: null,
  };
}

export function sandboxConfig(input: SandboxInput): DeepPartial<PodSandboxConfig> {
  const { pod, labels } = input;
  const spec = pod.spec ?? {};
  const ns = pod.metadata.namespace ?? "default";
  const ports: PortMapping[] = [];
  for (const c of spec.containers ?? []) {
    for (const p of c.ports ?? []) {
      if (p.hostPort) ports.push({ protocol: (p.protocol ?? "TCP") as PortMapping["protocol"], containerPort: p.containerPort ?? 0, hostPort: p.hostPort, hostIp: p.hostIP ?? "" });
    }
  }
  const dns = podDnsConfig(pod, input);
  const sc = (spec.securityContext ?? {}) as { runAsUser?: number; runAsGroup?: number; supplementalGroups?: number[]; sysctls?: { name?: string; value?: string }[] };
  const privileged = [...(spec.initContainers ?? []), ...(spec.containers ?? [])].some((c) => (c.securityContext as { privileged?: boolean } | null)?.privileged === true);
  return {
    metadata: { name: pod.metadata.name ?? "", uid: pod.metadata.uid ?? "", namespace: ns, attempt: input.attempt },
    // containerd insists on an empty hostname for host-network sandboxes.
    hostname: spec.hostNetwork ? "" : podHostnameAndDomain(pod, input.clusterDomain).hostname,
    logDirectory: podLogDirectory(input.podLogsDir, pod),
    dnsConfig: dns,
    portMappings: ports,
    labels: { ...(pod.metadata.labels ?? {}), [labels.podUid]: pod.metadata.uid ?? "", [labels.podName]: pod.metadata.name ?? "", [labels.podNamespace]: ns },
    annotations: { ...(pod.metadata.annotations ?? {}) },
    linux: {
      cgroupParent: "",
      sysctls: Object.fromEntries((sc.sysctls ?? []).map((s) => [s.name ?? "", s.value ?? ""])),
      securityContext: {
        namespaceOptions: namespaceOptions(pod),
        privileged,
        seccomp: input.seccomp,
        ...(sc.runAsUser !== undefined ? { runAsUser: { value: sc.runAsUser } } : {}),
        ...(sc.runAsGroup !== undefined ? { runAsGroup: { value: sc.runAsGroup } } : {}),
        supplementalGroups: sc.supplementalGroups ?? [],
      },
    },
  };
}

export interface ContainerInput {
  pod: Pod;
  container: Container;
  attempt: number;
  labels: RuntimeLabels;
  envs: KeyValue[];
  mounts: Mount[];
  seccomp: SecurityProfile;
  swap: SwapResources;
  /** For an ephemeral container with targetContainerName: the target's runtime id. */
  targetId?: string;
}

const CPU_PERIOD = 100_000;

/** Upstream's cgroup values: shares from the CPU request (min 2), quota from the limit, memory limit in bytes. */
export function containerResources(container: Container, swap: SwapResources): DeepPartial<LinuxContainerResources> {
  const requestCpu = parseQuantity(container.resources?.requests?.["cpu"] ?? undefined);
  const limitCpu = parseQuantity(container.resources?.limits?.["cpu"] ?? undefined);
  const memory = parseQuantity(container.resources?.limits?.["memory"] ?? undefined) ?? 0;
  const shares = requestCpu !== undefined ? Math.max(2, Math.floor(requestCpu * 1024)) : limitCpu !== undefined ? Math.max(2, Math.floor(limitCpu * 1024)) : 2;
  return {
    cpuShares: shares,
    cpuPeriod: limitCpu !== undefined ? CPU_PERIOD : 0,
    cpuQuota: limitCpu !== undefined ? Math.max(1000, Math.floor(limitCpu * CPU_PERIOD)) : 0,
    memoryLimitInBytes: Math.floor(memory),
    memorySwapLimitInBytes: swap.memorySwapLimitInBytes,
    unified: swap.unified,
  };
}

export function containerConfig(input: ContainerInput): DeepPartial<ContainerConfig> {
  const { pod, container: c, labels } = input;
  const vars = new Map(input.envs.map((kv) => [kv.key, kv.value]));
  const sc = (c.securityContext ?? {}) as {
    privileged?: boolean;
    runAsUser?: number;
    runAsGroup?: number;
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { add?: string[]; drop?: string[] };
  };
  const podSc = (pod.spec?.securityContext ?? {}) as { runAsUser?: number; runAsGroup?: number; supplementalGroups?: number[] };
  const runAsUser = sc.runAsUser ?? podSc.runAsUser;
  const runAsGroup = sc.runAsGroup ?? podSc.runAsGroup;
  return {
    metadata: { name: c.name ?? "", attempt: input.attempt },
    image: { image: c.image ?? "", userSpecifiedImage: c.image ?? "" },
    command: (c.command ?? []).map((s) => expand(s, vars)),
    args: (c.args ?? []).map((s) => expand(s, vars)),
    workingDir: c.workingDir ?? "",
    envs: input.envs,
    mounts: input.mounts,
    labels: { [labels.podUid]: pod.metadata.uid ?? "", [labels.podName]: pod.metadata.name ?? "", [labels.podNamespace]: pod.metadata.namespace ?? "default", [labels.containerName]: c.name ?? "" },
    annotations: {
      [labels.restartCount]: String(input.attempt),
      [labels.terminationGracePeriod]: String(pod.spec?.terminationGracePeriodSeconds ?? 30),
      [labels.terminationMessagePath]: c.terminationMessagePath ?? "",
      [labels.terminationMessagePolicy]: c.terminationMessagePolicy ?? "",
    },
    logPath: `${c.name}/${input.attempt}.log`,
    stdin: c.stdin === true,
    stdinOnce: c.stdinOnce === true,
    tty: c.tty === true,
    linux: {
      resources: containerResources(c, input.swap),
      securityContext: {
        privileged: sc.privileged === true,
        namespaceOptions: namespaceOptions(pod, input.targetId),
        seccomp: input.seccomp,
        readonlyRootfs: sc.readOnlyRootFilesystem === true,
        noNewPrivs: sc.allowPrivilegeEscalation === false,
        ...(runAsUser !== undefined ? { runAsUser: { value: runAsUser } } : {}),
        ...(runAsGroup !== undefined ? { runAsGroup: { value: runAsGroup } } : {}),
        supplementalGroups: podSc.supplementalGroups ?? [],
        ...(sc.capabilities ? { capabilities: { addCapabilities: sc.capabilities.add ?? [], dropCapabilities: sc.capabilities.drop ?? [] } } : {}),
      },
    },
  };
}
