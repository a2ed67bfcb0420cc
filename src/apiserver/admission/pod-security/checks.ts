// The Pod Security Standards' checks, with upstream's reasons and details
// (the text kubectl users see after `violates PodSecurity "...":`). Each check
// belongs to a level and has versions: the newest one whose minimum is at or
// below the evaluated version applies. Baseline checks apply at baseline and
// restricted; a restricted check may take the place of a baseline one
// (`overrides`). Results list baseline checks, then restricted ones, each
// group in check-id order, as upstream's.

import { HOST_ROOT_ANNOTATIONS } from "../../../api/core/host-root.js";
import { levelRank, type LevelVersion, type Level } from "./levels.js";

export interface SecurityContextLike {
  privileged?: boolean | null;
  allowPrivilegeEscalation?: boolean | null;
  capabilities?: { add?: string[] | null; drop?: string[] | null } | null;
  procMount?: string | null;
  runAsNonRoot?: boolean | null;
  runAsUser?: number | null;
  seLinuxOptions?: { type?: string; user?: string; role?: string; level?: string } | null;
  seccompProfile?: { type?: string; localhostProfile?: string } | null;
  appArmorProfile?: { type?: string; localhostProfile?: string } | null;
  windowsOptions?: { hostProcess?: boolean | null } | null;
  sysctls?: { name?: string; value?: string }[] | null;
}

export interface ContainerLike {
  name?: string;
  ports?: { hostPort?: number | null }[] | null;
  securityContext?: SecurityContextLike | null;
}

export interface PodSpecLike {
  hostNetwork?: boolean | null;
  hostPID?: boolean | null;
  hostIPC?: boolean | null;
  securityContext?: SecurityContextLike | null;
  volumes?: ({ name?: string } & Record<string, unknown>)[] | null;
  initContainers?: ContainerLike[] | null;
  containers?: ContainerLike[] | null;
  ephemeralContainers?: ContainerLike[] | null;
  runtimeClassName?: string | null;
  os?: { name?: string } | null;
}

export interface PodMetaLike {
  annotations?: Readonly<Record<string, string>> | null;
}

export interface CheckResult {
  readonly reason: string;
  readonly detail: string;
}

type CheckFn = (meta: PodMetaLike, spec: PodSpecLike) => CheckResult | undefined;

interface Check {
  readonly id: string;
  readonly level: Exclude<Level, "privileged">;
  readonly versions: readonly { readonly min: number; readonly check: CheckFn }[];
  /** Baseline checks this one replaces at the restricted level. */
  readonly overrides?: readonly string[];
}

// ---- helpers (upstream's message grammar) ----

const plural = (singular: string, many: string, n: number) => (n === 1 ? singular : many);
const quoteAll = (items: readonly string[]) => (items.length === 0 ? "" : `"${items.join('", "')}"`);
const sorted = (set: Set<string>) => [...set].sort();
const containers = (what: readonly string[]) => `${plural("container", "containers", what.length)} ${quoteAll(what)}`;

function eachContainer(spec: PodSpecLike, visit: (c: ContainerLike) => void): void {
  for (const c of spec.initContainers ?? []) visit(c);
  for (const c of spec.containers ?? []) visit(c);
  for (const c of spec.ephemeralContainers ?? []) visit(c);
}

function badContainers(spec: PodSpecLike, bad: (c: ContainerLike) => boolean): string[] {
  const out: string[] = [];
  eachContainer(spec, (c) => {
    if (bad(c)) out.push(c.name ?? "");
  });
  return out;
}

/** "pod and containers "a", "b"" style subjects: the pod when it sets the value itself, then the containers that do. */
function setters(pod: boolean, names: readonly string[]): string[] {
  return [...(pod ? ["pod"] : []), ...(names.length > 0 ? [containers(names)] : [])];
}

// ---- baseline ----

const hostNamespaces: CheckFn = (_m, spec) => {
  const on = [spec.hostNetwork && "hostNetwork=true", spec.hostPID && "hostPID=true", spec.hostIPC && "hostIPC=true"].filter((x): x is string => typeof x === "string");
  return on.length > 0 ? { reason: "host namespaces", detail: on.join(", ") } : undefined;
};

const privileged: CheckFn = (_m, spec) => {
  const bad = badContainers(spec, (c) => c.securityContext?.privileged === true);
  return bad.length > 0 ? { reason: "privileged", detail: `${containers(bad)} must not set securityContext.privileged=true` } : undefined;
};

