// End to end: the real `orch apiserver` on upstream's names
// (--api-group-suffix=k8s.io, so the labels are pod-security.kubernetes.io/*)
// with an AdmissionConfiguration and an EncryptionConfiguration, driven by
// the real, unmodified kubectl 1.33: the Forbidden error and the Warning
// lines kubectl prints, secrets sealed at rest, and a bad config that stops
// the start.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";
import { LmdbStorage } from "../src/storage/lmdb/index.js";

const BIN = fileURLToPath(new URL("../../bin/orch.js", import.meta.url));
const ADMISSION = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      warn: baseline
`;
const ENCRYPTION = `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - secretbox:
      keys: [{name: key1, secret: ${randomBytes(32).toString("base64")}}]
  - identity: {}
`;
const PRIVILEGED_POD = (ns: string) => `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ${ns}}
spec:
  containers:
  - name: p
    image: busybox
    securityContext: {privileged: true}
`;

describe("kubectl 1.33: Pod Security and encryption at rest", { skip: kubectlSkipReason() ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-e2e-podsec-"));
  const dataDir = join(dir, "data");
  let orch: OrchProcess;
  let k: Kubectl;
  before(async () => {
    writeFileSync(join(dir, "admission.yaml"), ADMISSION);
    writeFileSync(join(dir, "encryption.yaml"), ENCRYPTION);
    orch = await startOrch("apiserver", ["--api-group-suffix", "k8s.io", "--admission-control-config-file", join(dir, "admission.yaml"), "--encryption-provider-config", join(dir, "encryption.yaml")], { dataDir });
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await orch?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("enforce: kubectl prints upstream's Forbidden error; warn: kubectl prints the Warning", async () => {
    await k.ok("create", "namespace", "strict");
    await k.ok("label", "namespace", "strict", "pod-security.kubernetes.io/enforce=restricted");
    const refused = await k.run(["apply", "-f", "-"], { input: PRIVILEGED_POD("strict") });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /Error from server \(Forbidden\): error when creating "STDIN": pods "p" is forbidden: violates PodSecurity "restricted:latest": privileged \(container "p" must not set securityContext\.privileged=true\), allowPrivilegeEscalation != false/);

    // The cluster default (warn: baseline) in a namespace without labels.
    const warned = await k.run(["apply", "-f", "-"], { input: PRIVILEGED_POD("default") });
    assert.equal(warned.code, 0, warned.stderr);
    assert.match(warned.stderr, /^Warning: would violate PodSecurity "baseline:latest": privileged \(container "p" must not set securityContext\.privileged=true\)$/m);
    assert.match(warned.stdout, /pod\/p created/);

    const labelled = await k.run(["label", "namespace", "default", "pod-security.kubernetes.io/enforce=baseline"]);
    assert.equal(labelled.code, 0, labelled.stderr);
    assert.match(labelled.stderr, /^Warning: existing pods in namespace "default" violate the new PodSecurity enforce level "baseline:latest"$/m);
    assert.match(labelled.stderr, /^Warning: p: privileged$/m);

    const invalid = await k.run(["label", "namespace", "strict", "--overwrite", "pod-security.kubernetes.io/enforce=strictest"]);
    assert.equal(invalid.code, 1);
    assert.match(invalid.stderr, /The Namespace "strict" is invalid: metadata\.labels\[pod-security\.kubernetes\.io\/enforce\]: Invalid value: "strictest": must be one of privileged, baseline, restricted/);
  });

  test("a pod marked for the host-root fallback counts as privileged: baseline refuses it, privileged admits it", async () => {
    const pod = (ns: string, marked: boolean) => `apiVersion: v1
kind: Pod
metadata:
  name: hr
  namespace: ${ns}
  annotations: {${marked ? `kubernetes.io/host-root: "true"` : ""}}
spec:
  containers:
  - {name: c, image: busybox}
`;
    await k.ok("create", "namespace", "hr-baseline");
    await k.ok("label", "namespace", "hr-baseline", "pod-security.kubernetes.io/enforce=baseline");
    const refused = await k.run(["apply", "-f", "-"], { input: pod("hr-baseline", true) });
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(refused.stderr, /pods "hr" is forbidden: violates PodSecurity "baseline:latest": host root file system \(annotation "kubernetes\.io\/host-root"="true"\)/);
    const plain = await k.run(["apply", "-f", "-"], { input: pod("hr-baseline", false) });
    assert.equal(plain.code, 0, plain.stderr);
    await k.ok("create", "namespace", "hr-privileged");
    await k.ok("label", "namespace", "hr-privileged", "pod-security.kubernetes.io/enforce=privileged");
    const admitted = await k.run(["apply", "-f", "-"], { input: pod("hr-privileged", true) });
    assert.equal(admitted.code, 0, admitted.stderr);
  });

  test("a secret created with kubectl reads back through kubectl and is sealed at rest", async () => {
    await k.ok("create", "secret", "generic", "creds", "--from-literal=password=hunter2-e2e");
    const got = JSON.parse(await k.ok("get", "secret", "creds", "-o", "json"));
    assert.equal(Buffer.from(got.data.password, "base64").toString(), "hunter2-e2e");
    await orch.stop();
    const store = await LmdbStorage.open({ dataDir });
    try {
      const { kv } = await store.get("/registry/core/secrets/default/creds");
      const raw = Buffer.from(kv!.value).toString("latin1");
      assert.ok(raw.startsWith("k8s:enc:secretbox:v1:key1:"), raw.slice(0, 40));
      assert.ok(!raw.includes("hunter2") && !raw.includes(Buffer.from("hunter2-e2e").toString("base64")));
    } finally {
      await store.close();
    }
  });

  test("a bad encryption config: orch apiserver exits 1 naming what is wrong", async () => {
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, ENCRYPTION.replace(/secret: \S+}/, "secret: c2hvcnQ=}"));
    const r = await new Promise<{ code: number; stderr: string }>((resolve) =>
      execFile(process.execPath, [BIN, "apiserver", "--data-dir", join(dir, "bad-data"), "--secure-port", "0", "--encryption-provider-config", bad], { timeout: 20_000 }, (err, _o, stderr) =>
        resolve({ code: err === null ? 0 : typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : -1, stderr })),
    );
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /resources\[0\]\.providers\[0\]\.secretbox\.keys\[0\]\.secret: Invalid value: "REDACTED": secret is not of the expected length, got 5, expected one of \[32\]/);
  });
});
