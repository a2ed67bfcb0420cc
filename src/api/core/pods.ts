// pods: the declaration the generic store runs (names `po`, category `all`,
// status and binding subresources), with upstream's create-time status
// (Pending + QoS class), graceful deletion once scheduled, field selectors
// and the spec-is-immutable update rule. Rules live in pod-*.ts.

import { field, type FieldError } from "../../machinery/index.js";
import { configAnnotations, type Naming } from "../../machinery/naming.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { attach, binding, ephemeralContainers, eviction, exec, log, portforward, proxy, status } from "../subresources/index.js";
import { CORE_V1 } from "./schemas.js";
import { defaultPodSpec, defaultPriority, defaultTolerations } from "./pod-defaults.js";
import { podTable } from "./pod-table.js";
import { validateEphemeralContainersUpdate, validatePodSpec, validatePodSpecUpdate } from "./pod-validation.js";
import { parseQuantity } from "./quantity.js";
import type { Pod, PodSpec } from "./types.js";
import { isPodTerminal } from "./pod-phase.js";

const QOS_RESOURCES = ["cpu", "memory"];

/** Guaranteed, Burstable or BestEffort from the containers' cpu and memory (upstream's GetPodQOS). */
export function podQOSClass(spec: PodSpec | undefined): "Guaranteed" | "Burstable" | "BestEffort" {
  const requests = new Map<string, number>();
  const limits = new Map<string, number>();
  let guaranteed = true;
  for (const c of [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])]) {
    for (const [name, q] of Object.entries(c?.resources?.requests ?? {})) {
      const v = parseQuantity(q);
      if (QOS_RESOURCES.includes(name) && v !== undefined && v > 0) requests.set(name, (requests.get(name) ?? 0) + v);
    }
    const found = new Set<string>();
    for (const [name, q] of Object.entries(c?.resources?.limits ?? {})) {
      const v = parseQuantity(q);
      if (QOS_RESOURCES.includes(name) && v !== undefined && v > 0) {
        found.add(name);
        limits.set(name, (limits.get(name) ?? 0) + v);
      }
    }
    if (!QOS_RESOURCES.every((r) => found.has(r))) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return "BestEffort";
  if (guaranteed) for (const [name, v] of requests) if (limits.get(name) !== v) guaranteed = false;
  return guaranteed && requests.size === limits.size ? "Guaranteed" : "Burstable";
}

/** pods/binding: set spec.nodeName once (upstream answers a bound pod with 409 Conflict; the handler turns this error into one). */
export function bindPod(pod: Pod, target: { kind?: string; name?: string }, now: Date = new Date()): FieldError[] {
  if (target.kind && target.kind !== "Node") return [field.invalid("target.kind", target.kind, "must be empty or 'Node'")];
  if (!target.name) return [field.required("target.name", "")];
  if (pod.metadata.deletionTimestamp) return [field.forbidden("spec.nodeName", `pod ${pod.metadata.name} is being deleted, cannot be assigned to a host`)];
  const spec = (pod.spec ??= {});
  if (spec.nodeName) return [field.forbidden("spec.nodeName", `pod ${pod.metadata.name} is already assigned to node ${JSON.stringify(spec.nodeName)}`)];
  spec.nodeName = target.name;
  const status = (pod.status ??= {});
  const conditions = (status.conditions ??= []).filter((c) => c?.type !== "PodScheduled");
  conditions.push({ type: "PodScheduled", status: "True", lastTransitionTime: now.toISOString().slice(0, 19) + "Z" });
  status.conditions = conditions;
  return [];
}

/**
 * pods/ephemeralcontainers: the whole spec stays valid and existing debug
 * containers stay as they are; mirror pods take none, since their node agent
 * runs the static pod's manifest, not the API object (upstream #113935).
 */
function validateEphemeralContainers(naming: Naming, pod: Pod, old: Pod): FieldError[] {
  if (old.metadata.annotations?.[configAnnotations(naming.keyDomain).mirror] !== undefined) return [field.forbidden("", "static pods do not support ephemeral containers")];
  return [...validatePodSpec(pod.spec, "spec"), ...validateEphemeralContainersUpdate(pod.spec, old.spec)];
}

export function podsResource(naming: Naming): ResourceDefinition {
  return defineResource<Pod>({
    group: "",
    versions: ["v1"],
    resource: "pods",
    singular: "pod",
    kind: "Pod",
    namespaced: true,
    shortNames: ["po"],
    categories: ["all"],
    schema: `${CORE_V1}.Pod`,
    // In discovery's order (upstream's).
    subresources: [
      binding((pod, target) => bindPod(pod, target)),
      attach(),
      ephemeralContainers((pod, old) => validateEphemeralContainers(naming, pod, old)),
      eviction(),
      exec(),
      log(),
      portforward(),
      proxy("PodProxyOptions"),
      status(),
    ],

    defaults(pod) {
      defaultPodSpec(pod.spec);
    },
    prepareForCreate(pod) {
      const spec = (pod.spec ??= {});
      defaultTolerations(spec, naming);
      defaultPriority(spec);
      pod.status = { phase: "Pending", qosClass: podQOSClass(spec) };
      if ((spec.schedulingGates ?? []).length > 0) {
        pod.status.conditions = [
          { type: "PodScheduled", status: "False", reason: "SchedulingGated", message: "Scheduling is blocked due to non-empty scheduling gates" },
        ];
      }
    },
    validate(pod) {
      const errs = validatePodSpec(pod.spec, "spec");
      if ((pod.spec?.ephemeralContainers ?? []).length > 0) errs.push(field.forbidden("spec.ephemeralContainers", "cannot be set on create"));
      return errs;
    },
    validateUpdate(pod, old) {
      return [...validatePodSpec(pod.spec, "spec"), ...validatePodSpecUpdate(pod.spec, old.spec)];
    },

    table: podTable,
    fieldSelectors: {
      "spec.nodeName": (p) => p.spec?.nodeName ?? "",
      "spec.restartPolicy": (p) => p.spec?.restartPolicy ?? "",
      "spec.schedulerName": (p) => p.spec?.schedulerName ?? "",
      "spec.serviceAccountName": (p) => p.spec?.serviceAccountName ?? "",
      "spec.hostNetwork": (p) => String(p.spec?.hostNetwork === true),
      "status.phase": (p) => p.status?.phase ?? "",
      "status.podIP": (p) => p.status?.podIPs?.[0]?.ip ?? "",
      "status.nominatedNodeName": (p) => p.status?.nominatedNodeName ?? "",
    },
    // Upstream's CheckGracefulDelete: unscheduled or finished pods go at once.
    gracePeriodSeconds(pod, requested) {
      // Nothing runs an unscheduled or finished pod, so nothing would ever finish a graceful delete.
      if (!pod.spec?.nodeName) return 0;
      if (isPodTerminal(pod)) return 0;
      if (requested !== undefined) return Math.max(requested, 0);
      const grace = pod.spec.terminationGracePeriodSeconds;
      return typeof grace === "number" ? Math.max(grace, 0) : 30;
    },
  });
}