const BASELINE_CAPABILITIES = new Set(["AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"]);

const capabilitiesBaseline: CheckFn = (_m, spec) => {
  const caps = new Set<string>();
  const bad = badContainers(spec, (c) => {
    const added = (c.securityContext?.capabilities?.add ?? []).filter((cap) => !BASELINE_CAPABILITIES.has(cap));
    added.forEach((cap) => caps.add(cap));
    return added.length > 0;
  });
  return bad.length > 0 ? { reason: "non-default capabilities", detail: `${containers(bad)} must not include ${quoteAll(sorted(caps))} in securityContext.capabilities.add` } : undefined;
};

const hostPathVolumes: CheckFn = (_m, spec) => {
  const bad = (spec.volumes ?? []).filter((v) => v.hostPath != null).map((v) => v.name ?? "");
  return bad.length > 0 ? { reason: "hostPath volumes", detail: `${plural("volume", "volumes", bad.length)} ${quoteAll(bad)}` } : undefined;
};

const hostPorts: CheckFn = (_m, spec) => {
  const ports = new Set<string>();
  const bad = badContainers(spec, (c) => {
    const used = (c.ports ?? []).filter((p) => (p.hostPort ?? 0) !== 0);
    used.forEach((p) => ports.add(String(p.hostPort)));
    return used.length > 0;
  });
  if (bad.length === 0) return undefined;
  const list = sorted(ports);
  return { reason: "hostPort", detail: `${containers(bad)} ${plural("uses", "use", bad.length)} ${plural("hostPort", "hostPorts", list.length)} ${list.join(", ")}` };
};

const APPARMOR_CONTAINER_PREFIX = "container.apparmor.security.beta.kubernetes.io/";
const allowedAppArmor = (v: string) => v === "" || v === "runtime/default" || v.startsWith("localhost/");

const appArmorAnnotations: CheckFn = (meta) => {
  const bad = Object.entries(meta.annotations ?? {})
    .filter(([k, v]) => k.startsWith(APPARMOR_CONTAINER_PREFIX) && !allowedAppArmor(v))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .sort();
  return bad.length > 0 ? { reason: plural("forbidden AppArmor profile", "forbidden AppArmor profiles", bad.length), detail: bad.join(", ") } : undefined;
};

/** 1.30 on: the securityContext.appArmorProfile fields too. */
const appArmorProfile: CheckFn = (meta, spec) => {
  const unconfined = (sc: SecurityContextLike | null | undefined) => sc?.appArmorProfile?.type === "Unconfined";
  const bad = badContainers(spec, (c) => unconfined(c.securityContext));
  const who = setters(unconfined(spec.securityContext), bad);
  const annotations = appArmorAnnotations(meta, spec);
  const parts = [...(who.length > 0 ? [`${who.join(" and ")} must not set securityContext.appArmorProfile.type to "Unconfined"`] : []), ...(annotations ? [annotations.detail] : [])];
  const count = who.length + (annotations ? annotations.detail.split(", ").length : 0);
  return parts.length > 0 ? { reason: plural("forbidden AppArmor profile", "forbidden AppArmor profiles", count), detail: parts.join(", ") } : undefined;
};

