// The checks as a table: pods × levels → the violations, with upstream's
// reasons and details; then versions (a check applies from its minimum
// version; restricted checks take the place of their baseline twins).

import { test } from "node:test";
import assert from "node:assert/strict";
import { evaluatePod, forbiddenDetail, type PodSpecLike } from "./checks.js";
import { LATEST_MINOR, parseVersion, type Level } from "./levels.js";

const latest = (level: Level) => ({ level, minor: LATEST_MINOR, latest: true });

/** A pod that passes restricted; each row changes one thing. */
function good(): { meta: { annotations?: Record<string, string> }; spec: PodSpecLike } {
  return {
    meta: {},
    spec: {
      securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
      containers: [{ name: "app", securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } } }],
      volumes: [{ name: "cfg", configMap: { name: "c" } }],
    },
  };
}

type Row = [name: string, change: (p: ReturnType<typeof good>) => void, baseline: string, restricted: string];

const ROWS: Row[] = [
  ["restricted pod", () => {}, "", ""],
  ["hostNetwork, hostPID, hostIPC", (p) => Object.assign(p.spec, { hostNetwork: true, hostPID: true, hostIPC: true }), "host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)", "host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)"],
  ["marked for the host-root fallback", (p) => (p.meta.annotations = { "orch.io/host-root": "true" }), 'host root file system (annotation "orch.io/host-root"="true")', 'host root file system (annotation "orch.io/host-root"="true")'],
  ["host-root marker on the k8s.io profile", (p) => (p.meta.annotations = { "kubernetes.io/host-root": "true" }), 'host root file system (annotation "kubernetes.io/host-root"="true")', 'host root file system (annotation "kubernetes.io/host-root"="true")'],
  ["host-root marker not \"true\"", (p) => (p.meta.annotations = { "orch.io/host-root": "false" }), "", ""],
  ["privileged container", (p) => (p.spec.containers![0]!.securityContext!.privileged = true), 'privileged (container "app" must not set securityContext.privileged=true)', 'privileged (container "app" must not set securityContext.privileged=true)'],
  ["adds SYS_ADMIN", (p) => (p.spec.containers![0]!.securityContext!.capabilities!.add = ["SYS_ADMIN", "NET_RAW"]), 'non-default capabilities (container "app" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)', 'unrestricted capabilities (container "app" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)'],
  ["adds CHOWN (baseline default set)", (p) => (p.spec.containers![0]!.securityContext!.capabilities!.add = ["CHOWN"]), "", 'unrestricted capabilities (container "app" must not include "CHOWN" in securityContext.capabilities.add)'],
  ["adds NET_BIND_SERVICE", (p) => (p.spec.containers![0]!.securityContext!.capabilities!.add = ["NET_BIND_SERVICE"]), "", ""],
  ["does not drop ALL", (p) => (p.spec.containers![0]!.securityContext!.capabilities = { drop: ["NET_RAW"] }), "", 'unrestricted capabilities (container "app" must set securityContext.capabilities.drop=["ALL"])'],
  ["hostPath volume", (p) => p.spec.volumes!.push({ name: "root", hostPath: { path: "/" } }), 'hostPath volumes (volume "root")', 'restricted volume types (volume "root" uses restricted volume type "hostPath")'],
  ["nfs volume", (p) => p.spec.volumes!.push({ name: "share", nfs: { server: "x", path: "/" } }), "", 'restricted volume types (volume "share" uses restricted volume type "nfs")'],
  ["host ports", (p) => (p.spec.containers![0]!.ports = [{ hostPort: 80 }, { hostPort: 443 }]), 'hostPort (container "app" uses hostPorts 443, 80)', 'hostPort (container "app" uses hostPorts 443, 80)'],
  ["AppArmor unconfined (annotation)", (p) => (p.meta.annotations = { "container.apparmor.security.beta.kubernetes.io/app": "unconfined" }), 'forbidden AppArmor profile (container.apparmor.security.beta.kubernetes.io/app="unconfined")', 'forbidden AppArmor profile (container.apparmor.security.beta.kubernetes.io/app="unconfined")'],
  ["AppArmor Unconfined (field)", (p) => (p.spec.securityContext!.appArmorProfile = { type: "Unconfined" }), 'forbidden AppArmor profile (pod must not set securityContext.appArmorProfile.type to "Unconfined")', 'forbidden AppArmor profile (pod must not set securityContext.appArmorProfile.type to "Unconfined")'],
  ["SELinux type and user", (p) => (p.spec.containers![0]!.securityContext!.seLinuxOptions = { type: "spc_t", user: "root" }), 'seLinuxOptions (container "app" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set)', 'seLinuxOptions (container "app" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set)'],
  ["procMount Unmasked", (p) => (p.spec.containers![0]!.securityContext!.procMount = "Unmasked"), 'procMount (container "app" must not set securityContext.procMount to "Unmasked")', 'procMount (container "app" must not set securityContext.procMount to "Unmasked")'],
  ["seccomp Unconfined", (p) => (p.spec.securityContext!.seccompProfile = { type: "Unconfined" }), 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")', 'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")'],
  ["no seccomp profile", (p) => delete p.spec.securityContext!.seccompProfile, "", 'seccompProfile (pod or container "app" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")'],
  ["unsafe sysctl", (p) => (p.spec.securityContext!.sysctls = [{ name: "kernel.msgmax", value: "1" }, { name: "net.ipv4.tcp_syncookies", value: "1" }]), "forbidden sysctls (kernel.msgmax)", "forbidden sysctls (kernel.msgmax)"],
  ["allowPrivilegeEscalation unset", (p) => delete p.spec.containers![0]!.securityContext!.allowPrivilegeEscalation, "", 'allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)'],
  ["runAsNonRoot unset", (p) => delete p.spec.securityContext!.runAsNonRoot, "", 'runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true)'],
  ["runAsNonRoot false on a container", (p) => (p.spec.containers![0]!.securityContext!.runAsNonRoot = false), "", 'runAsNonRoot != true (container "app" must not set securityContext.runAsNonRoot=false)'],
  ["runAsUser 0", (p) => (p.spec.securityContext!.runAsUser = 0), "", "runAsUser=0 (pod must not set runAsUser=0)"],
  ["windows hostProcess", (p) => (p.spec.securityContext!.windowsOptions = { hostProcess: true }), "hostProcess (pod must not set securityContext.windowsOptions.hostProcess=true)", "hostProcess (pod must not set securityContext.windowsOptions.hostProcess=true)"],
];

