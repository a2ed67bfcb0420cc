// The garbage collector and the namespace controller find custom kinds
// through discovery, like built-in ones: a dependent custom object goes with
// its owner, and a deleted namespace takes its custom objects with it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { coreModule } from "../../api/core/index.js";
import { apiextensionsModule } from "../../api/apiextensions/index.js";
import { NAMESPACES } from "../../api/resource-refs.js";
import type { ResourceRef } from "../../client/index.js";
import { GarbageCollector } from "../../controllers/garbage-collector/controller.js";
import { NamespaceController } from "../../controllers/namespace/controller.js";
import { controllerContext, eventually, type TestContext } from "../../controllers/testing.js";
import { isApiError, type ApiObject } from "../../machinery/index.js";
import { startTestServer, type TestServer } from "../testing/harness.js";
import { cronTabCrd } from "./testing.js";

const CRONTABS: ResourceRef = { group: "stable.example.com", version: "v1", resource: "crontabs", namespaced: true };

const tab = (name: string, namespace: string, extra: Partial<ApiObject["metadata"]> = {}): ApiObject => ({
  apiVersion: "stable.example.com/v1",
  kind: "CronTab",
  metadata: { name, namespace, ...extra },
  spec: { cronSpec: "* * * * *" },
});

describe("controllers on custom kinds", () => {
  let t: TestServer;
  let ctx: TestContext;
  let running: Promise<void>[];

  const get = async (namespace: string, name: string) => {
    try {
      return await ctx.client.get(CRONTABS, { namespace, name });
    } catch (err) {
      if (isApiError(err, "NotFound")) return undefined;
      throw err;
    }
  };

  before(async () => {
    t = await startTestServer({ modules: [coreModule, apiextensionsModule] });
    assert.equal((await t.request("POST", "/apis/apiextensions.orch.io/v1/customresourcedefinitions", { body: cronTabCrd() })).status, 201);
    await eventually("crontabs served", async () => (await t.request("GET", "/apis/stable.example.com/v1/crontabs")).status === 200);
    ctx = controllerContext(t);
    running = [new GarbageCollector(ctx, { rediscoverEveryMs: 200 }).run(), new NamespaceController(ctx).run()];
    ctx.start();
  });
  after(async () => {
    await ctx.stop(Promise.all(running).then(() => {}));
    await t.close();
  });

  test("the garbage collector deletes a custom dependent of a deleted owner", async () => {
    const owner = await ctx.client.create(CRONTABS, tab("owner", "default"));
    await ctx.client.create(CRONTABS, tab("child", "default", { ownerReferences: [{ apiVersion: "stable.example.com/v1", kind: "CronTab", name: "owner", uid: owner.metadata.uid! }] }));
    await ctx.client.delete(CRONTABS, { namespace: "default", name: "owner" });
    await eventually("the dependent to be deleted", async () => (await get("default", "child")) === undefined);
  });

  test("deleting a namespace deletes its custom objects", async () => {
    await ctx.client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: "crons" } });
    await ctx.client.create(CRONTABS, tab("in-ns", "crons"));
    await ctx.client.delete(NAMESPACES, { name: "crons" });
    await eventually("the custom object to be deleted", async () => (await get("crons", "in-ns")) === undefined);
    await eventually("the namespace to be deleted", async () => {
      try {
        await ctx.client.get(NAMESPACES, { name: "crons" });
        return false;
      } catch (err) {
        return isApiError(err, "NotFound");
      }
    });
  });
});
