// End to end: admission and conversion webhooks served from a pod behind a
// Service on the embedded runtime, as upstream's conformance specs deploy
// them. The webhook is a Node script in an image built here like the
// conformance images (the host's node binary with the libraries it loads,
// the script and its serving certificate for `hook.default.svc`), imported
// into the node agent's image store; kubectl 1.33 runs it as a pod, exposes
// it as a Service, and points a ValidatingWebhookConfiguration, a
// MutatingWebhookConfiguration and a CRD's conversion at the Service; the
// API server dials the Service's endpoint (the pod's IP).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../src/nodeagent/testing/eventually.js";
import { packageRoot } from "../src/component/package-root.js";
import { selfSignedServingCert } from "../src/component/pki.js";
import { endpointCrd } from "../src/apiserver/crd/testing.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";
import { packImage } from "./support/busybox-image.js";
import { copyWithLibraries } from "./conformance/images.js";

const rootSkip = process.getuid?.() !== 0 ? "needs root (the embedded runtime's namespaces and pod network)" : undefined;
const IMAGE = "orch.test/node-webhook:1.0";

/** The webhook: /validate denies ConfigMaps named forbidden*, /mutate labels them, /convert converts endpointCrd's kind. */
const SCRIPT = `import { createServer } from "node:https";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
const json = (res, body) => { res.setHeader("Content-Type", "application/json"); res.end(JSON.stringify(body)); };
function convert(obj, desired) {
  const out = structuredClone(obj);
  out.apiVersion = desired;
  const spec = obj.spec || {};
  if (desired.endsWith("/v2")) out.spec = { hostPort: spec.host + ":" + (spec.port || 80) };
  else { const [host, port] = String(spec.hostPort || ":").split(":"); out.spec = { host, port: Number(port) }; }
  out.metadata.annotations = { ...(obj.metadata.annotations || {}), "converted-by": hostname() };
  return out;
}
createServer({ cert: readFileSync("/webhook/tls.crt"), key: readFileSync("/webhook/tls.key") }, (req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const review = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const path = req.url.split("?")[0];
    if (path === "/convert") {
      const { uid, desiredAPIVersion, objects } = review.request;
      return json(res, { apiVersion: review.apiVersion, kind: "ConversionReview", response: { uid, result: { status: "Success" }, convertedObjects: objects.map((o) => convert(o, desiredAPIVersion)) } });
    }
    const request = review.request;
    const name = request.object.metadata.name;
    let response;
    if (path === "/mutate") {
      const patch = [{ op: "add", path: "/metadata/labels", value: { ...(request.object.metadata.labels || {}), "mutated-by": "pod-webhook" } }];
      response = { uid: request.uid, allowed: true, patchType: "JSONPatch", patch: Buffer.from(JSON.stringify(patch)).toString("base64") };
    } else if (name.startsWith("forbidden")) {
      response = { uid: request.uid, allowed: false, status: { code: 403, reason: "Forbidden", message: "configmaps named forbidden* are not allowed (said the pod)" } };
    } else response = { uid: request.uid, allowed: true };
    json(res, { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response });
  });
}).listen(8443, "0.0.0.0", () => console.log("webhook listening on 8443"));
`;

