// End to end: a custom kind with two versions and a conversion webhook (a
// real HTTPS server started here), driven by the real, unmodified kubectl
// 1.33 against the real `orch apiserver` with upstream's names: objects
// written through either version are stored in v1 and read back in both,
// printer columns and `kubectl get -o json` included; a failing webhook is
// upstream's error as kubectl prints it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";
import { endpointCrd, startConversionWebhook, type ConversionWebhook } from "../src/apiserver/crd/testing.js";

describe("kubectl 1.33: conversion webhook across two versions", { skip: kubectlSkipReason() ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-e2e-conversion-"));
  const file = (name: string, value: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(value));
    return path;
  };
  let orch: OrchProcess;
  let k: Kubectl;
  let hook: ConversionWebhook;
  before(async () => {
    hook = await startConversionWebhook();
    orch = await startOrch("apiserver", ["--api-group-suffix", "k8s.io"], { dataDir: join(dir, "data") });
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await orch?.stop();
    await hook?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("apply the CRD with a Webhook conversion and wait for it", async () => {
    const crd = endpointCrd({ strategy: "Webhook", webhook: { clientConfig: { url: hook.url, caBundle: hook.caBundle }, conversionReviewVersions: ["v1", "v1beta1"] } }, "conv.example.com", "apiextensions.k8s.io/v1");
    assert.match(await k.ok("apply", "-f", file("crd.json", crd)), /customresourcedefinition.apiextensions.k8s.io\/endpoints.conv.example.com created/);
    assert.match(await k.ok("wait", "--for", "condition=established", "--timeout=10s", "crd/endpoints.conv.example.com"), /condition met/);
  });

  test("create through v2, read through v1 and v2", async () => {
    const v2 = { apiVersion: "conv.example.com/v2", kind: "Endpoint", metadata: { name: "db" }, spec: { hostPort: "db.local:5432" } };
    let out = "";
    for (let i = 0; i < 50; i++) {
      const r = await k.run(["apply", "-f", file("db.json", v2)]);
      out = r.stdout + r.stderr;
      if (r.code === 0) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    assert.match(out, /endpoint.conv.example.com\/db created/);
    const asV1 = JSON.parse(await k.ok("get", "endpoints.v1.conv.example.com", "db", "-o", "json"));
    assert.equal(asV1.apiVersion, "conv.example.com/v1");
    assert.deepEqual(asV1.spec, { host: "db.local", port: 5432 });
    const asV2 = JSON.parse(await k.ok("get", "endpoints.v2.conv.example.com", "db", "-o", "json"));
    assert.equal(asV2.apiVersion, "conv.example.com/v2");
    assert.deepEqual(asV2.spec, { hostPort: "db.local:5432", protocol: "TCP" });
    // The v1 printer column reads the stored form.
    assert.match(await k.ok("get", "endpoints.v1.conv.example.com"), /^NAME\s+HOST\ndb\s+db\.local\n/);
    assert.ok(hook.reviews.some((r) => r.request.desiredAPIVersion === "conv.example.com/v1"));
    assert.ok(hook.reviews.some((r) => r.request.desiredAPIVersion === "conv.example.com/v2"));
  });

  test("a v1 write and a v2 patch meet in the same object", async () => {
    await k.ok("patch", "endpoints.v1.conv.example.com", "db", "--type=merge", "-p", '{"spec":{"port":6000}}');
    assert.equal(JSON.parse(await k.ok("get", "endpoints.v2.conv.example.com", "db", "-o", "json")).spec.hostPort, "db.local:6000");
    await k.ok("patch", "endpoints.v2.conv.example.com", "db", "--type=merge", "-p", '{"spec":{"hostPort":"db2:7000"}}');
    assert.deepEqual(JSON.parse(await k.ok("get", "endpoints.v1.conv.example.com", "db", "-o", "json")).spec, { host: "db2", port: 7000 });
    const list = JSON.parse(await k.ok("get", "endpoints.v2.conv.example.com", "-o", "json"));
    assert.equal(list.items[0].apiVersion, "conv.example.com/v2");
  });

  test("a failing webhook: kubectl prints upstream's error", async () => {
    hook.mode = "fail";
    try {
      const r = await k.run(["get", "endpoints.v2.conv.example.com", "db"]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /Internal error occurred: conversion webhook for conv.example.com\/v1, Kind=Endpoint failed: the converter refuses/);
    } finally {
      hook.mode = "ok";
    }
  });
});
