// The verbs on resource paths (seed 000, "Endpoints"): method, name,
// subresource and `watch` select the verb; the declaration says which verbs
// exist (405 otherwise), subresources included (src/api/subresources: a
// subresource serves the verbs its declaration lists, with code of its own
// from ./subresources/ or as a get/update/patch of its parent); bodies are
// checked against the path (group, version, kind, namespace, name: 400 on a
// mismatch) before the registry store sees them. Responses go out through ../http/respond.ts.
// Writes decode their bodies by Content-Type (../http/decode-body.ts),
// validate fields (./write-options.ts) and record managed fields
// (../registry/field-manager.ts).

import { findSubresource, schemaOf, type ResourceDefinition, type Subresource } from "../../api/resource.js";
import { badRequest, conflict, isApiError, methodNotSupported, notFound, pathNotFound, type ApiObject } from "../../machinery/index.js";
import { readBody } from "../http/body.js";
import { decodeObjectBody, decodePatchBody, type DecodedBody } from "../http/decode-body.js";
import { cachedRecord, type Cached } from "../../storage/cacher/index.js";
import { applyConfiguration } from "../registry/field-manager.js";
import { parseDryRun, setWarnings, type WriteOptions } from "./write-options.js";
import { negotiateFor, sendList, sendObject, sendStatusSuccess, sendWatch, sendWatchError } from "../http/respond.js";
import type { DeleteOptions } from "../registry/store.js";
import { SUBRESOURCE_HANDLERS, subresourceVerb } from "./subresources/index.js";
import { proxyRequest } from "./subresources/proxy.js";
import { WatchStream } from "../registry/watch.js";
import { inVersion, oneInVersion } from "./versions.js";
import { admissionRequest, checkAgainstPath, groupVersion, optionsOf, patcher, readObject, scope, storeOptions, validateFields, type ResourceRequest } from "./request.js";
import { queryBool } from "../../machinery/query-bool.js";

export type { HandlerDeps, ResourceRequest } from "./request.js";

function allows(def: ResourceDefinition, verb: string): boolean {
  return def.verbs === undefined || (def.verbs as readonly string[]).includes(verb);
}

/** Upstream's reading of a boolean parameter: all but "0" and "false" are true (`watch=bogus` watches). */
const flag = queryBool;

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
  if (path.subresource !== undefined) return subresource(r, gv, method, path.subresource);
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
      return get(r, gv);
    case "PUT":
      if (!allows(def, "update")) throw unsupported("update");
      return update(r, gv, undefined);
    case "PATCH":
      if (!allows(def, "patch")) throw unsupported("patch");
      return patch(r, gv, undefined);
    case "DELETE":
      if (!allows(def, "delete")) throw unsupported("delete");
      return remove(r, gv);
    case "POST":
      throw unsupported("create");
    default:
      throw unsupported(method.toLowerCase());
  }
}

/** `/{resource}/{name}/{subresource}`: the verbs the kind's declaration of it lists (404 when it has none). */
async function subresource(r: ResourceRequest, gv: string, method: string, name: string): Promise<void> {
  const def = r.store.def;
  const declared = findSubresource(def, name, r.path.version);
  if (declared === undefined) throw notFound({ group: def.group, resource: `${def.resource}/${name}` }, r.path.name ?? "");
  // Every method, and the rest of the path, go on to the backend (./subresources/proxy.ts).
  if (declared.proxy) return proxyRequest({ ...r, name: r.path.name! });
  if (r.path.subpath !== undefined) throw pathNotFound();
  // Connect subresources are served on the server's "upgrade" event (./subresources/upgrade.ts); over HTTP/2 or without one, upstream answers the same.
  if (declared.connect) throw badRequest("Upgrade request required");
  const verb = subresourceVerb(def, declared, method);
  const own = SUBRESOURCE_HANDLERS[name]?.[verb];
  if (own !== undefined) return own({ ...r, name: r.path.name!, subresource: declared });
  switch (verb) {
    case "get":
      return get(r, gv);
    case "update":
      return update(r, gv, declared);
    case "patch":
      return patch(r, gv, declared);
    default:
      // Listed without a handler of its own: nothing to serve it with.
      throw methodNotSupported({ group: def.group, resource: `${def.resource}/${name}` }, verb);
  }
}

/** The subresource a write's managedFields entry names. */
function recordedAs(sub: Subresource | undefined): string | undefined {
  return sub?.recordsManager ? sub.name : undefined;
}

async function get(r: ResourceRequest, gv: string): Promise<void> {
  const found = await r.store.get(r.path.namespace, r.path.name!, { resourceVersion: r.query.get("resourceVersion") ?? undefined });
  return sendObject(scope(r, gv), 200, await oneInVersion(r.store.def, r.path.version, found));
}

/** What a list and a watch both select by: selectors and the resource version to start from. */
function selection(q: URLSearchParams, version: string) {
  return {
    version,
    labelSelector: q.get("labelSelector") ?? undefined,
    fieldSelector: q.get("fieldSelector") ?? undefined,
    shardSelector: q.get("shardSelector") ?? undefined,
    resourceVersion: q.get("resourceVersion") ?? undefined,
    resourceVersionMatch: q.get("resourceVersionMatch") ?? undefined,
  };
}

