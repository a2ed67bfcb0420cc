// The ServiceAccount controller against a real API server: a `default`
// ServiceAccount appears in every namespace and comes back when deleted.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { controllerOnTestServer, eventually, exists as existsOn } from "../testing.js";
import { NAMESPACES, SERVICE_ACCOUNTS } from "../../api/resource-refs.js";
import { ServiceAccountController } from "./controller.js";

describe("serviceaccount controller", () => {
  const fixture = controllerOnTestServer((ctx) => new ServiceAccountController(ctx));

  const exists = (namespace: string) => existsOn(fixture.ctx.client, SERVICE_ACCOUNTS, "default", namespace);

  test("every namespace gets a default ServiceAccount, the built-in ones included", async () => {
    await eventually("default in default", () => exists("default"));
    await eventually("default in orch-system", () => exists("orch-system"));
    await fixture.ctx.client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: "team" } });
    await eventually("default in team", () => exists("team"));
  });

  test("a deleted default ServiceAccount is made again", async () => {
    await eventually("default in default", () => exists("default"));
    const before = await fixture.ctx.client.get(SERVICE_ACCOUNTS, { namespace: "default", name: "default" });
    await fixture.ctx.client.delete(SERVICE_ACCOUNTS, { namespace: "default", name: "default" });
    const again = await eventually("recreated", async () => {
      const sa = await fixture.ctx.client.get(SERVICE_ACCOUNTS, { namespace: "default", name: "default" }).catch(() => undefined);
      return sa !== undefined && sa.metadata.uid !== before.metadata.uid ? sa : undefined;
    });
    assert.equal(again.metadata.name, "default");
  });
});
