// The verbs on resource paths (seed 000, "Endpoints"): method, name,
// subresource and `watch` select the verb; the declaration says which verbs
// exist (405 otherwise); bodies are checked against the path (group,
// version, kind, namespace, name: 400 on a mismatch) before the registry
// store sees them. Responses go out through ../http/respond.ts.

import type { ResourceDefinition } from "../../api/resource.js";
import {
  badRequest,
  conflict,
  field,
  formatFieldError,
  invalid,
  isApiError,
  methodNotSupported,
  notFound,
  unsupportedMediaType,
  type ApiObject,
} from "../../machinery/index.js";
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from "../../machinery/patch/index.js";
import type { SchemaRegistry } from "../../api/schema.js";
import { parseJson, readBody } from "../http/body.js";
import { decodeBody } from "../http/decode-body.js";
import {
  negotiateFor,
  sendJson,
  sendList,
  sendObject,
  sendStatusSuccess,
  sendWatch,
  sendWatchError,
  type Encoding,
  type Outgoing,
  type Incoming,
  type ResponseScope,
} from "../http/respond.js";
import type { ResourcePath } from "../routing.js";
import type { RegistryStore, DeleteOptions, Subresource } from "../registry/store.js";
import { WatchStream, type WatchEnv } from "../registry/watch.js";

export interface ResourceRequest {
  req: Incoming;
  res: Outgoing;
  path: ResourcePath;
  query: URLSearchParams;
  store: RegistryStore;
  watchEnv: WatchEnv;
  /** The built-in types' schemas (strategic merge reads merge keys and strategies from them). */
  schemas: SchemaRegistry;
  /** Formats on offer for bodies and responses (gates, Protobuf types). */
  encoding: Encoding;
}

function scope(r: ResourceRequest, gv: string): ResponseScope {
  return { req: r.req, res: r.res, def: r.store.def, gv, encoding: r.encoding };
}

const PATCH_TYPES = ["application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"];

function groupVersion(def: ResourceDefinition, version: string): string {
  return def.group === "" ? version : `${def.group}/${version}`;
}

function allows(def: ResourceDefinition, verb: string): boolean {
  return def.verbs === undefined || (def.verbs as readonly string[]).includes(verb);
}

function flag(query: URLSearchParams, name: string): boolean | undefined {
  const v = query.get(name);
  if (v === null) return undefined;
  return v === "" || v === "1" || v.toLowerCase() === "true";
}

function intParam(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null || v === "") return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw badRequest(`${name}: invalid value ${JSON.stringify(v)}: must be an integer`);
  return n;
}

function dryRun(query: URLSearchParams): boolean {
  const values = query.getAll("dryRun");
  for (const v of values) {
    if (v !== "All") throw badRequest(`Invalid dry run value: ${JSON.stringify(v)}; supported values: "All"`);
  }
  return values.length > 0;
}

export async function handleResource(r: ResourceRequest): Promise<void> {
  const { req, path, store } = r;
  const def = store.def;
  if (path.namespace !== undefined && !def.namespaced) throw notFound({ group: def.group, resource: def.resource }, "");
  const method = (req.method ?? "GET").toUpperCase();
  const gv = groupVersion(def, path.version);
  const sub = path.subresource;
  if (sub !== undefined && !supportsSubresource(def, sub)) throw notFound({ group: def.group, resource: `${def.resource}/${sub}` }, path.name ?? "");
  const unsupported = (verb: string) => methodNotSupported({ group: def.group, resource: def.resource }, verb);

  if (path.name === undefined) {
    if (method === "GET") {
      if (flag(r.query, "watch")) {
        if (!allows(def, "watch")) throw unsupported("watch");
        return watch(r, gv);
      }
      if (!allows(def, "list")) throw unsupported("list");
      return list(r, gv);
    }
    if (method === "POST") {
      if (!allows(def, "create")) throw unsupported("create");
      return create(r, gv);
    }
    if (method === "DELETE") {
      if (!allows(def, "deletecollection")) throw unsupported("deletecollection");
      return deleteCollection(r, gv);
    }
    throw unsupported(method.toLowerCase());
  }

  switch (method) {
    case "GET":
      if (!allows(def, "get")) throw unsupported("get");
      if (sub === "scale") return sendJson(r.res, 200, scaleOf(def, (await store.get(path.namespace, path.name)).object));
      if (sub === "finalize" || sub === "binding") throw unsupported("get");
      return sendObject(scope(r, gv), 200, await store.get(path.namespace, path.name, { resourceVersion: r.query.get("resourceVersion") ?? undefined }));
    case "PUT":
      if (!allows(def, "update") && sub === undefined) throw unsupported("update");
      if (sub === "scale") return updateScale(r, async () => parseJson(await readBody(r.req)));
      if (sub === "binding") throw unsupported("update");
      return update(r, gv);
    case "PATCH":
      if (!allows(def, "patch") && sub === undefined) throw unsupported("patch");
      if (sub === "scale") return patchScale(r);
      if (sub === "binding" || sub === "finalize") throw unsupported("patch");
      return patch(r, gv);
    case "DELETE":
      if (!allows(def, "delete")) throw unsupported("delete");
      return remove(r, gv);
    case "POST":
      if (sub === "binding") return bind(r, gv);
      throw unsupported("create");
    default:
      throw unsupported(method.toLowerCase());
  }
}