describe("kubectl 1.33: webhooks served from a pod behind a Service (embedded runtime)", { skip: kubectlSkipReason() ?? rootSkip ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-e2e-webhook-pod-"));
  let orch: OrchProcess;
  let k: Kubectl;
  let caBundle = "";
  before(async () => {
    const pki = await selfSignedServingCert(["hook.default.svc", "hook.default.svc.cluster.local"]);
    caBundle = Buffer.from(pki.ca).toString("base64");
    const root = join(dir, "rootfs");
    mkdirSync(join(root, "webhook"), { recursive: true });
    copyWithLibraries(root, ["/usr/bin/node"]);
    writeFileSync(join(root, "webhook", "hook.mjs"), SCRIPT);
    writeFileSync(join(root, "webhook", "tls.crt"), pki.cert);
    writeFileSync(join(root, "webhook", "tls.key"), pki.key);
    mkdirSync(join(root, "etc"));
    writeFileSync(join(root, "etc", "passwd"), "root:x:0:0:root:/root:/bin/sh\n");
    const tarball = join(dir, "webhook.tar");
    await packImage(root, { file: tarball, tags: [IMAGE], format: "docker", config: { Cmd: ["/usr/bin/node", "/webhook/hook.mjs"], ExposedPorts: { "8443/tcp": {} } } });
    rmSync(root, { recursive: true, force: true });
    const data = join(dir, "data");
    execFileSync(process.execPath, [join(packageRoot(), "bin", "orch.js"), "images", "import", "--root", join(data, "nodeagent", "runtime"), tarball], { stdio: "ignore" });
    orch = await startOrch("server", ["--api-group-suffix=k8s.io", "--node-name=hooks"], { dataDir: data, readyTimeoutMs: 60_000 });
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await k?.run(["delete", "pod", "hook", "--wait=true", "--timeout=30s"]);
    await orch?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the webhook pod runs from its image and its Service has the pod as endpoint", async () => {
    await k.ok("run", "hook", `--image=${IMAGE}`, "--image-pull-policy=Never", "--port=8443", "--labels=app=hook");
    await k.ok("expose", "pod", "hook", "--name=hook", "--port=443", "--target-port=8443");
    await k.ok("wait", "--for=condition=Ready", "pod/hook", "--timeout=60s");
    const podIP = (await k.ok("get", "pod", "hook", "-o", "jsonpath={.status.podIP}")).trim();
    assert.notEqual(podIP, "127.0.0.1", "a pod address of its own");
    const endpoint = await eventually(async () => (await k.run(["get", "endpoints", "hook", "-o", "jsonpath={.subsets[0].addresses[0].ip}"])).stdout.trim() || undefined, 20_000, "the Service's endpoint");
    assert.equal(endpoint, podIP);
    await eventually(async () => (/webhook listening on 8443/.test(await k.ok("logs", "hook")) ? true : undefined), 20_000, "the webhook to listen");
  });

  test("validating and mutating webhooks through the Service", async () => {
    const config = (kind: string, name: string, path: string) => `apiVersion: admissionregistration.k8s.io/v1
kind: ${kind}
metadata: {name: ${name}}
webhooks:
- name: ${name}.hook.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  clientConfig:
    service: {namespace: default, name: hook, path: ${path}, port: 443}
    caBundle: ${caBundle}
  rules:
  - {operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}
  namespaceSelector:
    matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [default]}]
`;
    const file = join(dir, "hooks.yaml");
    writeFileSync(file, `${config("ValidatingWebhookConfiguration", "deny", "/validate")}---\n${config("MutatingWebhookConfiguration", "label", "/mutate")}`);
    await k.ok("apply", "-f", file);
    const denied = await eventually(async () => {
      const r = await k.run(["create", "configmap", "forbidden-a", "--from-literal=a=b"]);
      if (r.code === 0) await k.run(["delete", "configmap", "forbidden-a"]);
      return r.code !== 0 && /denied the request/.test(r.stderr) ? r.stderr : undefined;
    }, 20_000, "the validating webhook to deny");
    assert.match(denied, /admission webhook "deny.hook.example.com" denied the request: configmaps named forbidden\* are not allowed \(said the pod\)/);
    await k.ok("create", "configmap", "allowed-a", "--from-literal=a=b");
    const labels = JSON.parse(await k.ok("get", "configmap", "allowed-a", "-o", "jsonpath={.metadata.labels}"));
    assert.equal(labels["mutated-by"], "pod-webhook", "the mutating webhook's patch is stored");
  });

  test("a conversion webhook through the Service: a custom kind read in both versions", async () => {
    const crd = endpointCrd({ strategy: "Webhook", webhook: { clientConfig: { service: { namespace: "default", name: "hook", path: "/convert", port: 443 }, caBundle }, conversionReviewVersions: ["v1"] } }, "pod.example.com", "apiextensions.k8s.io/v1");
    const file = join(dir, "crd.json");
    writeFileSync(file, JSON.stringify(crd));
    await k.ok("apply", "-f", file);
    await k.ok("wait", "--for", "condition=established", "--timeout=10s", "crd/endpoints.pod.example.com");
    const obj = join(dir, "v2.json");
    writeFileSync(obj, JSON.stringify({ apiVersion: "pod.example.com/v2", kind: "Endpoint", metadata: { name: "db" }, spec: { hostPort: "db.local:5432" } }));
    await eventually(async () => ((await k.run(["apply", "-f", obj])).code === 0 ? true : undefined), 20_000, "the v2 create");
    const v1 = JSON.parse(await k.ok("get", "endpoints.v1.pod.example.com", "db", "-o", "json"));
    assert.deepEqual(v1.spec, { host: "db.local", port: 5432 });
    assert.equal(v1.metadata.annotations["converted-by"], "hook", "converted by the pod (its hostname)");
    const v2 = JSON.parse(await k.ok("get", "endpoints.v2.pod.example.com", "db", "-o", "json"));
    assert.equal(v2.spec.hostPort, "db.local:5432");
  });
});
