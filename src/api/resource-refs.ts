// The built-in resources our own components address through the client
// (controllers, scheduler, node agent, proxy, DNS, CLI), written once: group,
// version, plural and scope, as the kinds' declarations in src/api/<group>/
// serve them. Groups that carry the product suffix come from the naming table.

import { namingFor, type Naming } from "../machinery/naming.js";

/** What the client calls a ResourceRef: where a resource lives in the API. */
export interface GroupVersionResource {
  /** "" for the core group. */
  readonly group: string;
  readonly version: string;
  /** Plural, lower case: "replicasets". */
  readonly resource: string;
  readonly namespaced: boolean;
}

const ref = (group: string, resource: string, namespaced = true): GroupVersionResource => Object.freeze({ group, version: "v1", resource, namespaced });

// core/v1
export const PODS = ref("", "pods");
export const NODES = ref("", "nodes", false);
export const NAMESPACES = ref("", "namespaces", false);
export const SERVICES = ref("", "services");
export const ENDPOINTS = ref("", "endpoints");
export const SERVICE_ACCOUNTS = ref("", "serviceaccounts");
export const CONFIGMAPS = ref("", "configmaps");
export const SECRETS = ref("", "secrets");
export const EVENTS = ref("", "events");
export const PERSISTENT_VOLUMES = ref("", "persistentvolumes", false);
export const PERSISTENT_VOLUME_CLAIMS = ref("", "persistentvolumeclaims");
export const REPLICATIONCONTROLLERS = ref("", "replicationcontrollers");
export const RESOURCEQUOTAS = ref("", "resourcequotas");
export const LIMITRANGES = ref("", "limitranges");

// apps/v1
export const REPLICASETS = ref("apps", "replicasets");
export const DEPLOYMENTS = ref("apps", "deployments");
export const DAEMONSETS = ref("apps", "daemonsets");
export const STATEFULSETS = ref("apps", "statefulsets");
export const CONTROLLERREVISIONS = ref("apps", "controllerrevisions");

// batch/v1, policy/v1
export const JOBS = ref("batch", "jobs");
export const CRONJOBS = ref("batch", "cronjobs");
export const PODDISRUPTIONBUDGETS = ref("policy", "poddisruptionbudgets");

/** coordination.<suffix>/v1 leases (node heartbeats, leader election). */
export function leaseResource(naming: Naming = namingFor()): GroupVersionResource {
  return ref(naming.coordinationGroup, "leases");
}

/** rbac.authorization.<suffix>/v1 clusterroles (the aggregation controller). */
export function clusterRoleResource(naming: Naming = namingFor()): GroupVersionResource {
  return ref(naming.rbacGroup, "clusterroles", false);
}

/** discovery.<suffix>/v1 endpointslices. */
export function endpointSliceResource(naming: Naming = namingFor()): GroupVersionResource {
  return ref(`discovery.${naming.groupSuffix}`, "endpointslices");
}

/** storage.<suffix>/v1 storageclasses. */
export function storageClassResource(naming: Naming = namingFor()): GroupVersionResource {
  return ref(naming.storageGroup, "storageclasses", false);
}
