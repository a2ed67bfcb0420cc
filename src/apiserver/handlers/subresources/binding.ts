// Serves `binding` (declared in src/api/subresources/binding.ts): a POST of
// a Binding, checked and applied by the kind's binder (a 409 with its
// messages otherwise), written through the binding declaration so the main
// resource's update rules do not apply. The top-level `bindings` resource
// (src/api/core/bindings.ts: POST /api/v1/namespaces/NS/bindings, the pod
// named by the Binding) is the same write on the pod its body names.

import { findSubresource } from "../../../api/resource.js";
import { binderOf } from "../../../api/subresources/index.js";
import { BINDINGS } from "../../../api/core/index.js";
import { badRequest, conflict, formatFieldError, methodNotSupported, pathNotFound } from "../../../machinery/index.js";
import { readBody } from "../../http/body.js";
import { decodeObjectBody } from "../../http/decode-body.js";
import { sendStatusSuccess } from "../../http/respond.js";
import type { ResourceRequest, SubresourceRequest } from "../request.js";

interface BindingBody {
  metadata?: { name?: unknown; namespace?: unknown };
  target?: { kind?: string; name?: string };
}

/** The verb a method on a collection path asks for (405 messages). */
const VERBS: Readonly<Record<string, string>> = { GET: "list", POST: "create", DELETE: "deletecollection" };

async function readBinding(r: ResourceRequest): Promise<BindingBody> {
  const value = decodeObjectBody(r.req.headers["content-type"], await readBody(r.req), r.encoding).value;
  return (value !== null && typeof value === "object" ? value : {}) as BindingBody;
}

/** Bind `r.name` (an object of `r.store`) to the body's target. */
async function assign(r: SubresourceRequest, body: BindingBody): Promise<void> {
  const binder = binderOf(r.store.def)!;
  const gr = { group: r.store.def.group, resource: `${r.store.def.resource}/binding` };
  await r.store.modify(r.path.namespace, r.name, (obj) => {
    const errs = binder(obj, body.target ?? {});
    // The object's state refusing the binding (already bound, being deleted) is told as upstream's plain error: its detail alone.
    if (errs.length > 0) throw conflict(gr, r.name, errs.map((e) => (e.type === "FieldValueForbidden" ? e.detail : formatFieldError(e))).join(", "));
    return obj;
  }, { subresource: r.subresource });
  return sendStatusSuccess(r.res, 201);
}

/** POST pods/NAME/binding. */
export async function bind(r: SubresourceRequest): Promise<void> {
  return assign(r, await readBinding(r));
}

/**
 * POST /api/v1/namespaces/NS/bindings, `r.store` being the pods' store: the
 * binding subresource of the pod the body names (upstream's messages for a
 * body without a name or in another namespace).
 */
export async function createBinding(r: ResourceRequest): Promise<void> {
  if (r.path.name !== undefined || r.path.subresource !== undefined) throw pathNotFound();
  const method = (r.req.method ?? "GET").toUpperCase();
  // As upstream registers it: create in a namespace, nothing else.
  if (method !== "POST" || r.path.namespace === undefined) throw methodNotSupported({ group: "", resource: BINDINGS }, VERBS[method] ?? method.toLowerCase());
  const body = await readBinding(r);
  const namespace = body.metadata?.namespace;
  if (namespace !== undefined && namespace !== "" && namespace !== r.path.namespace) throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
  const name = body.metadata?.name;
  if (typeof name !== "string" || name === "") throw badRequest("Name parameter required.");
  return assign({ ...r, name, subresource: findSubresource(r.store.def, "binding")! }, body);
}
