// The root CA publisher against a real API server: every namespace gets the
// CA configmap with the CA the controller's client trusts, and a deleted or
// edited one is made right again.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { controllerOnTestServer, eventually } from "../testing.js";
import { CONFIGMAPS, NAMESPACES } from "../../api/resource-refs.js";
import type { ConfigMap } from "../../api/core/types.js";
import { RootCaPublisher } from "./controller.js";

describe("root CA publisher", () => {
  const fixture = controllerOnTestServer((ctx) => new RootCaPublisher(ctx));

  const get = (namespace: string) => fixture.ctx.client.get<ConfigMap>(CONFIGMAPS, { namespace, name: "orch-root-ca.crt" }).catch(() => undefined);

  test("every namespace, a new one too, gets orch-root-ca.crt with the cluster CA", async () => {
    const cm = await eventually("in default", () => get("default"));
    assert.equal(cm.data?.["ca.crt"], fixture.t.server.credentials.caCertPem);
    assert.match(cm.metadata.annotations?.["orch.io/description"] ?? "", /CA bundle/);
    await eventually("in orch-system", () => get("orch-system"));
    await fixture.ctx.client.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-ca" } });
    await eventually("in team-ca", () => get("team-ca"));
  });

  test("an edited configmap gets the CA back; a deleted one is made again", async () => {
    const cm = await eventually("in default", () => get("default"));
    await fixture.ctx.client.update(CONFIGMAPS, { ...cm, data: { "ca.crt": "not a CA", extra: "x" } });
    await eventually("restored", async () => {
      const now = await get("default");
      return now?.data?.["ca.crt"] === fixture.t.server.credentials.caCertPem && now.data["extra"] === undefined;
    });
    await fixture.ctx.client.delete(CONFIGMAPS, { namespace: "default", name: "orch-root-ca.crt" });
    const again = await eventually("recreated", async () => {
      const now = await get("default");
      return now !== undefined && now.metadata.uid !== cm.metadata.uid ? now : undefined;
    });
    assert.equal(again.data?.["ca.crt"], fixture.t.server.credentials.caCertPem);
  });
});
