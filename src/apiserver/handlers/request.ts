// What every verb handler of the resource API shares (resource.ts and the
// subresource declarations' handlers): the request, its options, field
// validation of bodies, the check of a body against its path, and the store
// options every write of a request passes.

import { checkDepth, tooDeep } from "../../machinery/object-depth.js";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { schemaOf, type ResourceDefinition, type Subresource, type SubresourceVerb } from "../../api/resource.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import { badRequest, type ApiObject } from "../../machinery/index.js";
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from "../../machinery/patch/index.js";
import { observeRequestObject, readBody } from "../http/body.js";
import { decodeObjectBody, type DecodedBody, type PatchType } from "../http/decode-body.js";
import type { Encoding, Incoming, Outgoing, ResponseScope } from "../http/respond.js";
import type { NodeAgentClient } from "../node-agents.js";
import type { ServiceAccountTokens } from "../authentication/service-account-tokens.js";
import { recordUpdate, SCALE_SCHEMA } from "../registry/field-manager.js";
import type { RegistryStore } from "../registry/store.js";
import type { WatchEnv } from "../registry/watch.js";
import type { ResourcePath } from "../routing.js";
import { checkBody, setWarnings, writeOptions, type OptionsKind, type WriteOptions } from "./write-options.js";
import type { AdmissionRequest, AdmissionUser } from "../../api/admission.js";
import { addAuditAnnotation } from "../audit/index.js";
import { addWebhookSeconds } from "../request-metrics.js";

/** What handlers reach beyond the resource's own store: node agents, for pods/log, exec and attach. */
export interface HandlerDeps {
  /** The API server's HTTPS client for node agents (its client certificate). */
  agents: NodeAgentClient;
  /** The nodes' store (where a pod's agent is found); absent when nodes are not served. */
  nodes: RegistryStore | undefined;
  /** Issues service-account tokens (serviceaccounts/token). */
  serviceAccountTokens?: ServiceAccountTokens;
  /** The PodDisruptionBudgets' store (pods/eviction); absent when they are not served. */
  pdbs?: RegistryStore | undefined;
  /** The Endpoints' store (services/NAME/proxy); absent when they are not served. */
  endpoints?: RegistryStore | undefined;
}

export interface ResourceRequest extends HandlerDeps {
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
  /** The authenticated user (after impersonation), handed to admission. */
  user?: AdmissionUser;
}

/** A request routed to one object's subresource (./subresources/). */
export interface SubresourceRequest extends ResourceRequest {
  readonly name: string;
  readonly subresource: Subresource;
}

/** Code of a subresource's own, per verb (./subresources/index.ts). */
export type SubresourceHandlers = { readonly [V in SubresourceVerb]?: (r: SubresourceRequest) => Promise<void> };

/** An HTTP/1.1 Upgrade routed to a connect subresource (exec, attach: ./subresources/upgrade.ts). */
export interface UpgradeRequest extends HandlerDeps {
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
  path: ResourcePath;
  query: URLSearchParams;
  store: RegistryStore;
  readonly name: string;
  readonly subresource: Subresource;
  /** The authenticated user (after impersonation), handed to admission. */
  user?: AdmissionUser;
}

export function scope(r: ResourceRequest, gv: string): ResponseScope {
  return { req: r.req, res: r.res, def: r.store.def, gv, encoding: r.encoding };
}

export function groupVersion(def: ResourceDefinition, version: string): string {
  return def.group === "" ? version : `${def.group}/${version}`;
}

/** The write's options, read before its body (an invalid option is answered without reading it). */
export function optionsOf(r: ResourceRequest, kind: OptionsKind, patchType?: PatchType): WriteOptions {
  return writeOptions(r.query, r.req.headers["user-agent"], kind, r.watchEnv.metaGroup, patchType);
}