const SELINUX_TYPES = new Set(["", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"]);

const seLinuxOptions: CheckFn = (_m, spec) => {
  const types = new Set<string>();
  let user = false;
  let role = false;
  const invalid = (sc: SecurityContextLike | null | undefined) => {
    const o = sc?.seLinuxOptions;
    if (o == null) return false;
    let bad = false;
    if (!SELINUX_TYPES.has(o.type ?? "")) (bad = true), types.add(o.type ?? "");
    if ((o.user ?? "") !== "") (bad = true), (user = true);
    if ((o.role ?? "") !== "") (bad = true), (role = true);
    return bad;
  };
  const pod = invalid(spec.securityContext);
  const bad = badContainers(spec, (c) => invalid(c.securityContext));
  const who = setters(pod, bad);
  if (who.length === 0) return undefined;
  const data = [...(types.size > 0 ? [`${plural("type", "types", types.size)} ${quoteAll(sorted(types))}`] : []), ...(user ? ["user may not be set"] : []), ...(role ? ["role may not be set"] : [])];
  return { reason: "seLinuxOptions", detail: `${who.join(" and ")} set forbidden securityContext.seLinuxOptions: ${data.join("; ")}` };
};

const procMount: CheckFn = (_m, spec) => {
  const types = new Set<string>();
  const bad = badContainers(spec, (c) => {
    const p = c.securityContext?.procMount;
    if (p == null || p === "Default") return false;
    types.add(p);
    return true;
  });
  return bad.length > 0 ? { reason: "procMount", detail: `${containers(bad)} must not set securityContext.procMount to ${quoteAll(sorted(types))}` } : undefined;
};

const SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_PREFIX = "container.seccomp.security.alpha.kubernetes.io/";
const validSeccompType = (t: string | undefined) => t === "RuntimeDefault" || t === "Localhost";

/** Before 1.19: the seccomp annotations. */
const seccompAnnotations: CheckFn = (meta, spec) => {
  const valid = (v: string) => v === "runtime/default" || v === "docker/default" || v.startsWith("localhost/");
  const a = meta.annotations ?? {};
  const bad = new Set<string>();
  if (a[SECCOMP_POD_ANNOTATION] !== undefined && !valid(a[SECCOMP_POD_ANNOTATION]!)) bad.add(`${SECCOMP_POD_ANNOTATION}=${JSON.stringify(a[SECCOMP_POD_ANNOTATION])}`);
  eachContainer(spec, (c) => {
    const key = SECCOMP_CONTAINER_PREFIX + (c.name ?? "");
    if (a[key] !== undefined && !valid(a[key]!)) bad.add(`${key}=${JSON.stringify(a[key])}`);
  });
  return bad.size > 0 ? { reason: "seccompProfile", detail: `forbidden ${plural("annotation", "annotations", bad.size)} ${sorted(bad).join(", ")}` } : undefined;
};

/** From 1.19: securityContext.seccompProfile.type, when set, is RuntimeDefault or Localhost (restricted: must be set). */
function seccompFields(required: boolean): CheckFn {
  return (_m, spec) => {
    const values = new Set<string>();
    const podType = spec.securityContext?.seccompProfile?.type;
    const podSet = spec.securityContext?.seccompProfile != null;
    const podBad = podSet && !validSeccompType(podType);
    if (podBad) values.add(podType ?? "");
    const implicit: string[] = [];
    const bad = badContainers(spec, (c) => {
      const p = c.securityContext?.seccompProfile;
      if (p == null) {
        if (required && !(podSet && !podBad)) implicit.push(c.name ?? "");
        return false;
      }
      if (validSeccompType(p.type)) return false;
      values.add(p.type ?? "");
      return true;
    });
    const who = setters(podBad, bad);
    if (who.length > 0) return { reason: "seccompProfile", detail: `${who.join(" and ")} must not set securityContext.seccompProfile.type to ${quoteAll(sorted(values))}` };
    if (implicit.length > 0) return { reason: "seccompProfile", detail: `pod or ${containers(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"` };
    return undefined;
  };
}

const SAFE_SYSCTLS: readonly { min: number; names: readonly string[] }[] = [
  { min: 0, names: ["kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start"] },
  { min: 27, names: ["net.ipv4.ip_local_reserved_ports"] },
  { min: 29, names: ["net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"] },
];

function sysctls(minor: number): CheckFn {
  const allowed = new Set(SAFE_SYSCTLS.filter((s) => s.min <= minor).flatMap((s) => s.names));
  return (_m, spec) => {
    const bad = (spec.securityContext?.sysctls ?? []).map((s) => s.name ?? "").filter((n) => !allowed.has(n));
    return bad.length > 0 ? { reason: "forbidden sysctls", detail: bad.join(", ") } : undefined;
  };
}

const windowsHostProcess: CheckFn = (_m, spec) => {
  const host = (sc: SecurityContextLike | null | undefined) => sc?.windowsOptions?.hostProcess === true;
  const who = setters(host(spec.securityContext), badContainers(spec, (c) => host(c.securityContext)));
  return who.length > 0 ? { reason: "hostProcess", detail: `${who.join(" and ")} must not set securityContext.windowsOptions.hostProcess=true` } : undefined;
};

// ---- restricted ----

const ALLOWED_VOLUME_SOURCES = new Set(["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"]);
const KNOWN_VOLUME_SOURCES = new Map([
  ["hostPath", "hostPath"], ["gcePersistentDisk", "gcePersistentDisk"], ["awsElasticBlockStore", "awsElasticBlockStore"], ["gitRepo", "gitRepo"],
  ["nfs", "nfs"], ["iscsi", "iscsi"], ["glusterfs", "glusterfs"], ["rbd", "rbd"], ["flexVolume", "flexVolume"], ["cinder", "cinder"],
  ["cephfs", "cephfs"], ["flocker", "flocker"], ["fc", "fc"], ["azureFile", "azureFile"], ["vsphereVolume", "vsphereVolume"], ["quobyte", "quobyte"],
  ["azureDisk", "azureDisk"], ["photonPersistentDisk", "photonPersistentDisk"], ["portworxVolume", "portworxVolume"], ["scaleIO", "scaleIO"], ["storageos", "storageos"],
]);

const restrictedVolumes: CheckFn = (_m, spec) => {
  const bad: string[] = [];
  const types = new Set<string>();
  for (const v of spec.volumes ?? []) {
    const sources = Object.keys(v).filter((k) => k !== "name" && v[k] != null);
    if (sources.some((s) => ALLOWED_VOLUME_SOURCES.has(s))) continue;
    bad.push(v.name ?? "");
    types.add(sources.map((s) => KNOWN_VOLUME_SOURCES.get(s)).find((t) => t !== undefined) ?? "unknown");
  }
  if (bad.length === 0) return undefined;
  const list = sorted(types);
  return { reason: "restricted volume types", detail: `${plural("volume", "volumes", bad.length)} ${quoteAll(bad)} ${plural("uses", "use", bad.length)} ${plural("restricted volume type", "restricted volume types", list.length)} ${quoteAll(list)}` };
};

const allowPrivilegeEscalation: CheckFn = (_m, spec) => {
  const bad = badContainers(spec, (c) => c.securityContext?.allowPrivilegeEscalation !== false);
  return bad.length > 0 ? { reason: "allowPrivilegeEscalation != false", detail: `${containers(bad)} must set securityContext.allowPrivilegeEscalation=false` } : undefined;
};

const runAsNonRoot: CheckFn = (_m, spec) => {
  const podValue = spec.securityContext?.runAsNonRoot;
  const explicit: string[] = [];
  const implicit: string[] = [];
  eachContainer(spec, (c) => {
    const v = c.securityContext?.runAsNonRoot;
    if (v != null) {
      if (!v) explicit.push(c.name ?? "");
    } else if (podValue !== true) implicit.push(c.name ?? "");
  });
  const who = setters(podValue === false, explicit);
  if (who.length > 0) return { reason: "runAsNonRoot != true", detail: `${who.join(" and ")} must not set securityContext.runAsNonRoot=false` };
  if (implicit.length > 0) return { reason: "runAsNonRoot != true", detail: `pod or ${containers(implicit)} must set securityContext.runAsNonRoot=true` };
  return undefined;
};

const runAsUser: CheckFn = (_m, spec) => {
  const who = setters(spec.securityContext?.runAsUser === 0, badContainers(spec, (c) => c.securityContext?.runAsUser === 0));
  return who.length > 0 ? { reason: "runAsUser=0", detail: `${who.join(" and ")} must not set runAsUser=0` } : undefined;
};

const capabilitiesRestricted: CheckFn = (_m, spec) => {
  const missingDrop: string[] = [];
  const adding: string[] = [];
  const caps = new Set<string>();
  eachContainer(spec, (c) => {
    const k = c.securityContext?.capabilities;
    if (k == null) return void missingDrop.push(c.name ?? "");
    if (!(k.drop ?? []).includes("ALL")) missingDrop.push(c.name ?? "");
    const added = (k.add ?? []).filter((cap) => cap !== "NET_BIND_SERVICE");
    added.forEach((cap) => caps.add(cap));
    if (added.length > 0) adding.push(c.name ?? "");
  });
  const details = [
    ...(missingDrop.length > 0 ? [`${containers(missingDrop)} must set securityContext.capabilities.drop=["ALL"]`] : []),
    ...(adding.length > 0 ? [`${containers(adding)} must not include ${quoteAll(sorted(caps))} in securityContext.capabilities.add`] : []),
  ];
  return details.length > 0 ? { reason: "unrestricted capabilities", detail: details.join("; ") } : undefined;
};

/**
 * orch's own baseline check: a pod marked for the embedded runtime's host-root
 * fallback (api/core/host-root.ts) would run on the node's root file system,
 * which is as much as privileged; baseline and restricted refuse it.
 */
const hostRootFallback: CheckFn = (meta) => {
  const marked = HOST_ROOT_ANNOTATIONS.filter((key) => meta.annotations?.[key] === "true");
  return marked.length > 0 ? { reason: "host root file system", detail: `${plural("annotation", "annotations", marked.length)} ${marked.map((k) => `${JSON.stringify(k)}="true"`).join(", ")}` } : undefined;
};

/** From 1.25, pods for Windows (spec.os.name) are exempt from the Linux-only restricted checks. */
const exceptWindows = (check: CheckFn): CheckFn => (meta, spec) => (spec.os?.name === "windows" ? undefined : check(meta, spec));

const CHECKS: readonly Check[] = [
  { id: "allowPrivilegeEscalation", level: "restricted", versions: [{ min: 8, check: allowPrivilegeEscalation }, { min: 25, check: exceptWindows(allowPrivilegeEscalation) }] },
  { id: "appArmorProfile", level: "baseline", versions: [{ min: 0, check: appArmorAnnotations }, { min: 30, check: appArmorProfile }] },
  { id: "capabilities_baseline", level: "baseline", versions: [{ min: 0, check: capabilitiesBaseline }] },
  { id: "capabilities_restricted", level: "restricted", versions: [{ min: 22, check: capabilitiesRestricted }, { min: 25, check: exceptWindows(capabilitiesRestricted) }], overrides: ["capabilities_baseline"] },
  { id: "hostNamespaces", level: "baseline", versions: [{ min: 0, check: hostNamespaces }] },
  { id: "hostPathVolumes", level: "baseline", versions: [{ min: 0, check: hostPathVolumes }] },
  { id: "hostPorts", level: "baseline", versions: [{ min: 0, check: hostPorts }] },
  { id: "hostRootFallback", level: "baseline", versions: [{ min: 0, check: hostRootFallback }] },
  { id: "privileged", level: "baseline", versions: [{ min: 0, check: privileged }] },
  { id: "procMount", level: "baseline", versions: [{ min: 0, check: procMount }] },
  { id: "restrictedVolumes", level: "restricted", versions: [{ min: 0, check: restrictedVolumes }], overrides: ["hostPathVolumes"] },
  { id: "runAsNonRoot", level: "restricted", versions: [{ min: 0, check: runAsNonRoot }] },
  { id: "runAsUser", level: "restricted", versions: [{ min: 23, check: runAsUser }] },
  { id: "seLinuxOptions", level: "baseline", versions: [{ min: 0, check: seLinuxOptions }] },
  { id: "seccompProfile_baseline", level: "baseline", versions: [{ min: 0, check: seccompAnnotations }, { min: 19, check: seccompFields(false) }] },
  { id: "seccompProfile_restricted", level: "restricted", versions: [{ min: 19, check: seccompFields(true) }, { min: 25, check: exceptWindows(seccompFields(true)) }], overrides: ["seccompProfile_baseline"] },
  { id: "sysctls", level: "baseline", versions: [{ min: 0, check: sysctls(0) }, { min: 27, check: sysctls(27) }, { min: 29, check: sysctls(29) }] },
  { id: "windowsHostProcess", level: "baseline", versions: [{ min: 0, check: windowsHostProcess }] },
];

/** The checks that apply at a level and version, each at its version. */
function checksFor(lv: LevelVersion): CheckFn[] {
  if (lv.level === "privileged") return [];
  // Baseline checks first, then restricted ones, each group by id (upstream's order of evaluation and of the message).
  const inLevel = CHECKS.filter((c) => levelRank(c.level) <= levelRank(lv.level)).sort((a, b) => levelRank(a.level) - levelRank(b.level));
  const versioned = inLevel
    .map((c) => ({ c, v: c.versions.filter((v) => v.min <= lv.minor).at(-1) }))
    .filter((x): x is { c: Check; v: { min: number; check: CheckFn } } => x.v !== undefined);
  const overridden = new Set(versioned.flatMap((x) => x.c.overrides ?? []));
  return versioned.filter((x) => !overridden.has(x.c.id)).map((x) => x.v.check);
}

/** What a pod violates at a level and version (empty: allowed). */
export function evaluatePod(lv: LevelVersion, meta: PodMetaLike, spec: PodSpecLike): CheckResult[] {
  return checksFor(lv).map((check) => check(meta, spec)).filter((r): r is CheckResult => r !== undefined);
}

/** Upstream's aggregate detail: `reason (detail), reason (detail)`. */
export function forbiddenDetail(results: readonly CheckResult[]): string {
  return results.map((r) => (r.detail !== "" ? `${r.reason} (${r.detail})` : r.reason)).join(", ");
}

/** Upstream's aggregate reason: the reasons alone (namespace label warnings). */
export function forbiddenReason(results: readonly CheckResult[]): string {
  return results.map((r) => r.reason).join(", ");
}
