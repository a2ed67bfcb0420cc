// End to end: the networking kinds through the real, unmodified kubectl 1.33
// against `orch apiserver --api-group-suffix=k8s.io` (kubectl's `create
// ingress` and its describers know only networking.k8s.io; on the orch.io
// profile `describe` falls back to the generic field dump): `create ingress` (kubectl's own generator) and
// `apply` of a NetworkPolicy, `get` with upstream's columns (NAME CLASS HOSTS
// ADDRESS PORTS AGE; NAME POD-SELECTOR AGE), `describe` of both (kubectl's
// describers read the v1 fields), short names, the default IngressClass and
// a refused invalid policy with upstream's message; the flow control bootstrap
// objects with their columns.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const ingressClass = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: standard
  annotations: {ingressclass.kubernetes.io/is-default-class: "true"}
spec: {controller: example.com/ingress-controller}
`;

const policy = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db}
spec:
  podSelector: {matchLabels: {app: db}}
  ingress:
  - from:
    - podSelector: {matchLabels: {role: api}}
    - ipBlock: {cidr: 10.0.0.0/8, except: [10.1.0.0/16]}
    ports: [{port: 5432}]
`;

/** The header of each table `kubectl get` printed, as column lists. */
function headers(out: string): string[][] {
  return out.split("\n").filter((l) => l.startsWith("NAME ")).map((l) => l.trim().split(/\s{2,}/));
}

describe("networking kinds through kubectl 1.33", { skip: kubectlSkipReason() ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  before(async () => {
    orch = await startOrch("apiserver", ["--api-group-suffix=k8s.io"]);
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => orch?.stop());

  test("ingress: create, get, describe; the default class is filled in", async () => {
    assert.equal((await k.run(["apply", "-f", "-"], { input: ingressClass })).code, 0);
    await k.ok("create", "ingress", "web", "--rule=shop.example.com/api*=api:8080,tls=shop-tls", "--rule=/=frontend:http");
    const got = await k.ok("get", "ing");
    assert.deepEqual(headers(got), [["NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"]]);
    assert.match(got, /^web\s+standard\s+shop\.example\.com\s+80, 443\s+\S+$/m);
    const described = await k.ok("describe", "ingress", "web");
    assert.match(described, /^Ingress Class:\s+standard$/m);
    assert.match(described, /shop\.example\.com\s*\n\s+\/api\s+api:8080/);
    assert.match(described, /shop-tls terminates shop\.example\.com/);
    const classes = await k.ok("get", "ingressclasses");
    assert.deepEqual(headers(classes), [["NAME", "CONTROLLER", "PARAMETERS", "AGE"]]);
    assert.match(classes, /^standard\s+example\.com\/ingress-controller\s+<none>\s+\S+$/m);
    const bad = await k.run(["create", "ingress", "bad", "--rule=1.2.3.4/=svc:80"]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /spec\.rules\[0\]\.host: Invalid value: "1\.2\.3\.4": must be a DNS name, not an IP address/);
  });

  test("networkpolicy: apply, get, describe; an invalid one is refused", async () => {
    assert.equal((await k.run(["apply", "-f", "-"], { input: policy })).code, 0);
    const got = await k.ok("get", "netpol");
    assert.deepEqual(headers(got), [["NAME", "POD-SELECTOR", "AGE"]]);
    assert.match(got, /^db\s+app=db\s+\S+$/m);
    const described = await k.ok("describe", "networkpolicy", "db");
    assert.match(described, /PodSelector:\s+app=db/);
    assert.match(described, /To Port: 5432\/TCP/);
    assert.match(described, /IPBlock:\s*\n\s+CIDR: 10\.0\.0\.0\/8\s*\n\s+Except: 10\.1\.0\.0\/16/);
    assert.match(described, /Not affecting egress traffic/);
    const bad = await k.run(["apply", "-f", "-"], { input: policy.replace("name: db", "name: bad").replace("10.1.0.0/16", "11.0.0.0/16") });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /spec\.ingress\[0\]\.from\[1\]\.ipBlock\.except\[0\]: Invalid value: "11\.0\.0\.0\/16": must be a strict subset of `cidr`/);
  });

  test("flow control: the bootstrap objects through kubectl get, with upstream's columns", async () => {
    const levels = await k.ok("get", "prioritylevelconfigurations");
    assert.deepEqual(headers(levels), [["NAME", "TYPE", "NOMINALCONCURRENCYSHARES", "QUEUES", "HANDSIZE", "QUEUELENGTHLIMIT", "AGE"]]);
    assert.match(levels, /^workload-low\s+Limited\s+100\s+128\s+6\s+50\s+\S+$/m);
    assert.match(levels, /^exempt\s+Exempt\s+<none>\s+<none>\s+<none>\s+<none>\s+\S+$/m);
    const schemas = await k.ok("get", "flowschemas");
    assert.deepEqual(headers(schemas), [["NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "AGE", "MISSINGPL"]]);
    assert.match(schemas, /^kube-controller-manager\s+workload-high\s+800\s+ByNamespace\s+\S+\s+False$/m);
    assert.match(schemas, /^probes\s+exempt\s+2\s+\*\s+\S+\s+False$/m);
  });
});
