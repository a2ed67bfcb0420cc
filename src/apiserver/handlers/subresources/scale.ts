// Serves `scale` (declared in src/api/subresources/scale.ts): the
// autoscaling/v1 Scale made from the object, and writes of one that move
// only the replicas, through the main resource's update pipeline, recorded
// for the manager under "scale" (KUBECTL.md "scale").

import type { ScaleAccess } from "../../../api/resource.js";
import { scaleAccess } from "../../../api/subresources/index.js";
import { badRequest, conflict, field, invalid, type ApiObject } from "../../../machinery/index.js";
import { readBody } from "../../http/body.js";
import { decodeObjectBody, decodePatchBody, type DecodedBody } from "../../http/decode-body.js";
import { sendJson } from "../../http/respond.js";
import { applyToScale, SCALE_SCHEMA } from "../../registry/field-manager.js";
import { groupVersion, optionsOf, patcher, storeOptions, validateFields, type SubresourceHandlers, type SubresourceRequest } from "../request.js";
import { setWarnings, type WriteOptions } from "../write-options.js";

export const scaleHandlers: SubresourceHandlers = {
  get: async (r) => sendJson(r.res, 200, scaleOf(accessOf(r), (await r.store.get(r.path.namespace, r.name)).object)),
  update: (r) => putScale(r, accessOf(r)),
  patch: (r) => patchScale(r, accessOf(r)),
};

function accessOf(r: SubresourceRequest): ScaleAccess<ApiObject> {
  return scaleAccess(r.store.def)!;
}

function scaleOf(access: ScaleAccess<ApiObject>, obj: ApiObject): Record<string, unknown> {
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
  r: SubresourceRequest,
  access: ScaleAccess<ApiObject>,
  opts: WriteOptions & { applied?: boolean },
  wanted: (current: Record<string, unknown>, parent: ApiObject) => unknown,
): Promise<void> {
  const def = r.store.def;
  const name = r.name;
  const gr = { group: def.group, resource: def.resource };
  const out = await r.store.modify(r.path.namespace, name, (obj) => {
    const scale = wanted(scaleOf(access, obj), obj) as { kind?: string; spec?: { replicas?: unknown }; metadata?: { resourceVersion?: string } } | null;
    if (typeof scale !== "object" || scale === null) throw badRequest("the body must be an autoscaling/v1 Scale object");
    if (scale.kind !== undefined && scale.kind !== "Scale") throw badRequest(`the kind in the data (${String(scale.kind)}) does not match the expected kind (Scale)`);
    const n = scale.spec?.replicas ?? 0;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0) {
      throw invalid({ group: "autoscaling", kind: "Scale" }, name, [field.invalid("spec.replicas", n, "must be greater than or equal to 0")]);
    }
    const wantRv = scale.metadata?.resourceVersion;
    if (wantRv !== undefined && wantRv !== "" && wantRv !== obj.metadata.resourceVersion) throw conflict(gr, name);
    access.setSpecReplicas(obj, n);
    return obj;
  }, opts.applied ? { dryRun: opts.dryRun } : storeOptions(r, opts, groupVersion(def, r.path.version), "scale"));
  return sendJson(r.res, 200, scaleOf(access, out.object));
}

/** Scale is autoscaling/v1 in both naming profiles, whether or not a kind of that group version is served: a Protobuf body names it so. */
function scaleEncoding(r: SubresourceRequest) {
  return { ...r.encoding, lookupType: (apiVersion: string, kind: string) => (apiVersion === "autoscaling/v1" && kind === "Scale" ? SCALE_SCHEMA : r.encoding.lookupType(apiVersion, kind)) };
}

async function putScale(r: SubresourceRequest, access: ScaleAccess<ApiObject>): Promise<void> {
  const opts = optionsOf(r, "UpdateOptions");
  const decoded = decodeObjectBody(r.req.headers["content-type"], await readBody(r.req), scaleEncoding(r));
  const { value, warnings } = validateFields(r, opts, "autoscaling/v1", decoded, SCALE_SCHEMA, "Scale");
  setWarnings(r.res, warnings);
  return updateScale(r, access, opts, () => value);
}

async function patchScale(r: SubresourceRequest, access: ScaleAccess<ApiObject>): Promise<void> {
  const decoded = decodePatchBody(r.req.headers["content-type"], await readBody(r.req), r.encoding, r.store.def.strategicMerge !== false);
  const opts = optionsOf(r, "PatchOptions", decoded.patchType);
  if (decoded.patchType === "apply") return applyScale(r, access, opts, decoded);
  const { run, state } = patcher(r, decoded, opts, "autoscaling/v1", SCALE_SCHEMA, "Scale");
  return updateScale(r, access, opts, (current) => {
    const next = run(current);
    setWarnings(r.res, state.warnings);
    return next;
  });
}

/** Server-side apply of a Scale: ownership of replicas maps between the Scale and its parent (registry/field-manager.ts). */
async function applyScale(r: SubresourceRequest, access: ScaleAccess<ApiObject>, opts: WriteOptions, decoded: DecodedBody): Promise<void> {
  const { value, warnings } = validateFields(r, opts, "autoscaling/v1", decoded, SCALE_SCHEMA, "Scale");
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw badRequest("apply is only supported on objects with metadata");
  const applied = value as ApiObject;
  if (applied.kind !== "Scale") throw badRequest(`the kind in the data (${String(applied.kind ?? "")}) does not match the expected kind (Scale)`);
  const def = r.store.def;
  const config = { schemas: r.schemas, def, manager: opts.fieldManager, apiVersion: groupVersion(def, r.path.version), applied, force: opts.force };
  const now = new Date();
  setWarnings(r.res, warnings);
  return updateScale(r, access, { ...opts, applied: true }, (current, parent) => {
    const { scale, managedFields } = applyToScale(config, parent, current as ApiObject, now);
    parent.metadata.managedFields = managedFields;
    return scale;
  });
}