for (const [name, change, baseline, restricted] of ROWS) {
  test(`pod security table: ${name}`, () => {
    const p = good();
    change(p);
    assert.deepEqual(evaluatePod(latest("privileged"), p.meta, p.spec), [], "privileged allows everything");
    assert.equal(forbiddenDetail(evaluatePod(latest("baseline"), p.meta, p.spec)), baseline, "baseline");
    assert.equal(forbiddenDetail(evaluatePod(latest("restricted"), p.meta, p.spec)), restricted, "restricted");
  });
}

test("a bare pod at restricted: the violations in upstream's order, init and ephemeral containers included", () => {
  const spec: PodSpecLike = { initContainers: [{ name: "init" }], containers: [{ name: "a" }, { name: "b" }] };
  assert.equal(
    forbiddenDetail(evaluatePod(latest("restricted"), {}, spec)),
    'allowPrivilegeEscalation != false (containers "init", "a", "b" must set securityContext.allowPrivilegeEscalation=false), ' +
      'unrestricted capabilities (containers "init", "a", "b" must set securityContext.capabilities.drop=["ALL"]), ' +
      'runAsNonRoot != true (pod or containers "init", "a", "b" must set securityContext.runAsNonRoot=true), ' +
      'seccompProfile (pod or containers "init", "a", "b" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
  );
});

test("versions: a check applies from its minimum version; newer sysctls are safe only from theirs", () => {
  const spec: PodSpecLike = { containers: [{ name: "a", securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] }, runAsUser: 0 } }], securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } } };
  const at = (v: string, level: Level = "restricted") => ({ level, ...parseVersion(v)! });
  assert.equal(forbiddenDetail(evaluatePod(at("v1.22"), {}, spec)), "", "runAsUser=0 is checked from 1.23");
  assert.equal(forbiddenDetail(evaluatePod(at("v1.23"), {}, spec)), 'runAsUser=0 (container "a" must not set runAsUser=0)');
  const sysctl: PodSpecLike = { securityContext: { sysctls: [{ name: "net.ipv4.tcp_keepalive_time" }] }, containers: [] };
  assert.equal(forbiddenDetail(evaluatePod(at("v1.28", "baseline"), {}, sysctl)), "forbidden sysctls (net.ipv4.tcp_keepalive_time)");
  assert.equal(forbiddenDetail(evaluatePod(at("v1.29", "baseline"), {}, sysctl)), "");
  const seccompAnnotation = { annotations: { "seccomp.security.alpha.kubernetes.io/pod": "unconfined" } };
  assert.equal(forbiddenDetail(evaluatePod(at("v1.18", "baseline"), seccompAnnotation, { containers: [] })), 'seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")');
  assert.equal(forbiddenDetail(evaluatePod(at("v1.19", "baseline"), seccompAnnotation, { containers: [] })), "", "from 1.19 the fields decide");
  assert.equal(parseVersion("v1.99")!.minor, LATEST_MINOR, "versions past the newest evaluate as the newest");
  for (const bad of ["v1.01", "1.25", "v2.0", "v1.", "Latest"]) assert.equal(parseVersion(bad), undefined, bad);
});

test("Windows pods: from 1.25 the Linux-only restricted checks (privilege escalation, capabilities, seccomp) do not apply", () => {
  const spec: PodSpecLike = { os: { name: "windows" }, securityContext: { runAsNonRoot: true }, containers: [{ name: "w" }] };
  assert.equal(forbiddenDetail(evaluatePod(latest("restricted"), {}, spec)), "");
  assert.equal(
    forbiddenDetail(evaluatePod({ level: "restricted", ...parseVersion("v1.24")! }, {}, spec)),
    'allowPrivilegeEscalation != false (container "w" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "w" must set securityContext.capabilities.drop=["ALL"]), seccompProfile (pod or container "w" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
  );
});