async function list(r: ResourceRequest, gv: string): Promise<void> {
  const q = r.query;
  const result = await r.store.list(r.path.namespace, {
    ...selection(q, r.path.version),
    limit: intParam(q, "limit"),
    continue: q.get("continue") ?? undefined,
  });
  return sendList(scope(r, gv), { ...result, items: await inVersion(r.store.def, r.path.version, result.items) });
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
      ...selection(q, r.path.version),
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
  const def = r.store.def;
  const present = def.conversion === undefined ? undefined : (c: Cached<ApiObject>) => oneInVersion(def, r.path.version, c);
  return sendWatch({ ...scope(r, gv), ...(present ? { present } : {}) }, stream, representation, r.watchEnv);
}

async function create(r: ResourceRequest, gv: string): Promise<void> {
  const opts = optionsOf(r, "CreateOptions");
  const { obj, warnings } = await readObject(r, gv, opts);
  const created = await r.store.create(r.path.namespace, obj, storeOptions(r, opts, gv, undefined));
  setWarnings(r.res, warnings);
  return sendObject(scope(r, gv), 201, await oneInVersion(r.store.def, r.path.version, created));
}

async function update(r: ResourceRequest, gv: string, subresource: Subresource | undefined): Promise<void> {
  const opts = optionsOf(r, "UpdateOptions");
  const { obj, warnings } = await readObject(r, gv, opts);
  obj.metadata.name ??= r.path.name;
  const { object, created } = await r.store.update(r.path.namespace, r.path.name!, obj, { ...storeOptions(r, opts, gv, recordedAs(subresource)), subresource });
  setWarnings(r.res, warnings);
  return sendObject(scope(r, gv), created ? 201 : 200, await oneInVersion(r.store.def, r.path.version, object));
}

async function patch(r: ResourceRequest, gv: string, subresource: Subresource | undefined): Promise<void> {
  const decoded = decodePatchBody(r.req.headers["content-type"], await readBody(r.req), r.encoding, r.store.def.strategicMerge !== false);
  const opts = optionsOf(r, "PatchOptions", decoded.patchType);
  if (decoded.patchType === "apply") return serverSideApply(r, gv, opts, decoded, subresource);
  const { run, state } = patcher(r, decoded, opts, gv, schemaOf(r.store.def, r.path.version), r.store.def.kind);
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
    { ...storeOptions(r, opts, gv, recordedAs(subresource)), subresource },
  );
  setWarnings(r.res, state.warnings);
  return sendObject(scope(r, gv), 200, await oneInVersion(r.store.def, r.path.version, out));
}

/**
 * Server-side apply (application/apply-patch+yaml): merge the applied
 * configuration into the stored object as `fieldManager`, or create the object
 * (201) when there is none. Conflicts are a 409 listing each field and its
 * manager unless `force=true`.
 */
async function serverSideApply(r: ResourceRequest, gv: string, opts: WriteOptions, decoded: DecodedBody, subresource: Subresource | undefined): Promise<void> {
  const raw = decoded.value;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw badRequest("apply is only supported on objects with metadata");
  checkAgainstPath(r, raw as ApiObject, gv);
  const { value, warnings } = validateFields(r, opts, gv, decoded);
  const applied = value as ApiObject;
  if (typeof applied.metadata !== "object" || applied.metadata === null) throw badRequest("apply is only supported on objects with metadata");
  applied.metadata.name ??= r.path.name;
  const config = { schemas: r.schemas, def: r.store.def, manager: opts.fieldManager, apiVersion: gv, subresource: recordedAs(subresource), applied, force: opts.force };
  const gr = { group: r.store.def.group, resource: r.store.def.resource };
  const wantRv = applied.metadata.resourceVersion;
  const now = new Date();
  const send = async (code: number, out: Cached<ApiObject>) => {
    setWarnings(r.res, warnings);
    return sendObject(scope(r, gv), code, await oneInVersion(r.store.def, r.path.version, out));
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
        { dryRun: opts.dryRun, now, subresource, admission: admissionRequest(r), version: r.path.version },
      );
      return send(200, out);
    } catch (err) {
      if (!isApiError(err, "NotFound") || subresource !== undefined) throw err;
    }
    try {
      return send(201, await r.store.create(r.path.namespace, applyConfiguration(config, undefined, now), { dryRun: opts.dryRun, now, admission: admissionRequest(r), version: r.path.version }));
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
  const result = await r.store.delete(r.path.namespace, r.path.name!, options, { admission: admissionRequest(r) });
  return sendObject(scope(r, gv), result.deleted ? 200 : 202, await oneInVersion(r.store.def, r.path.version, cachedRecord({ key: "", object: result.object, revision: 0 })));
}

async function deleteCollection(r: ResourceRequest, gv: string): Promise<void> {
  const options = await deleteOptions(r);
  const q = r.query;
  const result = await r.store.deleteCollection(r.path.namespace, {
    labelSelector: q.get("labelSelector") ?? undefined,
    fieldSelector: q.get("fieldSelector") ?? undefined,
  }, options, { admission: admissionRequest(r) });
  return sendList(scope(r, gv), { ...result, items: await inVersion(r.store.def, r.path.version, result.items) });
}
