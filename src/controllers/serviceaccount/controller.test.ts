// The ServiceAccount controller against a real API server: a `default`
// ServiceAccount appears in every namespace and comes back when deleted.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import { controllerContext, eventually, exists as existsOn, type TestContext } from "../testing.js";
import { NAMESPACES, SERVICE_ACCOUNTS } from "../../api/resource-refs.js";
import { ServiceAccountController } from "./controller.js";

describe("serviceaccount controller", () => {
  let t: TestServer;
  let ctx: TestContext;
  let running: Promise<void>;
  before(async () => {
    t = await startTestServer({ modules: builtinModules() });
    ctx = controllerContext(t);
    running = new ServiceAccountController(ctx).run();
    ctx.start();
  });
  after(async () => {
    await ctx.stop(running);
    await t.close();
  });

  const exists = (namespace: string) => existsOn(ctx.client, SERVICE_ACCOUNTS, "default", namespace);

  test("every namespace gets a default ServiceAccount, the built-in ones included", async () => {
    await eventually("default in default", () => exists("default"));
    await eventually("default in orch-system", () => exists("orch-system"));
    await ctx.client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: "team" } });
    await eventually("default in team", () => exists("team"));
  });

  test("a deleted default ServiceAccount is made again", async () => {
    await eventually("default in default", () => exists("default"));
    const before = await ctx.client.get(SERVICE_ACCOUNTS, { namespace: "default", name: "default" });
    await ctx.client.delete(SERVICE_ACCOUNTS, { namespace: "default", name: "default" });
    const again = await eventually("recreated", async () => {
      const sa = await ctx.client.get(SERVICE_ACCOUNTS, { namespace: "default", name: "default" }).catch(() => undefined);
      return sa !== undefined && sa.metadata.uid !== before.metadata.uid ? sa : undefined;
    });
    assert.equal(again.metadata.name, "default");
  });
});
