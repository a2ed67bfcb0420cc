// The verbs on resource paths (seed 000, "Endpoints"): method, name,
// subresource and `watch` select the verb; the declaration says which verbs
// exist (405 otherwise); bodies are checked against the path (group,
// version, kind, namespace, name: 400 on a mismatch) before the registry
// store sees them. Responses go out through ../http/respond.ts. Writes decode
// their bodies by Content-Type (../http/decode-body.ts), validate fields
// (./write-options.ts) and record managed fields (../registry/field-manager.ts).

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
  type ApiObject,
} from "../../machinery/index.js";
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from "../../machinery/patch/index.js";
import type { SchemaRegistry } from "../../api/schema.js";
import { readBody } from "../http/body.js";
import { decodeObjectBody, decodePatchBody, type DecodedBody, type PatchType } from "../http/decode-body.js";
import { cachedRecord, type Cached } from "../../storage/cacher/index.js";
import { applyConfiguration, applyToScale, recordUpdate, SCALE_SCHEMA } from "../registry/field-manager.js";
import { checkBody, parseDryRun, setWarnings, writeOptions, type OptionsKind, type WriteOptions } from "./write-options.js";
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
    // A namespaced kind's path across all namespaces serves list and watch only, as upstream registers it.
    if (def.namespaced && path.namespace === undefined && method !== "GET") throw unsupported(method === "POST" ? "create" : method === "DELETE" ? "deletecollection" : method.toLowerCase());
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
      if (sub === "scale") return putScale(r);
      if (sub === "binding") throw unsupported("update");
      return update(r, gv);
    case "PATCH":
      if (!allows(def, "patch") && sub === undefined) throw unsupported("patch");
      if (sub === "scale") return patchScale(r);
      if (sub === "binding" || sub === "finalize") throw unsupported("patch");
      return patch(r, gv);
    case "DELETE":
      // No subresource is deleted (deleting one must never delete its object).
      if (sub !== undefined) throw methodNotSupported({ group: def.group, resource: `${def.resource}/${sub}` }, "delete");
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
  return (
    (sub === "status" && !!subs.status) ||
    (sub === "binding" && !!subs.binding) ||
    (sub === "scale" && !!subs.scale) ||
    (sub === "finalize" && !!subs.finalize) ||
    (sub === "ephemeralcontainers" && !!subs.ephemeralContainers)
  );
}

