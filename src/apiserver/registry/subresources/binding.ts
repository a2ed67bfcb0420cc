// `binding` (pods): a POST of a Binding assigns the object to a node. The
// kind's rule checks the target and sets it (a 409 with its messages
// otherwise); the update rules of the main resource do not apply, since the
// client never wrote the object.

import { conflict, formatFieldError, type ApiObject, type FieldError } from "../../../machinery/index.js";
import { readBody } from "../../http/body.js";
import { decodeObjectBody } from "../../http/decode-body.js";
import { sendStatusSuccess } from "../../http/respond.js";
import type { Subresource } from "./subresource.js";

/** Checks `target` for `obj` and sets it on `obj` in place; the errors refuse the binding. */
export type Binder<T> = (obj: T, target: { kind?: string; name?: string }) => FieldError[];

export function binding<T extends ApiObject>(bind: Binder<T>): Subresource<T> {
  const declaration: Subresource<T> = {
    name: "binding",
    verbs: ["create"],
    responseKind: { group: "", version: "v1", kind: "Binding" },
    // The binder did the checks.
    validate: () => [],
    handler: {
      create: async (r) => {
        const body = decodeObjectBody(r.req.headers["content-type"], await readBody(r.req), r.encoding).value as { target?: { kind?: string; name?: string } };
        const gr = { group: r.store.def.group, resource: `${r.store.def.resource}/binding` };
        await r.store.modify(r.path.namespace, r.name, (obj) => {
          const errs = bind(obj as T, body.target ?? {});
          if (errs.length > 0) throw conflict(gr, r.name, errs.map(formatFieldError).join(", "));
          return obj;
        }, { subresource: r.subresource });
        return sendStatusSuccess(r.res, 201);
      },
    },
  };
  return declaration;
}
