// Turning a call's options into what goes on the wire: the resource path
// (seed 000, "Endpoints"), the query parameters ("Query parameters"), the
// Accept and Content-Type headers and a DeleteOptions body.

import { PROTOBUF_MEDIA_TYPES } from "../../machinery/naming.js";
import type { CallOptions, DeleteCollectionOptions, DeleteOptions, LabelSelectorInput, PatchType, ResourceRef, WriteOptions } from "./types.js";

export const JSON_TYPE = "application/json";
// Upstream's spelling of the meta group: every server (ours included) accepts it.
export const METADATA_ACCEPT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
export const METADATA_LIST_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
export const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json",
  apply: "application/apply-patch+yaml",
};
/** Upstream's Protobuf media type first, JSON for a server without it (seed 000, "Media types and negotiation"). */
export const PROTOBUF_ACCEPT = `${PROTOBUF_MEDIA_TYPES[1]}, ${JSON_TYPE}`;

/** The path of a collection, an object or a subresource, under `basePath` (a prefix in the server URL). */
export function resourcePath(basePath: string, ref: ResourceRef, namespace: string | undefined, name?: string, subresource?: string): string {
  const parts = [basePath, ref.group === "" ? `api/${ref.version}` : `apis/${ref.group}/${ref.version}`];
  if (ref.namespaced && namespace !== undefined && namespace !== "") parts.push("namespaces", encodeURIComponent(namespace));
  parts.push(encodeURIComponent(ref.resource));
  if (name !== undefined) parts.push(encodeURIComponent(name));
  if (subresource !== undefined) parts.push(encodeURIComponent(subresource));
  return parts.join("/");
}

/** The namespace of a call on a namespaced resource, which must have one; none for a cluster-scoped one. */
export function required(ref: ResourceRef, namespace: string | undefined): string | undefined {
  if (ref.namespaced && (namespace === undefined || namespace === "")) {
    throw new Error(`${ref.resource} is namespaced: this call needs a namespace`);
  }
  return ref.namespaced ? namespace : undefined;
}

export function set(query: URLSearchParams, name: string, value: string | undefined): void {
  if (value !== undefined) query.set(name, value);
}

function selector(input: LabelSelectorInput | undefined): string | undefined {
  if (input === undefined) return undefined;
  if (typeof input === "string") return input === "" ? undefined : input;
  const s = Object.entries(input).map(([k, v]) => `${k}=${v}`).join(",");
  return s === "" ? undefined : s;
}

export function selectors(query: URLSearchParams, options: { labelSelector?: LabelSelectorInput; fieldSelector?: LabelSelectorInput }): void {
  set(query, "labelSelector", selector(options.labelSelector));
  set(query, "fieldSelector", selector(options.fieldSelector));
}

export function writeQuery(options: WriteOptions): URLSearchParams {
  const query = new URLSearchParams();
  if (options.dryRun) query.set("dryRun", "All");
  set(query, "fieldValidation", options.fieldValidation);
  set(query, "fieldManager", options.fieldManager);
  return query;
}

export function deleteBody(options: DeleteOptions | DeleteCollectionOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { kind: "DeleteOptions", apiVersion: "v1" };
  if (options.propagationPolicy !== undefined) body["propagationPolicy"] = options.propagationPolicy;
  if (options.gracePeriodSeconds !== undefined) body["gracePeriodSeconds"] = options.gracePeriodSeconds;
  if ("preconditions" in options && options.preconditions !== undefined) body["preconditions"] = options.preconditions;
  if (options.dryRun) body["dryRun"] = ["All"];
  return body;
}

export function signal(options: CallOptions): { signal?: AbortSignal } {
  return options.signal ? { signal: options.signal } : {};
}