function subresourceOf(path: ResourcePath): Subresource | undefined {
  const sub = path.subresource;
  return sub === "status" || sub === "finalize" || sub === "ephemeralcontainers" ? sub : undefined;
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

/** The write's options, read before its body (an invalid option is answered without reading it). */
function optionsOf(r: ResourceRequest, kind: OptionsKind, patchType?: PatchType): WriteOptions {
  return writeOptions(r.query, r.req.headers["user-agent"], kind, r.watchEnv.metaGroup, patchType);
}

/** The subresource a manager writes through, as managedFields record it. */
function managedSubresource(r: ResourceRequest): string | undefined {
  const sub = r.path.subresource;
  return sub === "status" || sub === "scale" || sub === "ephemeralcontainers" ? sub : undefined;
}

/** Field validation of a body of the resource's kind (or of `type`, for Scale). */
function validateFields(r: ResourceRequest, opts: WriteOptions, gv: string, body: DecodedBody | { value: unknown; duplicates: readonly never[] }, type = r.store.def.schema, kind = r.store.def.kind) {
  const version = gv.slice(gv.indexOf("/") + 1);
  return checkBody(
    { schemas: r.schemas, type, level: opts.fieldValidation, gk: { group: type === SCALE_SCHEMA ? "autoscaling" : r.store.def.group, kind }, version, name: r.path.name ?? bodyName(body.value), optionsKind: opts.optionsKind },
    body.value,
    body.duplicates,
  );
}

/** The name a body gives itself (a POST's path has none), for messages. */
function bodyName(value: unknown): string {
  const name = (value as { metadata?: { name?: unknown } } | null)?.metadata?.name;
  return typeof name === "string" ? name : "";
}

/** Store options shared by every write of this request. */
function storeOptions(r: ResourceRequest, opts: WriteOptions, gv: string) {
  return {
    dryRun: opts.dryRun,
    manageFields: recordUpdate({ schemas: r.schemas, def: r.store.def, manager: opts.fieldManager, apiVersion: gv, subresource: managedSubresource(r) }),
  };
}

/** Decode an object body, check it against the path, validate its fields. */
async function readObject(r: ResourceRequest, gv: string, opts: WriteOptions): Promise<{ obj: ApiObject; warnings: string[] }> {
  const decoded = decodeObjectBody(r.req.headers["content-type"], await readBody(r.req), r.encoding);
  if (typeof decoded.value !== "object" || decoded.value === null || Array.isArray(decoded.value)) throw badRequest("the body of the request must be a JSON object");
  checkAgainstPath(r, decoded.value as ApiObject, gv);
  const { value, warnings } = validateFields(r, opts, gv, decoded);
  const obj = value as ApiObject;
  obj.metadata ??= {};
  return { obj, warnings };
}

/** A body's apiVersion, kind, namespace and name must agree with the path (400 otherwise). */
function checkAgainstPath(r: ResourceRequest, obj: ApiObject, gv: string): void {
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
  const ns = obj.metadata?.namespace;
  if (def.namespaced && ns !== undefined && ns !== "" && ns !== r.path.namespace) {
    throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
  }
  const name = obj.metadata?.name;
  if (r.path.name !== undefined && r.path.subresource === undefined && name !== undefined && name !== r.path.name) {
    throw badRequest(`the name of the object (${name}) does not match the name on the URL (${r.path.name})`);
  }
}

async function create(r: ResourceRequest, gv: string): Promise<void> {
  const opts = optionsOf(r, "CreateOptions");
  const { obj, warnings } = await readObject(r, gv, opts);
  const created = await r.store.create(r.path.namespace, obj, storeOptions(r, opts, gv));
  setWarnings(r.res, warnings);
  return sendObject(scope(r, gv), 201, created);
}

async function update(r: ResourceRequest, gv: string): Promise<void> {
  const opts = optionsOf(r, "UpdateOptions");
  const { obj, warnings } = await readObject(r, gv, opts);
  obj.metadata.name ??= r.path.name;
  const subresource = subresourceOf(r.path);
  const { object, created } = await r.store.update(r.path.namespace, r.path.name!, obj, { ...storeOptions(r, opts, gv), subresource });
  setWarnings(r.res, warnings);
  return sendObject(scope(r, gv), created ? 201 : 200, object);
}

/**
 * A non-apply patch as a function of the current object (seed 000, "Update
 * mechanisms"): the patched object, field-validated. `warnings` holds the last
 * attempt's (the store may retry on a conflict).
 */
function patcher(r: ResourceRequest, decoded: DecodedBody & { patchType: PatchType }, opts: WriteOptions, gv: string, type: string, kind: string) {
  const body = decoded.value;
  if (decoded.patchType === "merge" && (typeof body !== "object" || body === null || Array.isArray(body))) throw badRequest("a merge patch must be a JSON object");
  const state = { warnings: [] as string[] };
  // The patch's own duplicate keys count (upstream decodes merge and strategic patches strictly); a JSON patch's are operations.
  const duplicates = decoded.patchType === "json" ? [] : decoded.duplicates;
  const run = (current: unknown): unknown => {
    let next: unknown;
    switch (decoded.patchType) {
      case "json":
        next = applyJsonPatch(current, body);
        break;
      case "strategic":
        next = applyStrategicMergePatch(current, body, { registry: r.schemas, type });
        break;
      default:
        next = applyMergePatch(current, body);
    }
    if (typeof next !== "object" || next === null || Array.isArray(next)) throw badRequest("the patch result is not an object");
    const checked = validateFields(r, opts, gv, { value: next, duplicates: duplicates as readonly never[] }, type, kind);
    state.warnings = checked.warnings;
    return checked.value;
  };
  return { run, state };
}

async function patch(r: ResourceRequest, gv: string): Promise<void> {
  const decoded = decodePatchBody(r.req.headers["content-type"], await readBody(r.req), r.encoding, r.store.def.strategicMerge !== false);
  const opts = optionsOf(r, "PatchOptions", decoded.patchType);
  if (decoded.patchType === "apply") return serverSideApply(r, gv, opts, decoded);
  const { run, state } = patcher(r, decoded, opts, gv, r.store.def.schema, r.store.def.kind);
  const gr = { group: r.store.def.group, resource: r.store.def.resource };
  const out = await r.store.modify(
    r.path.namespace,
    r.path.name!,
    (current) => {
      const next = run(current) as ApiObject;
      // A patch may be conditional on the resourceVersion it carries (seed 000, "Update mechanisms").
      const wantRv = (next.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion;
      if (wantRv !== undefined && wantRv !== current.metadata.resourceVersion) throw conflict(gr, r.path.name!);
      return next;
    },
    { ...storeOptions(r, opts, gv), subresource: subresourceOf(r.path) },
  );
  setWarnings(r.res, state.warnings);
  return sendObject(scope(r, gv), 200, out);
}

/**
 * Server-side apply (application/apply-patch+yaml): merge the applied
 * configuration into the stored object as `fieldManager`, or create the object
 * (201) when there is none. Conflicts are a 409 listing each field and its
 * manager unless `force=true`.
 */
async function serverSideApply(r: ResourceRequest, gv: string, opts: WriteOptions, decoded: DecodedBody): Promise<void> {
  const raw = decoded.value;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw badRequest("apply is only supported on objects with metadata");
  checkAgainstPath(r, raw as ApiObject, gv);
  const { value, warnings } = validateFields(r, opts, gv, decoded);
  const applied = value as ApiObject;
  if (typeof applied.metadata !== "object" || applied.metadata === null) throw badRequest("apply is only supported on objects with metadata");
  applied.metadata.name ??= r.path.name;
  const subresource = subresourceOf(r.path);
  const config = { schemas: r.schemas, def: r.store.def, manager: opts.fieldManager, apiVersion: gv, subresource: managedSubresource(r), applied, force: opts.force };
  const gr = { group: r.store.def.group, resource: r.store.def.resource };
  const wantRv = applied.metadata.resourceVersion;
  const now = new Date();
  const send = (code: number, out: Cached<ApiObject>) => {
    setWarnings(r.res, warnings);
    return sendObject(scope(r, gv), code, out);
  };
  // Patch, or create when absent; a create that loses the race to another writer applies over what it made.
  for (let attempt = 0; ; attempt++) {
    try {
      const out = await r.store.modify(
        r.path.namespace,
        r.path.name!,
        (current) => {
          if (wantRv !== undefined && wantRv !== "" && wantRv !== current.metadata.resourceVersion) throw conflict(gr, r.path.name!);
          return applyConfiguration(config, current, now);
        },
        { dryRun: opts.dryRun, now, subresource },
      );
      return send(200, out);
    } catch (err) {
      if (!isApiError(err, "NotFound") || subresource !== undefined) throw err;
    }
    try {
      return send(201, await r.store.create(r.path.namespace, applyConfiguration(config, undefined, now), { dryRun: opts.dryRun, now }));
    } catch (err) {
      if (!isApiError(err, "AlreadyExists") || attempt > 0) throw err;
    }
  }
}

async function deleteOptions(r: ResourceRequest): Promise<DeleteOptions> {
  const body = await readBody(r.req);
  const fromBody = body.length > 0 ? decodeObjectBody(r.req.headers["content-type"], body, r.encoding).value : {};
  if (typeof fromBody !== "object" || fromBody === null || Array.isArray(fromBody)) throw badRequest("DeleteOptions must be a JSON object");
  const opts = fromBody as DeleteOptions & { dryRun?: unknown };
  const unsafe = flag(r.query, "ignoreStoreReadErrorWithClusterBreakingPotential") ?? opts.ignoreStoreReadErrorWithClusterBreakingPotential;
  const q = r.query;
  const grace = intParam(q, "gracePeriodSeconds");
  if (opts.dryRun !== undefined && opts.dryRun !== null && (!Array.isArray(opts.dryRun) || !opts.dryRun.every((v) => typeof v === "string"))) {
    throw badRequest("DeleteOptions.dryRun must be a list of strings");
  }
  const dry = parseDryRun(q.getAll("dryRun")) || parseDryRun((opts.dryRun as string[] | undefined) ?? []);
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
  return sendObject(scope(r, gv), result.deleted ? 200 : 202, cachedRecord({ key: "", object: result.object, revision: 0 }));
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
  const body = decodeObjectBody(r.req.headers["content-type"], await readBody(r.req), r.encoding).value as { target?: { kind?: string; name?: string }; metadata?: { name?: string } };
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

/**
 * Apply a wanted Scale (from PUT, or a patched current Scale) to the object:
 * only spec.replicas moves; the write is recorded for the manager with
 * subresource "scale".
 */
async function updateScale(
  r: ResourceRequest,
  opts: WriteOptions & { applied?: boolean },
  wanted: (current: Record<string, unknown>, parent: ApiObject) => unknown,
): Promise<void> {
  const def = r.store.def;
  const name = r.path.name!;
  const gr = { group: def.group, resource: def.resource };
  const out = await r.store.modify(r.path.namespace, name, (obj) => {
    const scale = wanted(scaleOf(def, obj), obj) as { kind?: string; spec?: { replicas?: unknown }; metadata?: { resourceVersion?: string } } | null;
    if (typeof scale !== "object" || scale === null) throw badRequest("the body must be an autoscaling/v1 Scale object");
    if (scale.kind !== undefined && scale.kind !== "Scale") throw badRequest(`the kind in the data (${String(scale.kind)}) does not match the expected kind (Scale)`);
    const n = scale.spec?.replicas ?? 0;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0) {
      throw invalid({ group: "autoscaling", kind: "Scale" }, name, [field.invalid("spec.replicas", n, "must be greater than or equal to 0")]);
    }
    const wantRv = scale.metadata?.resourceVersion;
    if (wantRv !== undefined && wantRv !== "" && wantRv !== obj.metadata.resourceVersion) throw conflict(gr, name);
    def.subresources!.scale!.setSpecReplicas(obj, n);
    return obj;
  }, opts.applied ? { dryRun: opts.dryRun } : storeOptions(r, opts, groupVersion(def, r.path.version)));
  return sendJson(r.res, 200, scaleOf(def, out.object));
}

async function putScale(r: ResourceRequest): Promise<void> {
  const opts = optionsOf(r, "UpdateOptions");
  const decoded = decodeObjectBody(r.req.headers["content-type"], await readBody(r.req), r.encoding);
  const { value, warnings } = validateFields(r, opts, "autoscaling/v1", decoded, SCALE_SCHEMA, "Scale");
  setWarnings(r.res, warnings);
  return updateScale(r, opts, () => value);
}

async function patchScale(r: ResourceRequest): Promise<void> {
  const decoded = decodePatchBody(r.req.headers["content-type"], await readBody(r.req), r.encoding, r.store.def.strategicMerge !== false);
  const opts = optionsOf(r, "PatchOptions", decoded.patchType);
  if (decoded.patchType === "apply") return applyScale(r, opts, decoded);
  const { run, state } = patcher(r, decoded, opts, "autoscaling/v1", SCALE_SCHEMA, "Scale");
  const sent = updateScale(r, opts, (current) => {
    const next = run(current);
    setWarnings(r.res, state.warnings);
    return next;
  });
  return sent;
}

/** Server-side apply of a Scale: ownership of replicas maps between the Scale and its parent (registry/field-manager.ts). */
async function applyScale(r: ResourceRequest, opts: WriteOptions, decoded: DecodedBody): Promise<void> {
  const { value, warnings } = validateFields(r, opts, "autoscaling/v1", decoded, SCALE_SCHEMA, "Scale");
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw badRequest("apply is only supported on objects with metadata");
  const applied = value as ApiObject;
  if (applied.kind !== "Scale") throw badRequest(`the kind in the data (${String(applied.kind ?? "")}) does not match the expected kind (Scale)`);
  const def = r.store.def;
  const config = { schemas: r.schemas, def, manager: opts.fieldManager, apiVersion: groupVersion(def, r.path.version), applied, force: opts.force };
  const now = new Date();
  setWarnings(r.res, warnings);
  return updateScale(r, { ...opts, applied: true }, (current, parent) => {
    const { scale, managedFields } = applyToScale(config, parent, current as ApiObject, now);
    parent.metadata.managedFields = managedFields;
    return scale;
  });
}
