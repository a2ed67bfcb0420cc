// Impersonation (Impersonate-User, -Group, -Uid, -Extra-*): not served yet;
// the headers are ignored and the request runs as its authenticated user, as
// it always has. Its place in the chain is here, between authentication and
// authorization: issue 14 makes this filter check the caller may `impersonate`
// and swap ctx.user for the impersonated one (403 otherwise).

import type { Filter } from "./context.js";

export const impersonationFilter: Filter = (_ctx, next) => next();