function supportsSubresource(def: ResourceDefinition, sub: string): boolean {
  const subs = def.subresources ?? {};
  return (sub === "status" && !!subs.status) || (sub === "binding" && !!subs.binding) || (sub === "scale" && !!subs.scale) || (sub === "finalize" && !!subs.finalize);
}

function subresourceOf(path: ResourcePath): Subresource | undefined {
  return path.subresource === "status" || path.subresource === "finalize" ? path.subresource : undefined;
}

async function list(r: ResourceRequest, gv: string): Promise<void> {
  const q = r.query;
  const result = await r.store.list(r.path.namespace, {
    labelSelector: q.get("labelSelector") ?? undefined,
    fieldSelector: q.get("fieldSelector") ?? undefined,
    shardSelector: q.get("shardSelector") ?? undefined,
    resourceVersion: q.get("resourceVersion") ?? undefined,
    resourceVersionMatch: q.get("resourceVersionMatch") ?? undefined,
    limit: intParam(q, "limit"),
    continue: q.get("continue") ?? undefined,
  });
  return sendList(scope(r, gv), result);
}

async function watch(r: ResourceRequest, gv: string): Promise<void> {
  const q = r.query;
  const representation = negotiateFor(scope(r, gv), { list: false, watch: true });
  let stream: WatchStream;
  try {
    stream = await WatchStream.open(
    r.store,
    r.path.namespace,
    {
      labelSelector: q.get("labelSelector") ?? undefined,
      fieldSelector: q.get("fieldSelector") ?? undefined,
      shardSelector: q.get("shardSelector") ?? undefined,
      resourceVersion: q.get("resourceVersion") ?? undefined,
      resourceVersionMatch: q.get("resourceVersionMatch") ?? undefined,
      sendInitialEvents: flag(q, "sendInitialEvents"),
      allowWatchBookmarks: flag(q, "allowWatchBookmarks"),
      timeoutSeconds: intParam(q, "timeoutSeconds"),
    },
    r.watchEnv,
  );
  } catch (err) {
    // As upstream's watch cache: a start version whose history is gone is a watch that ends with an ERROR event (410 Expired).
    if (isApiError(err, "Expired") || isApiError(err, "Gone")) return sendWatchError(scope(r, gv), representation, err);
    throw err;
  }
  return sendWatch(scope(r, gv), stream, representation, r.watchEnv);
}

