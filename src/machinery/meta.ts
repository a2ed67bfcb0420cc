// Object and list metadata as they travel on the wire (seed 000, "Object metadata
// fields named in this interface", "List (collection) fields"), plus the small
// identity helpers every layer needs: group/version strings, uids, timestamps.
// Parsers that answer malformed input with a 400 are in meta-parsing.ts, so
// that errors.ts (which formats these types) does not come back here.

import { randomUUID } from "node:crypto";

export interface TypeMeta {
  apiVersion?: string;
  kind?: string;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: "Apply" | "Update";
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | null;
  deletionTimestamp?: string | null;
  deletionGracePeriodSeconds?: number | null;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
}

/** seed 000, "Sharded list and watch": echoed when a shard selector was honored. */
export interface ShardInfo {
  selector: string;
}

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
  shardInfo?: ShardInfo;
}

/** Any object of any kind: typed metadata, the rest left to the kind's own schema. */
export interface ApiObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface ApiList<T extends ApiObject = ApiObject> {
  apiVersion: string;
  kind: string;
  metadata: ListMeta;
  items: T[];
}

export interface GroupVersion {
  group: string;
  version: string;
}

export interface GroupResource {
  group: string;
  resource: string;
}

export interface GroupKind {
  group: string;
  kind: string;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** "apps/v1", or "v1" for the core group. */
export function formatGroupVersion({ group, version }: GroupVersion): string {
  return group === "" ? version : `${group}/${version}`;
}

/** "deployments.apps", or "pods" for the core group — the form upstream messages use. */
export function formatGroupResource({ group, resource }: GroupResource): string {
  return group === "" ? resource : `${resource}.${group}`;
}

/** "Deployment.apps", or "Pod" for the core group. */
export function formatGroupKind({ group, kind }: GroupKind): string {
  return group === "" ? kind : `${kind}.${group}`;
}

/** A fresh random object uid (seed 000: "server-generated, random, unique"). */
export function newUid(): string {
  return randomUUID();
}

/**
 * RFC 3339 at second precision in UTC, as upstream's metav1.Time marshals:
 * `2026-11-22T07:00:00Z`.
 */
export function formatTimestamp(date: Date = new Date()): string {
  const iso = date.toISOString(); // 2026-11-22T07:00:00.123Z
  return iso.slice(0, 19) + "Z";
}

/**
 * RFC 3339 with microseconds in UTC, as upstream's metav1.MicroTime marshals
 * (leases, events): `2026-11-22T07:00:00.123000Z`.
 */
export function formatMicroTimestamp(date: Date = new Date()): string {
  const iso = date.toISOString();
  return iso.slice(0, 23) + "000Z";
}