/** Field validation of a body of the resource's kind (or of `type`, for Scale). */
export function validateFields(
  r: ResourceRequest,
  opts: WriteOptions,
  gv: string,
  body: DecodedBody | { value: unknown; duplicates: readonly never[] },
  type = schemaOf(r.store.def, gv.slice(gv.indexOf("/") + 1)),
  kind = r.store.def.kind,
) {
  const version = gv.slice(gv.indexOf("/") + 1);
  return checkBody(
    { schemas: r.schemas, type, level: opts.fieldValidation, gk: { group: type === SCALE_SCHEMA ? "autoscaling" : r.store.def.group, kind }, version, name: r.path.name ?? bodyName(body.value), optionsKind: opts.optionsKind,
      pruneUnknown: type === schemaOf(r.store.def, version) && r.store.def.pruneUnknown ? (v) => r.store.def.pruneUnknown!(v, version) : undefined },
    body.value,
    body.duplicates,
  );
}

/** The name a body gives itself (a POST's path has none), for messages. */
function bodyName(value: unknown): string {
  const name = (value as { metadata?: { name?: unknown } } | null)?.metadata?.name;
  return typeof name === "string" ? name : "";
}

/**
 * Store options shared by every write of this request; `recordedAs` is the
 * subresource managedFields name the write under (see Subresource.recordsManager).
 */
export function storeOptions(r: ResourceRequest, opts: WriteOptions, gv: string, recordedAs: string | undefined) {
  return {
    dryRun: opts.dryRun,
    manageFields: recordUpdate({ schemas: r.schemas, def: r.store.def, manager: opts.fieldManager, apiVersion: gv, subresource: recordedAs }),
    admission: admissionRequest(r),
    version: r.path.version,
  };
}

/** The request as admission plugins see it: the user, Warning headers, audit annotations. */
export function admissionRequest(r: ResourceRequest): AdmissionRequest {
  return {
    user: r.user,
    warn: (text) => setWarnings(r.res, [text]),
    annotate: (key, value) => addAuditAnnotation(r.req, key, value),
    calledOut: (seconds) => addWebhookSeconds(r.req, seconds),
  };
}

/** Decode an object body, check it against the path, validate its fields. */
export async function readObject(r: ResourceRequest, gv: string, opts: WriteOptions): Promise<{ obj: ApiObject; warnings: string[] }> {
  const decoded = decodeObjectBody(r.req.headers["content-type"], await readBody(r.req), r.encoding);
  if (typeof decoded.value !== "object" || decoded.value === null || Array.isArray(decoded.value)) throw badRequest("the body of the request must be a JSON object");
  observeRequestObject(r.req, decoded.value);
  checkAgainstPath(r, decoded.value as ApiObject, gv);
  const { value, warnings } = validateFields(r, opts, gv, decoded);
  const obj = value as ApiObject;
  obj.metadata ??= {};
  return { obj, warnings };
}

/** A body's apiVersion, kind, namespace and name must agree with the path (400 otherwise). */
export function checkAgainstPath(r: ResourceRequest, obj: ApiObject, gv: string): void {
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

/**
 * A non-apply patch as a function of the current object (seed 000, "Update
 * mechanisms"): the patched object, field-validated. `warnings` holds the last
 * attempt's (the store may retry on a conflict).
 */
export function patcher(r: ResourceRequest, decoded: DecodedBody & { patchType: PatchType }, opts: WriteOptions, gv: string, type: string, kind: string) {
  const body = decoded.value;
  if (decoded.patchType === "merge" && (typeof body !== "object" || body === null || Array.isArray(body))) throw badRequest("a merge patch must be a JSON object");
  const state = { warnings: [] as string[] };
  // The patch's own duplicate keys count (upstream decodes merge and strategic patches strictly); a JSON patch's are operations.
  const duplicates = decoded.patchType === "json" ? [] : decoded.duplicates;
  const run = (current: unknown): unknown => {
    let next: unknown;
    try {
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
    } catch (err) {
      // A JSON patch that copies a subtree into itself, again and again, nests without bound.
      if (err instanceof RangeError) throw tooDeep();
      throw err;
    }
    // The result, not only the patch, stays under the one nesting limit (a copy or an add at a deep path nests further).
    checkDepth(next);
    if (typeof next !== "object" || next === null || Array.isArray(next)) throw badRequest("the patch result is not an object");
    const checked = validateFields(r, opts, gv, { value: next, duplicates: duplicates as readonly never[] }, type, kind);
    state.warnings = checked.warnings;
    return checked.value;
  };
  return { run, state };
}
