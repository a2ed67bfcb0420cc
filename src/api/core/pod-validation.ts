// Pod spec rules with upstream's paths and messages (pkg/apis/core/validation):
// containers, ports, env, mounts, volumes, probes, policies and tolerations,
// plus the update rule that a pod's spec is immutable but for a few fields.
// Exported for workload templates, which validate the same spec at their own path.

import { isIP } from "node:net";
import { field, validateLabels, type FieldError } from "../../machinery/index.js";
import {
  inclusiveRangeError,
  jsonEqual,
  validateDNS1123Label,
  validateDNS1123Subdomain,
  validateEnum,
  validateNonnegative,
  validatePortNumOrName,
  validateProtocol,
  validateQualifiedName,
  isValidPortName,
  isValidPortNum,
} from "./validation.js";
import type { Container, EphemeralContainer, PodSpec, Probe, Toleration, Volume } from "./types.js";
import { copyJson } from "../../machinery/patch/json-value.js";

const RESTART_POLICIES = ["Always", "OnFailure", "Never"];
const DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
const PULL_POLICIES = ["Always", "IfNotPresent", "Never"];
const TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
const MAX_INT32 = 2147483647;
/** Upstream's dnsConfig limits (the legacy ones: ExpandedDNSConfig is off). */
const MAX_DNS_NAMESERVERS = 3;
const MAX_DNS_SEARCH_PATHS = 6;
const MAX_DNS_SEARCH_LIST_CHARS = 256;

interface PodDNSConfig {
  nameservers?: string[] | null;
  searches?: string[] | null;
  options?: { name?: string | null; value?: string | null }[] | null;
}

/** dnsConfig: required (with a nameserver) under dnsPolicy None; at most 3 IP nameservers; 6 subdomain searches, 256 characters; named options. */
function validatePodDNSConfig(dns: PodDNSConfig | null | undefined, policy: string | undefined, path: string): FieldError[] {
  if (policy === "None") {
    if (!dns) return [field.required(path, "must provide `dnsConfig` when `dnsPolicy` is None")];
    if (!dns.nameservers?.length) return [field.required(`${path}.nameservers`, "must provide at least one DNS nameserver when `dnsPolicy` is None")];
  }
  if (!dns) return [];
  const errs: FieldError[] = [];
  const nameservers = dns.nameservers ?? [];
  if (nameservers.length > MAX_DNS_NAMESERVERS) errs.push(field.invalid(`${path}.nameservers`, nameservers, `must not have more than ${MAX_DNS_NAMESERVERS} nameservers`));
  nameservers.forEach((ns, i) => {
    if (isIP(ns) === 0) errs.push(field.invalid(`${path}.nameservers[${i}]`, ns, "must be valid IP address"));
  });
  const searches = dns.searches ?? [];
  if (searches.length > MAX_DNS_SEARCH_PATHS) errs.push(field.invalid(`${path}.searches`, searches, `must not have more than ${MAX_DNS_SEARCH_PATHS} search paths`));
  if (searches.join(" ").length > MAX_DNS_SEARCH_LIST_CHARS) errs.push(field.invalid(`${path}.searches`, searches, `must not have more than ${MAX_DNS_SEARCH_LIST_CHARS} characters (including spaces) in the search list`));
  // A trailing dot is fine.
  searches.forEach((s, i) => errs.push(...validateDNS1123Subdomain(s.replace(/\.$/, ""), `${path}.searches[${i}]`)));
  (dns.options ?? []).forEach((o, i) => {
    if (!o?.name) errs.push(field.required(`${path}.options[${i}]`, "must not be empty"));
  });
  return errs;
}

/** The VolumeSource fields served (schemas.ts); a volume sets exactly one. */
const VOLUME_SOURCES = [
  "hostPath",
  "emptyDir",
  "secret",
  "nfs",
  "persistentVolumeClaim",
  "downwardAPI",
  "configMap",
  "projected",
  "csi",
  "ephemeral",
  "image",
];

export interface PodSpecValidationOptions {
  /** Workload templates may leave images empty (a controller or policy fills them in). */
  template?: boolean;
}