/** Decode an object body (JSON, YAML, CBOR or Protobuf, by Content-Type) and check it against the path. */
async function readObject(r: ResourceRequest, gv: string): Promise<ApiObject> {
  const body = decodeBody(await readBody(r.req), r.req.headers["content-type"], r.encoding).value;
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest("the body of the request must be a JSON object");
  const obj = body as ApiObject;
  const def = r.store.def;
  if (obj.apiVersion !== undefined && obj.apiVersion !== gv) {
    throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${gv})`);
  }
  if (obj.kind !== undefined && obj.kind !== def.kind) {
    throw badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (${def.kind})`);
  }
  if (obj.metadata !== undefined && (typeof obj.metadata !== "object" || obj.metadata === null || Array.isArray(obj.metadata))) {
    throw badRequest("metadata must be an object");
  }
  obj.metadata ??= {};
  const ns = obj.metadata.namespace;
  if (def.namespaced && ns !== undefined && ns !== "" && ns !== r.path.namespace) {
    throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
  }
  if (r.path.name !== undefined && r.path.subresource === undefined && obj.metadata.name !== undefined && obj.metadata.name !== r.path.name) {
    throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${r.path.name})`);
  }
  return obj;
}

async function create(r: ResourceRequest, gv: string): Promise<void> {
  const obj = await readObject(r, gv);
  const created = await r.store.create(r.path.namespace, obj, { dryRun: dryRun(r.query) });
  return sendObject(scope(r, gv), 201, created);
}

async function update(r: ResourceRequest, gv: string): Promise<void> {
  const obj = await readObject(r, gv);
  obj.metadata.name ??= r.path.name;
  const subresource = subresourceOf(r.path);
  const { object, created } = await r.store.update(r.path.namespace, r.path.name!, obj, { dryRun: dryRun(r.query), subresource });
  return sendObject(scope(r, gv), created ? 201 : 200, object);
}

/**
 * The patch a request carries, as a function of the current object, chosen by
 * Content-Type (seed 000, "Update mechanisms"). Server-side apply comes later.
 */
async function readPatch(r: ResourceRequest, type: string): Promise<(current: unknown) => unknown> {
  const kind = (r.req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (!PATCH_TYPES.includes(kind)) throw unsupportedMediaType(PATCH_TYPES);
  const body = parseJson(await readBody(r.req));
  switch (kind) {
    case "application/json-patch+json":
      return (current) => applyJsonPatch(current, body);
    case "application/strategic-merge-patch+json":
      return (current) => applyStrategicMergePatch(current, body, { registry: r.schemas, type });
    default:
      if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest("a merge patch must be a JSON object");
      return (current) => applyMergePatch(current, body);
  }
}

async function patch(r: ResourceRequest, gv: string): Promise<void> {
  const apply = await readPatch(r, r.store.def.schema);
  const subresource = subresourceOf(r.path);
  const gr = { group: r.store.def.group, resource: r.store.def.resource };
  const out = await r.store.modify(
    r.path.namespace,
    r.path.name!,
    (current) => {
      const next = apply(current) as ApiObject;
      if (typeof next !== "object" || next === null || Array.isArray(next)) throw badRequest("the patch result is not an object");
      // A patch may be conditional on the resourceVersion it carries (seed 000, "Update mechanisms").
      const wantRv = (next.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion;
      if (wantRv !== undefined && wantRv !== current.metadata.resourceVersion) throw conflict(gr, r.path.name!);
      return next;
    },
    { dryRun: dryRun(r.query), subresource },
  );
  return sendObject(scope(r, gv), 200, out);
}

async function deleteOptions(r: ResourceRequest): Promise<DeleteOptions> {
  const body = await readBody(r.req);
  const fromBody = body.length > 0 ? decodeBody(body, r.req.headers["content-type"], r.encoding).value : {};
  if (typeof fromBody !== "object" || fromBody === null || Array.isArray(fromBody)) throw badRequest("DeleteOptions must be a JSON object");
  const opts = fromBody as DeleteOptions & { dryRun?: unknown };
  const unsafe = flag(r.query, "ignoreStoreReadErrorWithClusterBreakingPotential") ?? opts.ignoreStoreReadErrorWithClusterBreakingPotential;
  const q = r.query;
  const grace = intParam(q, "gracePeriodSeconds");
  const dry = Array.isArray(opts.dryRun) ? opts.dryRun.length > 0 : dryRun(q);
  return {
    gracePeriodSeconds: grace ?? opts.gracePeriodSeconds,
    propagationPolicy: q.get("propagationPolicy") ?? opts.propagationPolicy,
    orphanDependents: flag(q, "orphanDependents") ?? opts.orphanDependents,
    preconditions: opts.preconditions,
    dryRun: dry,
    // Without AllowUnsafeMalformedObjectDeletion the option is dropped, as upstream drops alpha fields.
    ignoreStoreReadErrorWithClusterBreakingPotential: r.store.unsafeDeletion ? unsafe === true : undefined,
  };
}

async function remove(r: ResourceRequest, gv: string): Promise<void> {
  const options = await deleteOptions(r);
  if (options.ignoreStoreReadErrorWithClusterBreakingPotential) {
    const { ignoreStoreReadErrorWithClusterBreakingPotential: _, ...others } = options;
    await r.store.deleteCorrupt(r.path.namespace, r.path.name!, { ...others, dryRun: others.dryRun || undefined });
    // Nothing readable was removed, so the answer is a Status, as upstream's for a nil object.
    return sendStatusSuccess(r.res, 200, { name: r.path.name!, group: r.store.def.group, kind: r.store.def.resource });
  }
  const result = await r.store.delete(r.path.namespace, r.path.name!, options);
  return sendObject(scope(r, gv), result.deleted ? 200 : 202, { key: "", object: result.object, revision: 0, encoded: new Map() });
}

async function deleteCollection(r: ResourceRequest, gv: string): Promise<void> {
  const options = await deleteOptions(r);
  const q = r.query;
  const result = await r.store.deleteCollection(r.path.namespace, {
    labelSelector: q.get("labelSelector") ?? undefined,
    fieldSelector: q.get("fieldSelector") ?? undefined,
  }, options);
  return sendList(scope(r, gv), result);
}

async function bind(r: ResourceRequest, _gv: string): Promise<void> {
  const body = decodeBody(await readBody(r.req), r.req.headers["content-type"], r.encoding).value as { target?: { kind?: string; name?: string }; metadata?: { name?: string } };
  const binder = r.store.def.subresources?.binding;
  if (binder === undefined) throw notFound({ group: r.store.def.group, resource: `${r.store.def.resource}/binding` }, r.path.name ?? "");
  await r.store.modify(r.path.namespace, r.path.name!, (pod) => {
    const errs = binder(pod, body.target ?? {});
    if (errs.length > 0) throw conflict({ group: "", resource: "pods/binding" }, r.path.name!, errs.map(formatFieldError).join(", "));
    return pod;
  }, { subresource: "binding" });
  return sendStatusSuccess(r.res, 201);
}

// ---- scale (autoscaling/v1 Scale over spec.replicas; KUBECTL.md "scale") ----

function scaleOf(def: ResourceDefinition, obj: ApiObject): Record<string, unknown> {
  const access = def.subresources!.scale!;
  const m = obj.metadata;
  return {
    kind: "Scale",
    apiVersion: "autoscaling/v1",
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp },
    spec: { replicas: access.specReplicas(obj) },
    status: { replicas: access.statusReplicas(obj), selector: access.selector(obj) },
  };
}

/** Apply a wanted Scale (from PUT, or a patched current Scale) to the object. */
async function updateScale(r: ResourceRequest, wanted: (current: Record<string, unknown>) => Promise<unknown> | unknown): Promise<void> {
  const def = r.store.def;
  const name = r.path.name!;
  const current = scaleOf(def, (await r.store.get(r.path.namespace, name)).object);
  const scale = (await wanted(current)) as { kind?: string; spec?: { replicas?: unknown }; metadata?: { resourceVersion?: string } } | null;
  if (typeof scale !== "object" || scale === null) throw badRequest("the body must be an autoscaling/v1 Scale object");
  if (scale.kind !== undefined && scale.kind !== "Scale") throw badRequest(`the kind in the data (${String(scale.kind)}) does not match the expected kind (Scale)`);
  const replicas = scale.spec?.replicas ?? 0;
  if (typeof replicas !== "number" || !Number.isInteger(replicas) || replicas < 0) {
    throw invalid({ group: "autoscaling", kind: "Scale" }, name, [field.invalid("spec.replicas", replicas, "must be greater than or equal to 0")]);
  }
  const wantRv = scale.metadata?.resourceVersion;
  const gr = { group: def.group, resource: def.resource };
  const out = await r.store.modify(r.path.namespace, name, (obj) => {
    if (wantRv !== undefined && wantRv !== "" && wantRv !== obj.metadata.resourceVersion) throw conflict(gr, name);
    def.subresources!.scale!.setSpecReplicas(obj, replicas);
    return obj;
  }, { dryRun: dryRun(r.query) });
  return sendJson(r.res, 200, scaleOf(def, out.object));
}

async function patchScale(r: ResourceRequest): Promise<void> {
  const apply = await readPatch(r, SCALE_SCHEMA);
  return updateScale(r, (current) => apply(current));
}

const SCALE_SCHEMA = "io.k8s.api.autoscaling.v1.Scale";
