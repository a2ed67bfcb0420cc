import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startComponentServer } from "./component-server.js";
import { parseFeatureGates } from "./feature-gates.js";
import { presentedFingerprint } from "./testing/presented-cert.js";

async function serveOnce(certDir?: { dir: string; name: string }): Promise<{ cert: string; fingerprint: string }> {
  const server = await startComponentServer({
    name: "orch-test", featureGates: parseFeatureGates({}), bindAddress: "127.0.0.1", port: 0, log: () => {},
    ...(certDir ? { certDir } : {}),
  });
  try {
    return { cert: server.servingCert, fingerprint: await presentedFingerprint(server.port) };
  } finally {
    await server.close();
  }
}

test("cert dir: the self-signed pair is written on the first start (key 0600, dir 0700) and served again on the next", async () => {
  const root = mkdtempSync(join(tmpdir(), "cert-dir-"));
  try {
    const certDir = { dir: join(root, "pki"), name: "nodeagent" };
    const first = await serveOnce(certDir);
    assert.equal(statSync(certDir.dir).mode & 0o777, 0o700);
    assert.equal(statSync(join(certDir.dir, "nodeagent.key")).mode & 0o777, 0o600);
    assert.equal(statSync(join(certDir.dir, "nodeagent.crt")).mode & 0o777, 0o644);
    assert.equal(readFileSync(join(certDir.dir, "nodeagent.crt"), "utf8"), first.cert);
    const second = await serveOnce(certDir);
    assert.equal(second.cert, first.cert, "the same certificate on the second start");
    assert.equal(second.fingerprint, first.fingerprint, "and it is the one presented");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("cert dir: without one, each start makes a new certificate in memory", async () => {
  const [a, b] = [await serveOnce(), await serveOnce()];
  assert.notEqual(a.fingerprint, b.fingerprint);
});
