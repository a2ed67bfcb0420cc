// Projected service-account tokens on the node: the token manager keeps a
// token until 80 % of its life (or 24 h) has passed, falls back to the kept
// one while the API server cannot renew it, and the projected volume writes
// token, ca.crt and namespace, replacing the token file when it is renewed.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Pod } from "../../api/core/types.js";
import { needsRenewal, TokenManager, type TokenRequestSpec } from "../tokens/token-manager.js";
import { setupVolumes } from "./volumes.js";

const HOUR = 3_600_000;
const spec: TokenRequestSpec = { audiences: [], expirationSeconds: 3607, boundPod: { name: "p", uid: "u1" } };

test("needsRenewal: past 80 % of the life or older than 24 h", () => {
  const issued = { token: "t", expiresAtMs: 10 * HOUR, expirationSeconds: 10 * 3600 };
  assert.equal(needsRenewal(issued, 7.9 * HOUR), false);
  assert.equal(needsRenewal(issued, 8.1 * HOUR), true);
  const long = { token: "t", expiresAtMs: 48 * HOUR, expirationSeconds: 48 * 3600 };
  assert.equal(needsRenewal(long, 23 * HOUR), false);
  assert.equal(needsRenewal(long, 24.1 * HOUR), true);
});

test("the token manager asks once per projection and pod, renews late in the token's life, and keeps a valid token when renewal fails", async () => {
  let now = 0;
  let n = 0;
  let failing = false;
  const asked: unknown[] = [];
  const manager = new TokenManager(async (ns, sa, s) => {
    asked.push([ns, sa, s]);
    if (failing) throw new Error("API server unreachable");
    return { token: `token-${++n}`, expiresAtMs: now + s.expirationSeconds * 1000, expirationSeconds: s.expirationSeconds };
  }, () => now);
  assert.equal(await manager.token("ns", "default", spec), "token-1");
  now = 0.5 * HOUR;
  assert.equal(await manager.token("ns", "default", spec), "token-1");
  assert.equal(asked.length, 1);
  assert.equal(await manager.token("ns", "default", { ...spec, boundPod: { name: "p", uid: "u2" } }), "token-2", "another pod, another token");
  now = 0.81 * 3607 * 1000;
  failing = true;
  assert.equal(await manager.token("ns", "default", spec), "token-1", "still valid: handed out while renewal fails");
  failing = false;
  assert.equal(await manager.token("ns", "default", spec), "token-3");
  now = 10 * HOUR;
  failing = true;
  await assert.rejects(manager.token("ns", "default", spec), /unreachable/);
});

test("a projected volume with serviceAccountToken, configMap and downwardAPI sources writes token, ca.crt and namespace", async () => {
  const rootDir = mkdtempSync(join(tmpdir(), "nodeagent-token-volume-"));
  let token = "jwt-1";
  const requests: unknown[] = [];
  const ctx = {
    rootDir,
    keyDomain: "orch.io",
    hostIP: "10.0.0.1",
    podIP: "10.1.0.2",
    nodeAllocatable: { cpu: 2, memory: 1024 },
    objects: {
      configMap: async (_ns: string, name: string) => (name === "orch-root-ca.crt" ? { data: { "ca.crt": "-----BEGIN CERTIFICATE-----\n" } } : undefined),
      secret: async () => undefined,
      serviceAccountToken: async (ns: string, sa: string, s: TokenRequestSpec) => {
        requests.push({ ns, sa, s });
        return token;
      },
    },
  };
  const pod: Pod = {
    apiVersion: "v1", kind: "Pod",
    metadata: { name: "web", namespace: "team", uid: "uid-9" },
    spec: {
      serviceAccountName: "robot",
      containers: [{ name: "c" }],
      volumes: [{
        name: "orch-api-access-abcde",
        projected: {
          defaultMode: 0o644,
          sources: [
            { serviceAccountToken: { expirationSeconds: 3607, path: "token", audience: "vault" } },
            { configMap: { name: "orch-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
            { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } },
          ],
        },
      }],
    },
  };
  const dir = (await setupVolumes(pod, ctx)).get("orch-api-access-abcde")!;
  assert.equal(readFileSync(join(dir, "token"), "utf8"), "jwt-1");
  assert.equal(readFileSync(join(dir, "ca.crt"), "utf8"), "-----BEGIN CERTIFICATE-----\n");
  assert.equal(readFileSync(join(dir, "namespace"), "utf8"), "team");
  assert.equal(statSync(join(dir, "token")).mode & 0o777, 0o644);
  assert.deepEqual(requests[0], { ns: "team", sa: "robot", s: { audiences: ["vault"], expirationSeconds: 3607, boundPod: { name: "web", uid: "uid-9" } } });
  const inode = statSync(join(dir, "token")).ino;
  token = "jwt-2";
  await setupVolumes(pod, ctx);
  assert.equal(readFileSync(join(dir, "token"), "utf8"), "jwt-2");
  assert.notEqual(statSync(join(dir, "token")).ino, inode, "replaced by a rename, not rewritten in place");
  assert.deepEqual(readdirSync(dir).sort(), ["ca.crt", "namespace", "token"], "no temporary files left");
});

test("without an API server, a token projection is a volume error", async () => {
  const rootDir = mkdtempSync(join(tmpdir(), "nodeagent-token-volume-"));
  const pod: Pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "n", uid: "u" }, spec: { volumes: [{ name: "v", projected: { sources: [{ serviceAccountToken: { path: "token" } }] } }] } };
  await assert.rejects(setupVolumes(pod, { rootDir, keyDomain: "orch.io", hostIP: "", podIP: "", nodeAllocatable: { cpu: 1, memory: 1 }, objects: { configMap: async () => undefined, secret: async () => undefined } }), /no API server/);
});
