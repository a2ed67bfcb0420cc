import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Pod } from "../../api/core/types.js";
import { hostsFileMount, managedHostsContent, mountsManagedHosts, podHostnameAndDomain } from "./etc-hosts.js";

const LOCAL = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n";

test("the managed hosts file: header, localhost and ip6 lines, then the pod's IPs with its name", () => {
  assert.equal(managedHostsContent(["10.0.0.5"], "web", ""), `# Kubernetes-managed hosts file.\n${LOCAL}10.0.0.5\tweb\n`);
});

test("with a subdomain each pod IP names the FQDN first, then the hostname; every IP gets a line", () => {
  assert.equal(
    managedHostsContent(["10.0.0.5", "fd00::5"], "dns-querier-1", "dns-test-service.ns1.svc.cluster.local"),
    `# Kubernetes-managed hosts file.\n${LOCAL}10.0.0.5\tdns-querier-1.dns-test-service.ns1.svc.cluster.local\tdns-querier-1\nfd00::5\tdns-querier-1.dns-test-service.ns1.svc.cluster.local\tdns-querier-1\n`,
  );
});

test("hostAliases follow under their comment, one line per IP with its names tab-separated", () => {
  const out = managedHostsContent(["10.0.0.5"], "web", "", [{ ip: "123.45.67.89", hostnames: ["foo.local", "bar.local"] }, { ip: "1.2.3.4", hostnames: ["one"] }]);
  assert.ok(out.endsWith("10.0.0.5\tweb\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo.local\tbar.local\n1.2.3.4\tone\n"), out);
});

test("hostname: spec.hostname, else the pod's name, cut to 63 characters without a trailing - or .; the domain from the subdomain", () => {
  const pod = (spec: Pod["spec"], name = "p"): Pod => ({ apiVersion: "v1", kind: "Pod", metadata: { name, namespace: "ns1" }, spec });
  assert.deepEqual(podHostnameAndDomain(pod({ containers: [] }), "cluster.local"), { hostname: "p", domain: "" });
  assert.deepEqual(podHostnameAndDomain(pod({ containers: [], hostname: "h", subdomain: "s" }), "cluster.local"), { hostname: "h", domain: "s.ns1.svc.cluster.local" });
  const long = `${"a".repeat(61)}-.b`;
  assert.equal(podHostnameAndDomain(pod({ containers: [] }, long), "x").hostname, "a".repeat(61));
});

test("a container mounting its own /etc/hosts, or a pod without an IP, gets no managed file", () => {
  assert.equal(mountsManagedHosts({ name: "c" }, ["10.0.0.5"]), true);
  assert.equal(mountsManagedHosts({ name: "c", volumeMounts: [{ name: "v", mountPath: "/etc/hosts-original" }] }, ["10.0.0.5"]), true);
  assert.equal(mountsManagedHosts({ name: "c", volumeMounts: [{ name: "v", mountPath: "/etc/hosts" }] }, ["10.0.0.5"]), false);
  assert.equal(mountsManagedHosts({ name: "c" }, []), false);
});

test("hostsFileMount writes <podDir>/etc-hosts (0644) and mounts it read-write at /etc/hosts; host network reads the node's file", () => {
  const dir = mkdtempSync(join(tmpdir(), "etc-hosts-"));
  try {
    const pod: Pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "web", namespace: "default", uid: "u1" }, spec: { containers: [], hostAliases: [{ ip: "9.9.9.9", hostnames: ["nine"] }] } };
    const m = hostsFileMount({ pod, podDir: join(dir, "pod"), podIPs: ["10.1.1.1"], clusterDomain: "cluster.local" });
    assert.deepEqual([m.containerPath, m.hostPath, m.readonly], ["/etc/hosts", join(dir, "pod", "etc-hosts"), false]);
    assert.equal(statSync(m.hostPath).mode & 0o777, 0o644);
    assert.equal(readFileSync(m.hostPath, "utf8"), `# Kubernetes-managed hosts file.\n${LOCAL}10.1.1.1\tweb\n\n# Entries added by HostAliases.\n9.9.9.9\tnine\n`);

    const nodeHosts = join(dir, "node-hosts");
    writeFileSync(nodeHosts, "127.0.0.1 localhost\n192.168.1.2 node-a\n");
    const hostNet: Pod = { ...pod, spec: { ...pod.spec!, hostNetwork: true } };
    const h = hostsFileMount({ pod: hostNet, podDir: join(dir, "pod"), podIPs: ["192.168.1.2"], clusterDomain: "cluster.local", nodeHostsFile: nodeHosts });
    assert.equal(readFileSync(h.hostPath, "utf8"), "# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n192.168.1.2 node-a\n\n# Entries added by HostAliases.\n9.9.9.9\tnine\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
