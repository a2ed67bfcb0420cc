// Local APIServices: one for every group version the API server serves
// itself (built-in groups, custom resources' groups, metrics.k8s.io), as
// upstream's autoregister and crdRegistration controllers keep them: named
// VERSION.GROUP, `service: null`, upstream's group and version priorities
// (custom resources 1000/100), labelled automanaged, and Available=True with
// reason Local. A local group version's APIService is kept local: one edited
// to name a Service is put back (orch serves the group itself), and one
// whose group version is no longer served (a removed custom resource) is
// deleted.

import type { APIService, APIServiceCondition } from "../../api/apiregistration/index.js";
import { METRICS_GROUP } from "../../api/metrics/index.js";
import type { Naming } from "../../machinery/naming.js";
import { formatTimestamp } from "../../machinery/meta.js";

/** upstream's apiVersionPriorities (cmd/kube-apiserver/app/aggregator.go), by upstream's group names. */
const PRIORITIES: Readonly<Record<string, readonly [group: number, version: number]>> = {
  "/v1": [18000, 1],
  "apps/v1": [17800, 15],
  "events.k8s.io/v1": [17750, 15],
  "authentication.k8s.io/v1": [17700, 15],
  "authorization.k8s.io/v1": [17600, 15],
  "autoscaling/v1": [17500, 15],
  "autoscaling/v2": [17500, 30],
  "batch/v1": [17400, 15],
  "certificates.k8s.io/v1": [17300, 15],
  "networking.k8s.io/v1": [17200, 15],
  "policy/v1": [17100, 15],
  "rbac.authorization.k8s.io/v1": [17000, 15],
  "storage.k8s.io/v1": [16800, 15],
  "apiextensions.k8s.io/v1": [16700, 15],
  "admissionregistration.k8s.io/v1": [16700, 15],
  "scheduling.k8s.io/v1": [16600, 15],
  "coordination.k8s.io/v1": [16500, 15],
  "node.k8s.io/v1": [16300, 15],
  "discovery.k8s.io/v1": [16200, 15],
  "flowcontrol.apiserver.k8s.io/v1": [16100, 21],
  "flowcontrol.apiserver.k8s.io/v1beta3": [16100, 18],
  "apiregistration.k8s.io/v1": [18000, 15],
  // metrics-server's own APIService.
  "metrics.k8s.io/v1beta1": [100, 100],
};

/** A custom resource's group version (upstream's crdRegistrationController). */
const CUSTOM: readonly [number, number] = [1000, 100];

export const LOCAL_CONDITION_REASON = "Local";

/** The Available condition of a local APIService (upstream's NewLocalAvailableAPIServiceCondition). */
export function localAvailable(now: Date): APIServiceCondition {
  return { type: "Available", status: "True", lastTransitionTime: formatTimestamp(now), reason: LOCAL_CONDITION_REASON, message: "Local APIServices are always available" };
}


/** The upstream spelling of an orch group name (`apps.orch.io`-style suffixes back to `k8s.io`), for the priority table. */
function upstreamGroup(group: string, naming: Naming): string {
  return naming.groupSuffix !== "k8s.io" && group.endsWith(`.${naming.groupSuffix}`) ? `${group.slice(0, -naming.groupSuffix.length)}k8s.io` : group;
}

/**
 * Groups served on the default profile under upstream's names as views of
 * its own (rbac.authorization.k8s.io, certificates.k8s.io, ...: api/alias-group.ts)
 * get no APIService: the store keeps only the profile's names. metrics.k8s.io
 * is a group of its own, by that name on both profiles.
 */
export function isAliasGroup(group: string, naming: Naming): boolean {
  return naming.groupSuffix !== "k8s.io" && group.endsWith(".k8s.io") && group !== METRICS_GROUP;
}

/** The local APIService of a served group version; `custom` for custom resources' groups. */
export function localApiService(group: string, version: string, custom: boolean, naming: Naming, label: string): APIService {
  const [groupPriorityMinimum, versionPriority] = custom ? CUSTOM : (PRIORITIES[`${upstreamGroup(group, naming)}/${version}`] ?? [1000, 15]);
  return {
    apiVersion: `${naming.apiregistrationGroup}/v1`,
    kind: "APIService",
    metadata: { name: `${version}.${group}`, labels: { [label]: custom ? "true" : "onstart" } },
    spec: { group, version, groupPriorityMinimum, versionPriority },
  };
}

/** Whether a stored APIService already is what the local one should be (spec-wise). */
export function specMatches(stored: APIService, want: APIService): boolean {
  const a = stored.spec ?? {};
  const b = want.spec!;
  return a.service == null && a.group === b.group && a.version === b.version && a.groupPriorityMinimum === b.groupPriorityMinimum
    && a.versionPriority === b.versionPriority && !a.caBundle && a.insecureSkipTLSVerify !== true;
}
