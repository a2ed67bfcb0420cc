// Pod Security admission on the real server: namespace labels choose the
// levels (enforce → 403, warn → Warning headers, audit → the audit event's
// annotations); workloads' pod templates are warned about, never refused;
// tightening a namespace warns about its existing pods; label values are
// validated; --admission-control-config-file sets the defaults and exemptions.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinModules } from "../api/index.js";
import { startTestServer, type TestServer } from "./testing/harness.js";

const L = "pod-security.orch.io";
const RESTRICTED_VIOLATIONS = 'violates PodSecurity "restricted:latest": privileged (container "app" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "app" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "app" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

function pod(name: string, privileged: boolean): object {
  return { apiVersion: "v1", kind: "Pod", metadata: { name }, spec: { containers: [{ name: "app", image: "busybox", ...(privileged ? { securityContext: { privileged: true } } : {}) }] } };
}

async function namespace(t: TestServer, name: string, labels: Record<string, string>): Promise<void> {
  const r = await t.request("POST", "/api/v1/namespaces", { body: { apiVersion: "v1", kind: "Namespace", metadata: { name, labels } } });
  assert.equal(r.status, 201, r.text);
}

function warnings(r: { headers: Record<string, unknown> }): string[] {
  const h = r.headers.warning;
  const all = h === undefined ? [] : Array.isArray(h) ? h : String(h).split(/,(?=\s*299 )/);
  return all.map((w) => String(w).trim().replace(/^299 - "/, "").replace(/"$/, "").replace(/\\"/g, '"'));
}

async function withDir<T>(body: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "orch-pod-security-"));
  try {
    return await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const auditPolicy = "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n  resources: [{group: \"\", resources: [pods]}, {group: apps, resources: [deployments]}]\n- level: None\n";

test("enforce refuses with 403 and upstream's message; warn answers Warning headers; audit annotates the event", async () => {
  await withDir(async (dir) => {
    writeFileSync(join(dir, "policy.yaml"), auditPolicy);
    const log = join(dir, "audit.log");
    const t = await startTestServer({ modules: builtinModules(), audit: { policyFile: join(dir, "policy.yaml"), logPath: log } });
    try {
      await namespace(t, "strict", { [`${L}/enforce`]: "restricted" });
      await namespace(t, "watched", { [`${L}/warn`]: "baseline", [`${L}/audit`]: "restricted", [`${L}/audit-version`]: "v1.30" });

      const refused = await t.request("POST", "/api/v1/namespaces/strict/pods", { body: pod("p", true) });
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.json.reason, "Forbidden");
      assert.equal(refused.json.message, `pods "p" is forbidden: ${RESTRICTED_VIOLATIONS}`);
      const dry = await t.request("POST", "/api/v1/namespaces/strict/pods?dryRun=All", { body: pod("p", true) });
      assert.equal(dry.status, 403, "dry run is refused alike");

      const warned = await t.request("POST", "/api/v1/namespaces/watched/pods", { body: pod("p", true) });
      assert.equal(warned.status, 201, warned.text);
      assert.deepEqual(warnings(warned), ['would violate PodSecurity "baseline:latest": privileged (container "app" must not set securityContext.privileged=true)']);
      const fine = await t.request("POST", "/api/v1/namespaces/watched/pods", { body: pod("q", false) });
      assert.equal(fine.status, 201);
      assert.deepEqual(warnings(fine), [], "a baseline pod draws no warning");

      // Workloads: templates are warned about (warn level), never refused, even where enforce is restricted.
      const deployment = (ns: string) => ({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d", namespace: ns }, spec: { selector: { matchLabels: { a: "b" } }, template: { metadata: { labels: { a: "b" } }, spec: (pod("x", true) as { spec: object }).spec } } });
      const d1 = await t.request("POST", "/apis/apps/v1/namespaces/strict/deployments", { body: deployment("strict") });
      assert.equal(d1.status, 201, d1.text);
      assert.deepEqual(warnings(d1), [], "strict has no warn label: enforce does not apply to templates");
      const d2 = await t.request("POST", "/apis/apps/v1/namespaces/watched/deployments", { body: deployment("watched") });
      assert.equal(d2.status, 201);
      assert.deepEqual(warnings(d2), ['would violate PodSecurity "baseline:latest": privileged (container "app" must not set securityContext.privileged=true)']);
      // An update that changes nothing the checks read (a label) is not evaluated again.
      const relabel = await t.request("PATCH", "/api/v1/namespaces/watched/pods/p", { rawBody: JSON.stringify({ metadata: { labels: { x: "y" } } }), headers: { "content-type": "application/merge-patch+json" } });
      assert.equal(relabel.status, 200);
      assert.deepEqual(warnings(relabel), []);

      const events = readFileSync(log, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
      // The two pod creates in "watched" (objectRef carries no name on a create here): the privileged one is the first.
      const created = events.find((e) => e.verb === "create" && e.objectRef.resource === "pods" && e.objectRef.namespace === "watched");
      assert.equal(created.annotations[`${L}/enforce-policy`], "privileged:latest");
      assert.match(created.annotations[`${L}/audit-violations`], /^would violate PodSecurity "restricted:v1\.30": privileged \(container "app" must not set securityContext\.privileged=true\), allowPrivilegeEscalation != false/);
      const createdDeployment = events.find((e) => e.verb === "create" && e.objectRef.resource === "deployments" && e.objectRef.namespace === "watched");
      assert.match(createdDeployment.annotations[`${L}/audit-violations`], /would violate PodSecurity "restricted:v1\.30"/);
    } finally {
      await t.close();
    }
  });
});

test("namespace labels: invalid values are refused; tightening enforce warns about the pods already there", async () => {
  const t = await startTestServer({ modules: builtinModules() });
  try {
    const bad = await t.request("POST", "/api/v1/namespaces", { body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "bad", labels: { [`${L}/enforce`]: "strict", [`${L}/warn-version`]: "1.25" } } } });
    assert.equal(bad.status, 422, bad.text);
    assert.equal(bad.json.message, `Namespace "bad" is invalid: [metadata.labels[${L}/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted, metadata.labels[${L}/warn-version]: Invalid value: "1.25": must be "latest" or "v1.x"]`);

    await namespace(t, "later", {});
    for (const name of ["a", "b", "c"]) assert.equal((await t.request("POST", "/api/v1/namespaces/later/pods", { body: pod(name, name !== "c") })).status, 201);
    const patch = (labels: Record<string, string>) => t.request("PATCH", "/api/v1/namespaces/later", { rawBody: JSON.stringify({ metadata: { labels } }), headers: { "content-type": "application/merge-patch+json" } });
    const tightened = await patch({ [`${L}/enforce`]: "baseline" });
    assert.equal(tightened.status, 200, tightened.text);
    assert.deepEqual(warnings(tightened), ['existing pods in namespace "later" violate the new PodSecurity enforce level "baseline:latest"', "a (and 1 other pod): privileged"]);
    assert.deepEqual(warnings(await patch({ [`${L}/enforce`]: "privileged" })), [], "relaxing checks nothing");
    const restricted = await patch({ [`${L}/enforce`]: "restricted" });
    assert.deepEqual(warnings(restricted), [
      'existing pods in namespace "later" violate the new PodSecurity enforce level "restricted:latest"',
      "a (and 1 other pod): privileged, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile",
      "c: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile",
    ]);
    assert.equal((await t.request("POST", "/api/v1/namespaces/later/pods", { body: pod("d", false) })).status, 403, "and new pods meet it");
  } finally {
    await t.close();
  }
});

test("--admission-control-config-file: cluster defaults and exemptions (namespaces, usernames, runtime classes); a bad file stops the start", async () => {
  await withDir(async (dir) => {
    const file = join(dir, "admission.yaml");
    const config = (exemptions: string) => `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      enforce: baseline
      warn: restricted
    exemptions:
${exemptions}
`;
    writeFileSync(file, config("      namespaces: [free]\n      runtimeClasses: [trusted]"));
    let t = await startTestServer({ modules: builtinModules(), admissionControlConfigFile: file });
    try {
      const r = await t.request("POST", "/api/v1/namespaces/default/pods", { body: pod("p", true) });
      assert.equal(r.status, 403, "the default enforce level is baseline");
      assert.match(r.json.message, /violates PodSecurity "baseline:latest": privileged/);
      const ok = await t.request("POST", "/api/v1/namespaces/default/pods", { body: pod("q", false) });
      assert.equal(ok.status, 201);
      assert.match(warnings(ok)[0] ?? "", /^would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false/);
      await namespace(t, "free", {});
      assert.equal((await t.request("POST", "/api/v1/namespaces/free/pods", { body: pod("p", true) })).status, 201, "exempt namespace");
      // The class must exist: the RuntimeClass admission step refuses pods naming an unknown one.
      const rc = await t.request("POST", "/apis/node.orch.io/v1/runtimeclasses", { body: { apiVersion: "node.orch.io/v1", kind: "RuntimeClass", metadata: { name: "trusted" }, handler: "runc" } });
      assert.equal(rc.status, 201, rc.text);
      const trusted = pod("t", true) as { spec: Record<string, unknown> };
      trusted.spec.runtimeClassName = "trusted";
      assert.equal((await t.request("POST", "/api/v1/namespaces/default/pods", { body: trusted })).status, 201, "exempt runtime class");
      await namespace(t, "open", { [`${L}/enforce`]: "privileged" });
      assert.equal((await t.request("POST", "/api/v1/namespaces/open/pods", { body: pod("p", true) })).status, 201, "a label overrides the default");
    } finally {
      await t.close();
    }
    writeFileSync(file, config("      usernames: [admin]"));
    t = await startTestServer({ modules: builtinModules(), admissionControlConfigFile: file });
    try {
      const r = await t.request("POST", "/api/v1/namespaces/default/pods", { body: pod("p", true) });
      assert.equal(r.status, 201, "the admin user is exempt");
      assert.deepEqual(warnings(r), []);
    } finally {
      await t.close();
    }
    writeFileSync(file, config("      namespaces: [free]").replace("enforce: baseline", "enforce: strict"));
    await assert.rejects(startTestServer({ modules: builtinModules(), admissionControlConfigFile: file }), /admission control config file .*admission\.yaml: defaults\.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted/);
  });
});
