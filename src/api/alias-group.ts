// A kind served under a second group name over the first one's storage.
// kubectl has some of upstream's group names compiled in (`auth reconcile`
// writes rbac.authorization.k8s.io, `certificate approve` reads
// certificates.k8s.io), so on a profile whose own names differ the kind is
// also served under upstream's: one storage, both names. Objects are stored
// under the profile's group and converted on every read and write
// (apiVersion, managedFields' apiVersions, and whatever group names the kind
// carries inside).

import type { ApiObject } from "../machinery/index.js";
import type { ResourceDefinition } from "./resource.js";

/** Renames the group names an object carries inside (roleRef.apiGroup), in place. */
export type GroupRename = (obj: ApiObject, from: string, to: string) => void;

/**
 * `alias` (a declaration under the alias group, its validation written for
 * that group's names) served from `storedGroup`'s storage of the same resource.
 */
export function storedUnderGroup(alias: ResourceDefinition, storedGroup: string, rename?: GroupRename): ResourceDefinition {
  const convert = (obj: ApiObject, from: string, to: string): ApiObject => {
    const out = structuredClone(obj);
    const version = typeof out.apiVersion === "string" ? out.apiVersion.slice(out.apiVersion.indexOf("/") + 1) : alias.versions[0];
    out.apiVersion = `${to}/${version}`;
    // managedFields name the apiVersion of each manager's write: one storage, one spelling (apply compares them).
    for (const entry of out.metadata?.managedFields ?? []) {
      if (entry.apiVersion?.startsWith(`${from}/`)) entry.apiVersion = `${to}/${entry.apiVersion.slice(from.length + 1)}`;
    }
    rename?.(out, from, to);
    return out;
  };
  return {
    ...alias,
    storedAs: {
      group: storedGroup,
      resource: alias.resource,
      fromStored: (stored) => convert(stored, storedGroup, alias.group),
      toStored: (obj) => convert(obj, alias.group, storedGroup),
    },
  };
}
