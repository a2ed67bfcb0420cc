// A pod's resolv.conf settings as upstream's kubelet forms them: each
// dnsPolicy (ClusterFirst on and off the host network, ClusterFirstWithHostNet,
// Default, None), dnsConfig merged in (duplicates dropped, options overridden
// by name), the limits with their warnings, and resolv.conf parsing; then the
// embedded runtime's file written from the result, line for line as containerd
// writes it (the form agnhost's dns-suffix and dns-server-list read).

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Pod } from "../../api/core/types.js";
import { hostDnsConfig, parseResolvConf, podDnsConfig } from "./pod-dns.js";
import { writeSandboxFiles } from "../runtime/embedded/sandbox-files.js";

const HOST = parseResolvConf("# host\nnameserver 192.0.2.53\nnameserver 192.0.2.54\nsearch corp.example. lab.example\noptions edns0 timeout:2\n");
const pod = (spec: Record<string, unknown>): Pod => ({ apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "team", uid: "u1" }, spec: { containers: [], ...spec } as Pod["spec"] });
const cluster = { clusterDNS: ["10.96.0.10"], clusterDomain: "cluster.local", hostDns: HOST };

test("resolv.conf: nameservers accumulate, the last search and options lines win, trailing dots go, comments are skipped", () => {
  assert.deepEqual(HOST, { servers: ["192.0.2.53", "192.0.2.54"], searches: ["corp.example", "lab.example"], options: ["edns0", "timeout:2"] });
  assert.deepEqual(parseResolvConf("search a\nsearch b c\n  nameserver   1.1.1.1  \nnameserver\n"), { servers: ["1.1.1.1"], searches: ["b", "c"], options: [] });
  assert.deepEqual(hostDnsConfig(""), { servers: ["127.0.0.1"], searches: ["."], options: [] }, "no resolvConf: the node's own resolver, as upstream");
  assert.deepEqual(hostDnsConfig("/nonexistent/resolv.conf"), { servers: [], searches: [], options: [] });
});

test("ClusterFirst: the cluster DNS only, the cluster search path then the host's, ndots:5", () => {
  assert.deepEqual(podDnsConfig(pod({}), cluster), { servers: ["10.96.0.10"], searches: ["team.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example", "lab.example"], options: ["ndots:5"] });
  assert.deepEqual(podDnsConfig(pod({ dnsPolicy: "ClusterFirst" }), { ...cluster, clusterDomain: "" }).searches, ["corp.example", "lab.example"], "no cluster domain: the host's search only");
});

test("ClusterFirst on the host network and Default get the host's settings; ClusterFirstWithHostNet gets the cluster's", () => {
  assert.deepEqual(podDnsConfig(pod({ hostNetwork: true }), cluster), HOST);
  assert.deepEqual(podDnsConfig(pod({ dnsPolicy: "Default" }), cluster), HOST);
  assert.deepEqual(podDnsConfig(pod({ dnsPolicy: "ClusterFirstWithHostNet", hostNetwork: true }), cluster).servers, ["10.96.0.10"]);
  assert.deepEqual(podDnsConfig(pod({ dnsPolicy: "ClusterFirstWithHostNet" }), cluster).servers, ["10.96.0.10"]);
});

test("ClusterFirst without a cluster DNS server falls back to Default with upstream's MissingClusterDNS warning", () => {
  const warnings: string[] = [];
  const dns = podDnsConfig(pod({}), { ...cluster, clusterDNS: [], dnsWarning: (reason, message) => warnings.push(`${reason}: ${message}`) });
  assert.deepEqual(dns, HOST);
  assert.deepEqual(warnings, ['MissingClusterDNS: pod: "p_team(u1)". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.']);
  const named: string[] = [];
  podDnsConfig(pod({}), { ...cluster, clusterDNS: [], agentName: "orch-nodeagent", dnsWarning: (_r, message) => named.push(message) });
  assert.match(named[0]!, /\. orch-nodeagent does not have ClusterDNS IP configured/, "the agent's own name on the orch profile");
});