/** A whole pod spec at `path` (`spec` for pods, `spec.template.spec` for workloads). */
/** Upstream's sysctl name format (segments joined by `.` or `/`), at most 253 characters. */
const SYSCTL_FMT = "([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?";
const SYSCTL_RE = new RegExp(`^${SYSCTL_FMT}$`);

/** spec.securityContext.sysctls: names required, well-formed and unique (upstream's validateSysctls). */
function validateSysctls(sysctls: readonly { name?: string | null }[] | null | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (sysctls ?? []).forEach((s, i) => {
    const name = s?.name ?? "";
    if (name === "") errs.push(field.required(`${path}[${i}].name`, ""));
    else if (name.length > 253 || !SYSCTL_RE.test(name)) errs.push(field.invalid(`${path}[${i}].name`, name, `must have at most 253 characters and match regex ${SYSCTL_FMT}`));
    else if (seen.has(name)) errs.push(field.duplicate(`${path}[${i}].name`, name));
    seen.add(name);
  });
  return errs;
}

export function validatePodSpec(spec: PodSpec | undefined | null, path: string, options: PodSpecValidationOptions = {}): FieldError[] {
  if (typeof spec !== "object" || spec === null) return [field.required(path, "")];
  const errs: FieldError[] = [];
  const volumeNames = validateVolumes(spec.volumes, `${path}.volumes`, errs);
  const names = new Set<string>();
  const portNames = new Set<string>();
  const ctx: ContainerContext = { volumeNames, names, portNames, hostNetwork: spec.hostNetwork === true, template: options.template === true, targets: new Set() };

  (spec.initContainers ?? []).forEach((c, i) => validateContainer(c, `${path}.initContainers[${i}]`, ctx, "init", errs));
  const containers = spec.containers ?? [];
  if (!Array.isArray(containers) || containers.length === 0) errs.push(field.required(`${path}.containers`, ""));
  else containers.forEach((c, i) => validateContainer(c, `${path}.containers[${i}]`, ctx, "regular", errs));
  // An ephemeral container may target an init or regular container, never another ephemeral one.
  ctx.targets = new Set(names);
  (spec.ephemeralContainers ?? []).forEach((c, i) => validateContainer(c, `${path}.ephemeralContainers[${i}]`, ctx, "ephemeral", errs));

  errs.push(...validateSysctls(spec.securityContext?.["sysctls"] as { name?: string | null }[] | undefined, `${path}.securityContext.sysctls`));
  errs.push(...validateEnum(spec.restartPolicy, `${path}.restartPolicy`, RESTART_POLICIES));
  errs.push(...validateEnum(spec.dnsPolicy, `${path}.dnsPolicy`, DNS_POLICIES));
  errs.push(...validatePodDNSConfig(spec["dnsConfig"] as PodDNSConfig | null | undefined, spec.dnsPolicy, `${path}.dnsConfig`));
  if (spec.activeDeadlineSeconds !== undefined && spec.activeDeadlineSeconds !== null) {
    const v = spec.activeDeadlineSeconds;
    if (v < 1 || v > MAX_INT32) errs.push(field.invalid(`${path}.activeDeadlineSeconds`, v, inclusiveRangeError(1, MAX_INT32)));
  }
  errs.push(...validateLabels(spec.nodeSelector ?? undefined, `${path}.nodeSelector`));
  if (spec.serviceAccountName) errs.push(...validateDNS1123Subdomain(spec.serviceAccountName, `${path}.serviceAccountName`));
  if (spec.nodeName) errs.push(...validateDNS1123Subdomain(spec.nodeName, `${path}.nodeName`));
  if (spec.hostname) errs.push(...validateDNS1123Label(spec.hostname, `${path}.hostname`));
  if (spec.subdomain) errs.push(...validateDNS1123Label(spec.subdomain, `${path}.subdomain`));
  if (spec.schedulerName) errs.push(...validateDNS1123Subdomain(spec.schedulerName, `${path}.schedulerName`));
  if (spec.priorityClassName) errs.push(...validateDNS1123Subdomain(spec.priorityClassName, `${path}.priorityClassName`));
  if (spec.preemptionPolicy) errs.push(...validateEnum(spec.preemptionPolicy, `${path}.preemptionPolicy`, ["PreemptLowerPriority", "Never"]));
  errs.push(...validateNonnegative(spec.terminationGracePeriodSeconds, `${path}.terminationGracePeriodSeconds`));
  errs.push(...validateTolerations(spec.tolerations, `${path}.tolerations`));
  (spec.readinessGates ?? []).forEach((g, i) => errs.push(...validateQualifiedName(g?.conditionType ?? "", `${path}.readinessGates[${i}].conditionType`)));
  (spec.hostAliases ?? []).forEach((a, i) => {
    if (!a?.ip) errs.push(field.required(`${path}.hostAliases[${i}].ip`, ""));
  });
  const gates = new Set<string>();
  (spec.schedulingGates ?? []).forEach((g, i) => {
    const p = `${path}.schedulingGates[${i}].name`;
    errs.push(...validateQualifiedName(g?.name ?? "", p));
    if (g?.name && gates.has(g.name)) errs.push(field.duplicate(p, g.name));
    if (g?.name) gates.add(g.name);
  });
  return errs;
}

