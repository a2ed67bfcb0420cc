// End to end: custom resources driven by the real, unmodified kubectl 1.33
// against the real `orch apiserver` with upstream's names
// (--api-group-suffix=k8s.io, so an upstream CRD manifest applies as is):
// apply a CRD, wait for condition=established, apply objects (defaults,
// pruning, schema errors as kubectl prints them), get with printer columns
// and short names, `get all` through categories, explain from OpenAPI,
// scale, and deleting the CRD removes its objects.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const files = mkdtempSync(join(tmpdir(), "orch-e2e-crd-"));
function file(name: string, content: string): string {
  const path = join(files, name);
  writeFileSync(path, content);
  return path;
}

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
    categories: [all]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - name: Spec
      type: string
      description: The cron spec defining the interval a CronJob is run
      jsonPath: .spec.cronSpec
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        description: A CronTab runs an image on a schedule.
        properties:
          spec:
            type: object
            description: What the CronTab should do.
            required: [cronSpec]
            properties:
              cronSpec:
                type: string
                description: The schedule, in cron format.
              image:
                type: string
              replicas:
                type: integer
                minimum: 1
                default: 1
          status:
            type: object
            properties:
              replicas:
                type: integer
`;

const tab = (name: string, spec: string) => `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: ${name}
spec:
${spec}`;

describe("kubectl 1.33 and custom resources (orch apiserver, upstream names)", { skip: kubectlSkipReason() ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  before(async () => {
    orch = await startOrch("apiserver", ["--api-group-suffix=k8s.io"]);
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => orch?.stop());

  test("apply a CRD and wait for it to be established", async () => {
    assert.match(await k.ok("apply", "-f", file("crd.yaml", CRD)), /customresourcedefinition.apiextensions.k8s.io\/crontabs.stable.example.com created/);
    assert.match(await k.ok("wait", "--for", "condition=established", "--timeout=10s", "crd/crontabs.stable.example.com"), /condition met/);
    const crds = await k.ok("get", "crds");
    assert.match(crds, /^NAME\s+CREATED AT\n/);
    assert.match(crds, /crontabs.stable.example.com\s+\d{4}-\d{2}-\d{2}T/);
  });

  test("apply objects: defaults, pruning (warned), schema errors", async () => {
    const applied = await k.run(["apply", "--validate=warn", "-f", file("a.yaml", tab("a", "  cronSpec: '* * * * */5'\n  image: my-cron-image\n  bogus: 1\n"))]);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, /crontab.stable.example.com\/a created/);
    assert.match(applied.stderr, /unknown field "spec.bogus"/);
    const a = JSON.parse(await k.ok("get", "crontab", "a", "-o", "json"));
    assert.equal(a.spec.replicas, 1, "schema default");
    assert.equal(a.spec.bogus, undefined, "pruned");
    const strict = await k.run(["apply", "-f", file("s.yaml", tab("s", "  cronSpec: x\n  bogus: 1\n"))]);
    assert.notEqual(strict.code, 0);
    assert.match(strict.stderr, /unknown field "spec.bogus"/);
    const bad = await k.run(["apply", "-f", file("b.yaml", tab("b", "  cronSpec: x\n  replicas: three\n"))]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /The CronTab "b" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"/);
    const missing = await k.run(["apply", "-f", file("m.yaml", tab("m", "  image: x\n"))]);
    assert.match(missing.stderr, /spec.cronSpec: Required value/);
  });

  test("get with printer columns, short names, categories; explain", async () => {
    const out = await k.ok("get", "ct");
    assert.match(out, /^NAME\s+SPEC\s+REPLICAS\s+AGE\n/);
    assert.match(out, /\na\s+\* \* \* \* \*\/5\s+1\s+\d+s\n/);
    const all = await k.ok("get", "all");
    assert.match(all, /crontab.stable.example.com\/a/);
    const explain = await k.run(["explain", "crontab.spec"]);
    assert.equal(explain.code, 0, explain.stderr);
    assert.match(explain.stdout, /What the CronTab should do/);
    assert.match(explain.stdout, /cronSpec\s+<string> -required-/);
  });

  test("re-applying a changed CRD changes what is served", async () => {
    const changed = CRD.replace("    - name: Age\n", "    - name: Image\n      type: string\n      jsonPath: .spec.image\n    - name: Age\n");
    assert.match(await k.ok("apply", "-f", file("crd2.yaml", changed)), /customresourcedefinition.apiextensions.k8s.io\/crontabs.stable.example.com configured/);
    let out = "";
    for (let i = 0; i < 50 && !/IMAGE/.test(out); i++) {
      out = await k.ok("get", "crontabs");
      if (!/IMAGE/.test(out)) await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(out, /^NAME\s+SPEC\s+REPLICAS\s+IMAGE\s+AGE\n/);
    assert.match(out, /\na\s+\* \* \* \* \*\/5\s+1\s+my-cron-image\s+\d+s\n/);
    const conditions = await k.ok("get", "crd", "crontabs.stable.example.com", "-o", "jsonpath={range .status.conditions[*]}{.type}={.status} {end}");
    assert.equal(conditions.trim(), "NamesAccepted=True Established=True");
  });

  test("scale, patch and server-side apply", async () => {
    assert.match(await k.ok("scale", "crontab", "a", "--replicas=4"), /crontab.stable.example.com\/a scaled/);
    assert.equal(JSON.parse(await k.ok("get", "crontab", "a", "-o", "json")).spec.replicas, 4);
    await k.ok("patch", "crontab", "a", "--type=merge", "-p", '{"spec":{"image":"other"}}');
    const smp = await k.run(["patch", "crontab", "a", "-p", '{"spec":{"image":"x"}}']);
    assert.notEqual(smp.code, 0);
    assert.match(smp.stderr, /415|not supported|Unsupported Media Type/i);
    assert.match(await k.ok("apply", "--server-side", "-f", file("ssa.yaml", tab("ssa", "  cronSpec: '0 * * * *'\n"))), /crontab.stable.example.com\/ssa serverside-applied/);
  });

  test("deleting the CRD removes its objects and the kind", async () => {
    assert.match(await k.ok("delete", "crd", "crontabs.stable.example.com", "--timeout=20s"), /deleted/);
    // A fresh kubectl (no discovery cache) no longer knows the kind.
    const fresh = new Kubectl(orch.kubeconfig);
    const gone = await fresh.run(["get", "crontabs"]);
    assert.notEqual(gone.code, 0);
    assert.match(gone.stderr, /the server doesn't have a resource type "crontabs"/);
    const raw = await k.run(["get", "--raw", "/apis/stable.example.com/v1/namespaces/default/crontabs"]);
    assert.notEqual(raw.code, 0);
  });
});
