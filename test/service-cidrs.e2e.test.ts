// End to end: IPAddress and ServiceCIDR (networking/v1) through the real,
// unmodified kubectl 1.33 against `orch apiserver` on both naming profiles,
// with a service range of its own (--service-cluster-ip-range): `kubectl get
// servicecidr` shows the `kubernetes` ServiceCIDR with that range (NAME CIDRS
// AGE); `kubectl get ipaddress` shows the `kubernetes` service's address and a
// new Service's, each with its Service as parent (NAME PARENTREF); deleting the
// Service removes its IPAddress; `describe servicecidr` reads the Ready condition.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const headers = (out: string): string[][] => out.split("\n").filter((l) => l.startsWith("NAME ")).map((l) => l.trim().split(/\s{2,}/));

for (const suffix of ["k8s.io", "orch.io"]) {
  describe(`IPAddress and ServiceCIDR through kubectl 1.33 (--api-group-suffix=${suffix})`, { skip: kubectlSkipReason() ?? false }, () => {
    let orch: OrchProcess;
    let k: Kubectl;
    before(async () => {
      orch = await startOrch("apiserver", [`--api-group-suffix=${suffix}`, "--service-cluster-ip-range=10.100.0.0/16"]);
      k = new Kubectl(orch.kubeconfig);
    });
    after(async () => orch?.stop());

    test("the kubernetes ServiceCIDR has the service range and is Ready; the kubernetes service's address is an IPAddress", async () => {
      const cidrs = await k.ok("get", "servicecidr");
      assert.deepEqual(headers(cidrs), [["NAME", "CIDRS", "AGE"]]);
      assert.match(cidrs, /^kubernetes\s+10\.100\.0\.0\/16\s+\S+$/m);
      const ready = async () => (await k.ok("get", "servicecidr", "kubernetes", "-o", "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}")).trim();
      for (let i = 0; i < 50 && (await ready()) !== "True"; i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal(await ready(), "True");
      const described = await k.ok("describe", "servicecidr", "kubernetes");
      assert.match(described, /10\.100\.0\.0\/16/);
      // kubectl's ServiceCIDR describer knows networking.k8s.io only; on orch.io it falls back to the generic field dump.
      assert.match(described, suffix === "k8s.io" ? /Ready\s+True/ : /Status:\s+True\s*\n\s*Type:\s+Ready/);
      const ip = await k.ok("get", "ipaddress", "10.100.0.1");
      assert.deepEqual(headers(ip), [["NAME", "PARENTREF"]]);
      assert.match(ip, /^10\.100\.0\.1\s+services\/default\/kubernetes$/m);
    });

    test("a Service's cluster IP shows in kubectl get ipaddress with the Service as parent, and goes with the Service", async () => {
      await k.ok("create", "service", "clusterip", "web", "--tcp=80:8080");
      const clusterIP = (await k.ok("get", "service", "web", "-o", "jsonpath={.spec.clusterIP}")).trim();
      assert.match(clusterIP, /^10\.100\.\d+\.\d+$/);
      const listed = await k.ok("get", "ipaddresses");
      assert.match(listed, new RegExp(`^${clusterIP.replaceAll(".", "\\.")}\\s+services/default/web$`, "m"));
      assert.match(await k.ok("get", "ip", clusterIP, "-o", "jsonpath={.spec.parentRef.resource}/{.spec.parentRef.name}"), /^services\/web$/);
      await k.ok("delete", "service", "web");
      let gone = false;
      for (let i = 0; i < 50 && !gone; i++) {
        const r = await k.run(["get", "ipaddress", clusterIP]);
        gone = r.code !== 0 && /NotFound|not found/.test(r.stderr);
        if (!gone) await new Promise((res) => setTimeout(res, 100));
      }
      assert.ok(gone, `the IPAddress ${clusterIP} is gone after the Service`);
      // A malformed IPAddress is refused with upstream's message.
      const bad = await k.run(["create", "-f", "-"], { input: `apiVersion: networking.${suffix}/v1\nkind: IPAddress\nmetadata: {name: 10.100.01.5}\nspec: {parentRef: {resource: services, name: x}}\n` });
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /metadata\.name: Invalid value: "10\.100\.01\.5": must not have leading 0s/);
    });

    test("a ServiceCIDR applied server-side, explained, refused when changed; deleted once nothing in it is in use", async () => {
      const manifest = (cidr: string) => `apiVersion: networking.${suffix}/v1\nkind: ServiceCIDR\nmetadata: {name: extra}\nspec: {cidrs: [${cidr}]}\n`;
      const applied = await k.run(["apply", "--server-side", "-f", "-"], { input: manifest("192.168.90.0/24") });
      assert.equal(applied.code, 0, applied.stderr);
      assert.match(await k.ok("get", "servicecidr", "extra"), /^extra\s+192\.168\.90\.0\/24\s+\S+$/m);
      const changed = await k.run(["apply", "--server-side", "-f", "-"], { input: manifest("192.168.91.0/24") });
      assert.notEqual(changed.code, 0);
      assert.match(changed.stderr, /spec\.cidrs: Invalid value: .*field is immutable/);
      const explained = await k.ok("explain", "servicecidr.spec");
      assert.match(explained, /cidrs\s+<\[\]string>/);
      await k.ok("delete", "servicecidr", "extra", "--timeout=20s");
      assert.notEqual((await k.run(["get", "servicecidr", "extra"])).code, 0);
    });
  });
}