function validateVolumes(volumes: Volume[] | null | undefined, path: string, errs: FieldError[]): Set<string> {
  const names = new Set<string>();
  (volumes ?? []).forEach((v, i) => {
    const p = `${path}[${i}]`;
    if (!v?.name) errs.push(field.required(`${p}.name`, ""));
    else {
      errs.push(...validateDNS1123Label(v.name, `${p}.name`));
      if (names.has(v.name)) errs.push(field.duplicate(`${p}.name`, v.name));
      names.add(v.name);
    }
    const sources = VOLUME_SOURCES.filter((s) => v?.[s] !== undefined && v?.[s] !== null);
    if (sources.length === 0) errs.push(field.required(p, "must specify a volume type"));
    for (const extra of sources.slice(1)) errs.push(field.forbidden(`${p}.${extra}`, "may not specify more than 1 volume type"));
    const src = (sources.length > 0 ? v[sources[0]!] : undefined) as Record<string, unknown> | undefined;
    if (sources[0] === "hostPath" && !src?.["path"]) errs.push(field.required(`${p}.hostPath.path`, ""));
    if (sources[0] === "persistentVolumeClaim" && !src?.["claimName"]) errs.push(field.required(`${p}.persistentVolumeClaim.claimName`, ""));
    if (sources[0] === "configMap" && !src?.["name"]) errs.push(field.required(`${p}.configMap.name`, ""));
    if (sources[0] === "secret" && !src?.["secretName"]) errs.push(field.required(`${p}.secret.secretName`, ""));
  });
  return names;
}

interface ContainerContext {
  volumeNames: Set<string>;
  names: Set<string>;
  portNames: Set<string>;
  hostNetwork: boolean;
  template: boolean;
  /** Names an ephemeral container's targetContainerName may refer to. */
  targets: Set<string>;
}

/**
 * What upstream's allow-list leaves out of ephemeral containers: they must not
 * be relied on for the pod's service, so no ports, probes, resources or hooks.
 */
const NOT_FOR_EPHEMERAL = ["ports", "resources", "resizePolicy", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "restartPolicy"] as const;

