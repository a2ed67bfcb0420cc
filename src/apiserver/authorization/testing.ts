// Test support for the authorization tests: a real server in RBAC mode whose
// test authenticator knows each user by the token `<name>-token`, requests as
// a user, creation that must succeed, and the wait for the watch caches the
// RBAC authorizer reads. Test code only.

import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import { TokenAuthenticator, type UserInfo } from "../filters/index.js";
import { startTestServer, type TestResponse, type TestServer } from "../testing/harness.js";

export const RBAC_GROUP = "rbac.authorization.orch.io";
/** The RBAC kinds' path (`${RBAC}/clusterroles`, `${RBAC}/namespaces/N/roles`). */
export const RBAC = `/apis/${RBAC_GROUP}/v1`;
export const AUTHENTICATED = "system:authenticated";

export interface RbacTestServer {
  readonly t: TestServer;
  /** A request with `who`'s token (`<who>-token`). */
  as(who: string, method: string, path: string, body?: unknown): Promise<TestResponse>;
  /** A POST by the admin that must answer 201. */
  create(path: string, body: object): Promise<void>;
  /** Waits until the watch cache of `resource` (an RBAC kind) holds at least `count` objects (in `namespace`, else all). */
  cached(resource: string, count: number, namespace?: string): Promise<void>;
}

/** `namespaces`: made (by the admin) before the server is handed over. */
export async function rbacTestServer(
  users: Record<string, UserInfo>,
  { namespaces = [], ...options }: Omit<Parameters<typeof startTestServer>[0], "modules"> & { namespaces?: readonly string[] } = {},
): Promise<RbacTestServer> {
  const t = await startTestServer({
    modules: builtinModules(),
    authorizationModes: ["RBAC"],
    authenticators: [new TokenAuthenticator(new Map(Object.entries(users).map(([k, u]) => [`${k}-token`, u])))],
    ...options,
  });
  const server: RbacTestServer = {
    t,
    as: (who, method, path, body) => t.request(method, path, { headers: { authorization: `Bearer ${who}-token` }, ...(body !== undefined ? { body } : {}) }),
    async create(path, body) {
      const r = await t.request("POST", path, { body });
      assert.equal(r.status, 201, `${path}: ${r.text}`);
    },
    async cached(resource, count, namespace) {
      const store = t.server.stores.for({ group: RBAC_GROUP, resource })!;
      for (let i = 0; (await store.cacher.list(store.prefixFor(namespace), { mode: "Any" })).items.length < count; i++) {
        assert.ok(i < 200, `${resource} never reached the cache`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
  for (const name of namespaces) await server.create("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  return server;
}
