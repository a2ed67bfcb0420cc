import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { selfSignedServingCert } from "../component/pki.js";
import { certificateSha256, fetchPinnedCa, formatJoinToken, parseJoinToken } from "./join-token.js";

test("a join token carries the CA's digest and the bearer token; a plain token is not one", async () => {
  const { ca } = await selfSignedServingCert();
  const text = formatJoinToken(ca, "s3cr.et");
  assert.match(text, /^orch1\.[0-9a-f]{64}\.s3cr\.et$/);
  assert.deepEqual(parseJoinToken(`${text}\n`), { caSha256: certificateSha256(ca), token: "s3cr.et" });
  assert.equal(parseJoinToken("s3cret"), undefined);
  assert.equal(parseJoinToken("orch1.abc.s3cret"), undefined, "a digest of the wrong length");
});

test("fetchPinnedCa takes the CA from a real TLS server's chain only when its digest matches, sending nothing else", async () => {
  const pair = await selfSignedServingCert();
  let requests = 0;
  const server = createServer({ cert: pair.cert, key: pair.key }, (_req, res) => {
    requests++;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const ca = await fetchPinnedCa(url, certificateSha256(pair.ca));
    assert.equal(certificateSha256(ca), certificateSha256(pair.ca));
    const other = await selfSignedServingCert();
    await assert.rejects(fetchPinnedCa(url, certificateSha256(other.ca)), /presented no certificate with the join token's CA digest .*not the cluster the token belongs to/);
    assert.equal(requests, 0, "no request reaches a server before it is trusted");
  } finally {
    server.close();
  }
});