function validateContainer(c: Container, path: string, ctx: ContainerContext, role: "init" | "regular" | "ephemeral", errs: FieldError[]): void {
  if (typeof c !== "object" || c === null) {
    errs.push(field.required(path, ""));
    return;
  }
  if (!c.name) errs.push(field.required(`${path}.name`, ""));
  else {
    errs.push(...validateDNS1123Label(c.name, `${path}.name`));
    if (ctx.names.has(c.name)) errs.push(field.duplicate(`${path}.name`, c.name));
    ctx.names.add(c.name);
  }
  if (!c.image) {
    if (!ctx.template) errs.push(field.required(`${path}.image`, ""));
  } else if (c.image.trim() !== c.image) {
    errs.push(field.invalid(`${path}.image`, c.image, "must not have leading or trailing whitespace"));
  }
  errs.push(...validateEnum(c.imagePullPolicy, `${path}.imagePullPolicy`, PULL_POLICIES));
  if (!c.terminationMessagePolicy) {
    errs.push(field.required(`${path}.terminationMessagePolicy`, "must be 'File' or 'FallbackToLogsOnError'"));
  } else if (c.terminationMessagePolicy !== "File" && c.terminationMessagePolicy !== "FallbackToLogsOnError") {
    errs.push(field.invalid(`${path}.terminationMessagePolicy`, c.terminationMessagePolicy, "must be 'File' or 'FallbackToLogsOnError'"));
  }

  // Sidecars are init containers with restartPolicy Always; nothing else may set it.
  const sidecar = role === "init" && c.restartPolicy === "Always";
  if (c.restartPolicy && role !== "ephemeral") {
    if (role === "init") errs.push(...validateEnum(c.restartPolicy, `${path}.restartPolicy`, ["Always"]));
    else errs.push(field.forbidden(`${path}.restartPolicy`, "may not be set for non-init containers"));
  }
  if (role === "ephemeral") {
    for (const f of NOT_FOR_EPHEMERAL) {
      const v = c[f];
      if (v !== undefined && v !== null && v !== "" && !(typeof v === "object" && Object.keys(v).length === 0)) {
        errs.push(field.forbidden(`${path}.${f}`, `cannot be set for an Ephemeral Container`));
      }
    }
    // Sub-path mounts are bind mounts that outlive the container until the pod goes.
    (c.volumeMounts ?? []).forEach((m, i) => {
      for (const f of ["subPath", "subPathExpr"] as const) {
        if (m?.[f]) errs.push(field.forbidden(`${path}.volumeMounts[${i}].${f}`, "cannot be set for an Ephemeral Container"));
      }
    });
    const target = (c as EphemeralContainer).targetContainerName;
    if (target && !ctx.targets.has(target)) errs.push(field.notFound(`${path}.targetContainerName`, target));
  } else if (role === "init" && !sidecar) {
    for (const f of ["lifecycle", "livenessProbe", "readinessProbe", "startupProbe"] as const) {
      if (c[f]) errs.push(field.forbidden(`${path}.${f}`, "may not be set for init containers without restartPolicy=Always"));
    }
  }

  (c.ports ?? []).forEach((port, i) => {
    const p = `${path}.ports[${i}]`;
    if (port?.name) {
      for (const msg of isValidPortName(port.name)) errs.push(field.invalid(`${p}.name`, port.name, msg));
      if (ctx.portNames.has(port.name)) errs.push(field.duplicate(`${p}.name`, port.name));
      ctx.portNames.add(port.name);
    }
    if (!port?.containerPort) errs.push(field.required(`${p}.containerPort`, ""));
    else for (const msg of isValidPortNum(port.containerPort)) errs.push(field.invalid(`${p}.containerPort`, port.containerPort, msg));
    if (port?.hostPort) {
      for (const msg of isValidPortNum(port.hostPort)) errs.push(field.invalid(`${p}.hostPort`, port.hostPort, msg));
      if (ctx.hostNetwork && port.hostPort !== port.containerPort) {
        errs.push(field.invalid(`${p}.hostPort`, port.hostPort, "must match `containerPort` when `hostNetwork` is true"));
      }
    }
    errs.push(...validateProtocol(port?.protocol, `${p}.protocol`));
  });

  (c.env ?? []).forEach((e, i) => {
    const p = `${path}.env[${i}]`;
    if (!e?.name) errs.push(field.required(`${p}.name`, ""));
    else if (!/^[\x20-\x3c\x3e-\x7e]+$/.test(e.name)) {
      errs.push(field.invalid(`${p}.name`, e.name, "a valid environment variable name must consist only of printable ASCII characters other than '='"));
    }
    if (e?.value && e.valueFrom) errs.push(field.invalid(`${p}.valueFrom`, "", "may not be specified when `value` is not empty"));
  });

  const mountPaths = new Set<string>();
  (c.volumeMounts ?? []).forEach((m, i) => {
    const p = `${path}.volumeMounts[${i}]`;
    if (!m?.name) errs.push(field.required(`${p}.name`, ""));
    else if (!ctx.volumeNames.has(m.name)) errs.push(field.notFound(`${p}.name`, m.name));
    if (!m?.mountPath) errs.push(field.required(`${p}.mountPath`, ""));
    else {
      if (mountPaths.has(m.mountPath)) errs.push(field.invalid(`${p}.mountPath`, m.mountPath, "must be unique"));
      mountPaths.add(m.mountPath);
    }
  });

  for (const [name, probe] of [["livenessProbe", c.livenessProbe], ["readinessProbe", c.readinessProbe], ["startupProbe", c.startupProbe]] as const) {
    if (probe) errs.push(...validateProbe(probe, `${path}.${name}`, name !== "readinessProbe"));
  }
}