test("None: only the pod's dnsConfig (the conformance spec's 1.1.1.1 and resolv.conf.local)", () => {
  const dns = podDnsConfig(pod({ dnsPolicy: "None", dnsConfig: { nameservers: ["1.1.1.1"], searches: ["resolv.conf.local"], options: [{ name: "ndots", value: "2" }, { name: "edns0" }] } }), cluster);
  assert.deepEqual(dns, { servers: ["1.1.1.1"], searches: ["resolv.conf.local"], options: ["ndots:2", "edns0"] });
});

test("dnsConfig is appended: duplicates dropped, an option of the same name overridden", () => {
  const dns = podDnsConfig(pod({ dnsConfig: { nameservers: ["10.96.0.10", "192.0.2.99"], searches: ["svc.cluster.local", "extra.example"], options: [{ name: "ndots", value: "1" }, { name: "single-request" }] } }), cluster);
  assert.deepEqual(dns.servers, ["10.96.0.10", "192.0.2.99"]);
  assert.deepEqual(dns.searches, ["team.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example", "lab.example", "extra.example"]);
  assert.deepEqual(dns.options, ["ndots:1", "single-request"]);
});

test("limits: 3 nameservers, 6 search domains, 256 characters of search; each cut is a DNSConfigForming warning", () => {
  const warnings: string[] = [];
  const dnsWarning = (reason: string, message: string) => warnings.push(`${reason}: ${message}`);
  const dns = podDnsConfig(pod({ dnsPolicy: "None", dnsConfig: { nameservers: ["192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"], searches: ["a1", "a2", "a3", "a4", "a5", "a6", "a7"] } }), { ...cluster, dnsWarning });
  assert.deepEqual([dns.servers, dns.searches], [["192.0.2.1", "192.0.2.2", "192.0.2.3"], ["a1", "a2", "a3", "a4", "a5", "a6"]]);
  assert.deepEqual(warnings, [
    "DNSConfigForming: Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 192.0.2.1 192.0.2.2 192.0.2.3",
    "DNSConfigForming: Search Line limits were exceeded, some search paths have been omitted, the applied search line is: a1 a2 a3 a4 a5 a6",
  ]);
  const long = ["x".repeat(100), "y".repeat(100), "z".repeat(100)];
  assert.deepEqual(podDnsConfig(pod({ dnsPolicy: "None", dnsConfig: { searches: long } }), cluster).searches, long.slice(0, 2), "cut from the end to 256 characters");
  assert.deepEqual(podDnsConfig(pod({ dnsPolicy: "None", dnsConfig: { searches: ["w".repeat(254), "ok"] } }), cluster).searches, ["ok"], "a domain over 253 characters is dropped");
});

test("the embedded runtime writes search, nameserver and options lines as containerd does; nothing at all: the host's file", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-pod-dns-test-"));
  try {
    await writeSandboxFiles(dir, { hostname: "h", ip: "10.89.0.5", dns: { servers: ["1.1.1.1", "8.8.8.8"], searches: ["resolv.conf.local"], options: ["ndots:2"] }, logDirectory: "" });
    assert.equal(readFileSync(join(dir, "resolv.conf"), "utf8"), "search resolv.conf.local\nnameserver 1.1.1.1\nnameserver 8.8.8.8\noptions ndots:2\n");
    await writeSandboxFiles(dir, { hostname: "h", ip: "10.89.0.5", dns: { servers: [], searches: ["only.example"], options: [] }, logDirectory: "" });
    assert.equal(readFileSync(join(dir, "resolv.conf"), "utf8"), "search only.example\n", "a search line alone is still the pod's");
    writeFileSync(join(dir, "resolv.conf"), "");
    await writeSandboxFiles(dir, { hostname: "h", ip: "10.89.0.5", dns: { servers: [], searches: [], options: [] }, logDirectory: "" });
    assert.equal(readFileSync(join(dir, "resolv.conf"), "utf8"), readFileSync("/etc/resolv.conf", "utf8"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
