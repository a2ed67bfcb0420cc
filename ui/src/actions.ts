// The writes the dashboard makes, each as kubectl would make it: server-side
// apply with the field manager "dashboard" (conflicts come back as a 409
// whose causes name the other managers' fields), delete, scale through the
// scale subresource, and a rollout restart (a pod-template annotation, as
// `kubectl rollout restart`).

import { stringify, parse } from "yaml";
import { request, type KObject } from "./api.js";
import { apiVersionOf, objectPath, type Discovery, type Resource } from "./discovery.js";

export const FIELD_MANAGER = "dashboard";

/** The object as a user edits it: what the server owns (status, uid, versions, managed fields) left out. */
export function editableYaml(o: KObject): string {
  const { status: _status, ...rest } = o;
  const { managedFields: _mf, resourceVersion: _rv, uid: _uid, creationTimestamp: _ct, generation: _g, ...metadata } = o.metadata as KObject["metadata"] & { generation?: number };
  return stringify({ ...rest, metadata }, { lineWidth: 0 });
}

/** Server-side apply of the edited YAML; throws ApiError (409 Conflict lists the conflicting fields). */
export async function apply(r: Resource, namespace: string | undefined, name: string, text: string, force: boolean): Promise<KObject> {
  let body: unknown;
  try {
    body = parse(text);
  } catch (err) {
    throw new Error(`the YAML does not parse: ${(err as Error).message}`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new Error("the YAML must be one object");
  const q = new URLSearchParams({ fieldManager: FIELD_MANAGER });
  if (force) q.set("force", "true");
  const res = await request(`${objectPath(r, namespace, name)}?${q}`, { method: "PATCH", contentType: "application/apply-patch+yaml", body: JSON.stringify({ apiVersion: apiVersionOf(r), kind: r.kind, ...body }) });
  return res.json() as Promise<KObject>;
}

export async function remove(r: Resource, namespace: string | undefined, name: string): Promise<void> {
  await request(objectPath(r, namespace, name), { method: "DELETE", contentType: "application/json", body: JSON.stringify({ kind: "DeleteOptions", apiVersion: "v1", propagationPolicy: "Background" }) });
}

export async function scale(r: Resource, namespace: string | undefined, name: string, replicas: number): Promise<void> {
  await request(`${objectPath(r, namespace, name)}/scale?fieldManager=${FIELD_MANAGER}`, {
    method: "PATCH",
    contentType: "application/merge-patch+json",
    body: JSON.stringify({ spec: { replicas } }),
  });
}

/** Which kinds restart by a template annotation (the ones `kubectl rollout restart` takes). */
export function restartable(r: Resource): boolean {
  return r.group === "apps" && ["deployments", "statefulsets", "daemonsets"].includes(r.resource);
}

export async function restart(d: Discovery, r: Resource, namespace: string | undefined, name: string): Promise<void> {
  const key = `kubectl.${d.keyDomain}/restartedAt`;
  await request(`${objectPath(r, namespace, name)}?fieldManager=${FIELD_MANAGER}`, {
    method: "PATCH",
    contentType: "application/strategic-merge-patch+json",
    body: JSON.stringify({ spec: { template: { metadata: { annotations: { [key]: new Date().toISOString() } } } } }),
  });
}