function validateProbe(probe: Probe, path: string, successMustBeOne: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const handlers = (["exec", "httpGet", "tcpSocket", "grpc"] as const).filter((h) => probe[h] !== undefined && probe[h] !== null);
  if (handlers.length === 0) errs.push(field.required(path, "must specify a handler type"));
  for (const extra of handlers.slice(1)) errs.push(field.forbidden(`${path}.${extra}`, "may not specify more than 1 handler type"));
  if (probe.httpGet) {
    errs.push(...validatePortNumOrName(probe.httpGet.port, `${path}.httpGet.port`));
    errs.push(...validateEnum(probe.httpGet.scheme, `${path}.httpGet.scheme`, ["HTTP", "HTTPS"]));
  }
  if (probe.tcpSocket) errs.push(...validatePortNumOrName(probe.tcpSocket.port, `${path}.tcpSocket.port`));
  if (probe.grpc) {
    for (const msg of isValidPortNum(probe.grpc.port ?? 0)) errs.push(field.invalid(`${path}.grpc.port`, probe.grpc.port ?? 0, msg));
  }
  for (const f of ["initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"] as const) {
    errs.push(...validateNonnegative(probe[f], `${path}.${f}`));
  }
  if (successMustBeOne && probe.successThreshold !== undefined && probe.successThreshold !== 1) {
    errs.push(field.invalid(`${path}.successThreshold`, probe.successThreshold, "must be 1"));
  }
  return errs;
}

