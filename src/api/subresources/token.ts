// `token` (serviceaccounts): a POST of a TokenRequest asks for a signed token
// of the account (served by src/apiserver/handlers/subresources/token.ts).
// Create only; the account itself is never written.

import type { Subresource } from "../resource.js";
import type { ApiObject } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { TOKEN_REQUEST_KIND } from "../authentication/token-request.js";

export function token<T extends ApiObject>(naming: Naming): Subresource<T> {
  return { name: "token", verbs: ["create"], responseKind: { group: naming.authenticationGroup, version: "v1", kind: TOKEN_REQUEST_KIND } };
}
