// Serves `binding` (declared in src/api/subresources/binding.ts): a POST of
// a Binding, checked and applied by the kind's binder (a 409 with its
// messages otherwise), written through the binding declaration so the main
// resource's update rules do not apply.

import { binderOf } from "../../../api/subresources/index.js";
import { conflict, formatFieldError } from "../../../machinery/index.js";
import { readBody } from "../../http/body.js";
import { decodeObjectBody } from "../../http/decode-body.js";
import { sendStatusSuccess } from "../../http/respond.js";
import type { SubresourceRequest } from "../request.js";

export async function bind(r: SubresourceRequest): Promise<void> {
  const body = decodeObjectBody(r.req.headers["content-type"], await readBody(r.req), r.encoding).value as { target?: { kind?: string; name?: string } };
  const binder = binderOf(r.store.def)!;
  const gr = { group: r.store.def.group, resource: `${r.store.def.resource}/binding` };
  await r.store.modify(r.path.namespace, r.name, (obj) => {
    const errs = binder(obj, body.target ?? {});
    if (errs.length > 0) throw conflict(gr, r.name, errs.map(formatFieldError).join(", "));
    return obj;
  }, { subresource: r.subresource });
  return sendStatusSuccess(r.res, 201);
}
