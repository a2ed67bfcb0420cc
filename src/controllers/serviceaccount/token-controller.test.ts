// The token controller against a real API server: token Secrets are filled
// with a token the server accepts for their account (bound to the Secret:
// deleting it revokes the token), the CA and the namespace; with legacy
// generation every ServiceAccount gets such a Secret in its `secrets`.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Secret, ServiceAccount } from "../../api/core/types.js";
import { controllerOnTestServer, eventually } from "../testing.js";
import { SECRETS, SERVICE_ACCOUNTS } from "../../api/resource-refs.js";
import { ServiceAccountTokenController } from "./token-controller.js";

describe("serviceaccount token controller (legacy generation on)", () => {
  const fixture = controllerOnTestServer((ctx) => new ServiceAccountTokenController(ctx), { extra: { config: { legacyServiceAccountTokenGeneration: true } } });
  const review = async (token: string) => {
    const res = await fixture.ctx.client.create<{ status?: { authenticated?: boolean; user?: { username?: string; groups?: string[] }; error?: string } } & Secret>(
      { group: "authentication.orch.io", version: "v1", resource: "tokenreviews", namespaced: false },
      { apiVersion: "authentication.orch.io/v1", kind: "TokenReview", metadata: {}, spec: { token } } as never,
    );
    return res.status;
  };
  const decode = (s: Secret, key: string) => Buffer.from(s.data?.[key] ?? "", "base64").toString();

  test("a new ServiceAccount gets a filled token Secret listed in its secrets; the token proves the account until the Secret goes", async () => {
    const { client } = fixture.ctx;
    const sa = await client.create<ServiceAccount>(SERVICE_ACCOUNTS, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "mount-test", namespace: "default" } });
    const secret = await eventually("the account's token Secret, filled", async () => {
      const got = await client.get<ServiceAccount>(SERVICE_ACCOUNTS, { namespace: "default", name: "mount-test" });
      const name = got.secrets?.[0]?.name;
      if (!name) return undefined;
      const s = await client.get<Secret>(SECRETS, { namespace: "default", name }).catch(() => undefined);
      return s?.data?.["token"] ? s : undefined;
    });
    assert.match(secret.metadata.name!, /^mount-test-token-[a-z0-9]{5}$/);
    assert.equal(secret.type, "orch.io/service-account-token");
    assert.deepEqual(secret.metadata.annotations, { "orch.io/service-account.name": "mount-test", "orch.io/service-account.uid": sa.metadata.uid });
    assert.equal(decode(secret, "namespace"), "default");
    assert.equal(decode(secret, "ca.crt"), String(client.config.ca));
    const status = await review(decode(secret, "token"));
    assert.equal(status?.authenticated, true, status?.error);
    assert.equal(status?.user?.username, "system:serviceaccount:default:mount-test");
    assert.ok(status?.user?.groups?.includes("system:serviceaccounts:default"));
    // One Secret per account: later syncs do not add more.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await client.get<ServiceAccount>(SERVICE_ACCOUNTS, { namespace: "default", name: "mount-test" })).secrets?.length, 1);
    // The token is bound to the Secret.
    const token = decode(secret, "token");
    await client.delete(SECRETS, { namespace: "default", name: secret.metadata.name! });
    await eventually("the token refused once its Secret is gone", async () => (await review(token))?.authenticated !== true);
  });

  test("a token Secret made by hand is filled; one naming a missing account is left alone", async () => {
    const { client } = fixture.ctx;
    await client.create<ServiceAccount>(SERVICE_ACCOUNTS, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "builder", namespace: "default" } }).catch(() => undefined);
    await client.create<Secret>(SECRETS, { apiVersion: "v1", kind: "Secret", type: "orch.io/service-account-token", metadata: { name: "builder-token", namespace: "default", annotations: { "orch.io/service-account.name": "builder" } } });
    await client.create<Secret>(SECRETS, { apiVersion: "v1", kind: "Secret", type: "orch.io/service-account-token", metadata: { name: "ghost-token", namespace: "default", annotations: { "orch.io/service-account.name": "ghost" } } });
    const filled = await eventually("builder-token filled", async () => {
      const s = await client.get<Secret>(SECRETS, { namespace: "default", name: "builder-token" });
      return s.data?.["token"] ? s : undefined;
    });
    assert.equal((await review(decode(filled, "token")))?.user?.username, "system:serviceaccount:default:builder");
    assert.equal(decode(filled, "namespace"), "default");
    const ghost = await client.get<Secret>(SECRETS, { namespace: "default", name: "ghost-token" });
    assert.equal(ghost.data?.["token"], undefined);
  });
});