export function validateTolerations(tolerations: Toleration[] | null | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  (tolerations ?? []).forEach((t, i) => {
    const p = `${path}[${i}]`;
    if (t?.key) errs.push(...validateQualifiedName(t.key, `${p}.key`));
    if (!t?.key && t?.operator !== "Exists") {
      errs.push(field.invalid(`${p}.operator`, t?.operator ?? "", 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    }
    if (t?.tolerationSeconds !== undefined && t?.tolerationSeconds !== null && t.effect !== "NoExecute") {
      errs.push(field.invalid(`${p}.effect`, t.effect ?? "", "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    switch (t?.operator ?? "") {
      case "":
      case "Equal":
        break;
      case "Exists":
        if (t.value) errs.push(field.invalid(`${p}.operator`, t.value, "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        errs.push(field.notSupported(`${p}.operator`, t.operator, ["Equal", "Exists"]));
    }
    if (t?.effect) errs.push(...validateEnum(t.effect, `${p}.effect`, TAINT_EFFECTS));
  });
  return errs;
}

/** upstream's list of what a pod update may change. */
export const UPDATABLE_POD_SPEC_FIELDS = [
  "`spec.containers[*].image`",
  "`spec.initContainers[*].image`",
  "`spec.activeDeadlineSeconds`",
  "`spec.tolerations` (only additions to existing tolerations)",
  "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
];

/**
 * A pod's spec is immutable except container images, a shrinking
 * activeDeadlineSeconds, added tolerations, removed scheduling gates and
 * nodeSelector/affinity additions while still gated (upstream's ValidatePodUpdate).
 */
export function validatePodSpecUpdate(next: PodSpec | undefined, old: PodSpec | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const n = next ?? {};
  const o = old ?? {};
  const nd = n.activeDeadlineSeconds;
  const od = o.activeDeadlineSeconds;
  if (nd !== undefined && nd !== null) {
    if (nd < 0 || nd > MAX_INT32) return [field.invalid("spec.activeDeadlineSeconds", nd, inclusiveRangeError(0, MAX_INT32))];
    if (od !== undefined && od !== null && od < nd) return [field.invalid("spec.activeDeadlineSeconds", nd, "must be less than or equal to previous value")];
  } else if (od !== undefined && od !== null) {
    return [field.invalid("spec.activeDeadlineSeconds", null, "must not update from a positive integer to nil value")];
  }

  // Existing tolerations stay (tolerationSeconds may change); new ones may be added.
  const oldTolerations = o.tolerations ?? [];
  const newTolerations = n.tolerations ?? [];
  const sameButSeconds = (a: Toleration, b: Toleration) => jsonEqual({ ...a, tolerationSeconds: undefined }, { ...b, tolerationSeconds: undefined });
  if (!oldTolerations.every((ot) => newTolerations.some((nt) => sameButSeconds(ot, nt)))) {
    errs.push(field.forbidden("spec.tolerations", "existing toleration can not be modified except its tolerationSeconds"));
  }

  // Compare with the updatable fields taken from the old spec.
  const munged: PodSpec = copyJson(n);
  const copyImages = (to: PodSpec["containers"], from: PodSpec["containers"]) => {
    (to ?? []).forEach((c, i) => {
      const prev = (from ?? [])[i];
      if (c && prev) c.image = prev.image;
    });
  };
  copyImages(munged.containers, o.containers);
  copyImages(munged.initContainers, o.initContainers);
  munged.activeDeadlineSeconds = o.activeDeadlineSeconds;
  munged.tolerations = o.tolerations;
  const oldTgps = o.terminationGracePeriodSeconds;
  if (typeof oldTgps === "number" && oldTgps < 0 && n.terminationGracePeriodSeconds === 1) munged.terminationGracePeriodSeconds = oldTgps;
  // Gates may only be removed; while gated, scheduling constraints may be added to.
  const oldGates = o.schedulingGates ?? [];
  if ((n.schedulingGates ?? []).every((g) => oldGates.some((og) => og?.name === g?.name))) {
    munged.schedulingGates = o.schedulingGates;
    if (oldGates.length > 0) {
      munged.nodeSelector = o.nodeSelector;
      munged.affinity = o.affinity;
    }
  }
  if (!jsonEqual(munged, o)) {
    const changed = Object.keys({ ...munged, ...o }).filter((k) => !jsonEqual(munged[k], o[k])).sort();
    errs.push(
      field.forbidden(
        "spec",
        `pod updates may not change fields other than ${UPDATABLE_POD_SPEC_FIELDS.join(",")}\n  changed: ${changed.map((k) => `spec.${k}`).join(", ")}`,
      ),
    );
  }
  return errs;
}

/**
 * pods/ephemeralcontainers (upstream's ValidatePodEphemeralContainersUpdate):
 * containers may be added, but an existing one may be neither removed nor
 * changed; the list is matched by name since a patch need not keep its order.
 */
export function validateEphemeralContainersUpdate(next: PodSpec | undefined, old: PodSpec | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const path = "spec.ephemeralContainers";
  const byName = new Map((next?.ephemeralContainers ?? []).map((c) => [c?.name, c]));
  for (const prev of old?.ephemeralContainers ?? []) {
    const now = byName.get(prev.name);
    if (now === undefined) {
      errs.push(field.forbidden(path, `existing ephemeral containers ${JSON.stringify(prev.name)} may not be removed\n`));
    } else if (!jsonEqual(now, prev)) {
      const changed = Object.keys({ ...prev, ...now }).filter((k) => !jsonEqual(now[k], prev[k])).sort();
      errs.push(field.forbidden(path, `existing ephemeral containers ${JSON.stringify(prev.name)} may not be changed\n  changed: ${changed.join(", ")}`));
    }
  }
  return errs;
}
