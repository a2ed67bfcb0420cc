// Pod defaults that cannot be plain schema defaults (those are in schemas.ts
// and applied first by the store): pull policy by image tag, requests from
// limits, the implied emptyDir, host ports on the host network; and what
// upstream's default admission adds to new pods (priority, tolerations).

import type { Naming } from "../../machinery/naming.js";
import type { Container, PodSpec, Toleration } from "./types.js";

/** Always for `:latest` or an untagged, undigested image; IfNotPresent otherwise (upstream's SetDefaults_Container). */
export function defaultPullPolicy(image: string | undefined): "Always" | "IfNotPresent" {
  if (!image) return "IfNotPresent";
  let name = image;
  const at = name.indexOf("@");
  const digested = at >= 0;
  if (digested) name = name.slice(0, at);
  const slash = name.lastIndexOf("/");
  const colon = name.lastIndexOf(":");
  const tag = colon > slash ? name.slice(colon + 1) : "";
  if (tag === "latest" || (tag === "" && !digested)) return "Always";
  return "IfNotPresent";
}

function defaultContainer(c: Container, hostNetwork: boolean): void {
  if (typeof c !== "object" || c === null) return;
  if (!c.imagePullPolicy) c.imagePullPolicy = defaultPullPolicy(c.image);
  // Requests default to limits, per resource (upstream's SetDefaults_Pod).
  const limits = c.resources?.limits;
  if (limits && typeof limits === "object") {
    const requests = (c.resources!.requests ??= {});
    for (const [name, value] of Object.entries(limits)) if (requests[name] === undefined) requests[name] = value;
  }
  if (hostNetwork) for (const p of c.ports ?? []) if (p && !p.hostPort && p.containerPort) p.hostPort = p.containerPort;
}

/**
 * Defaults of a pod spec wherever one appears (pods and every workload's
 * template); the schema's declared defaults are already applied.
 */
export function defaultPodSpec(spec: PodSpec | undefined | null): void {
  if (typeof spec !== "object" || spec === null) return;
  const hostNetwork = spec.hostNetwork === true;
  for (const list of [spec.initContainers, spec.containers, spec.ephemeralContainers]) {
    if (Array.isArray(list)) for (const c of list) defaultContainer(c, hostNetwork);
  }
  // A volume without a source is an emptyDir (kept for old clients).
  for (const v of spec.volumes ?? []) {
    if (v && typeof v === "object" && Object.keys(v).every((k) => k === "name")) v["emptyDir"] = {};
  }
}

/** Tolerations upstream's DefaultTolerationSeconds admission adds to new pods: 300s for not-ready and unreachable nodes. */
export function defaultTolerations(spec: PodSpec, naming: Naming): void {
  const add = (key: string) => {
    const tolerates = (spec.tolerations ?? []).some(
      (t: Toleration) => (t.key === key || (!t.key && t.operator === "Exists")) && (!t.effect || t.effect === "NoExecute"),
    );
    if (!tolerates) (spec.tolerations ??= []).push({ key, operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 });
  };
  add(`node.${naming.keyDomain}/not-ready`);
  add(`node.${naming.keyDomain}/unreachable`);
}

/** What the priority admission fills in for pods without a priority class: priority 0, may preempt. */
export function defaultPriority(spec: PodSpec): void {
  if (spec.priority === undefined || spec.priority === null) spec.priority = 0;
  if (!spec.preemptionPolicy) spec.preemptionPolicy = "PreemptLowerPriority";
}
