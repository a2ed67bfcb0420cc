// End to end: the request limits of the real `orch apiserver` (docs/apiserver.md,
// "Limits") as the real, unmodified kubectl 1.33 meets them: a request over
// --request-timeout is kubectl's `Error from server (Timeout)`, and over
// --max-requests-inflight kubectl is answered 429 with Retry-After: 1, waits
// and retries by itself until a slot is free.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

/** A read the server holds for about 3 s (it waits for a resource version it has not reached). */
const SLOW_READ = "/api/v1/namespaces/default/configmaps?resourceVersion=999999&resourceVersionMatch=NotOlderThan";

describe("kubectl 1.33 against orch apiserver --request-timeout=1s --max-requests-inflight=1", { skip: kubectlSkipReason() ?? false }, () => {
  let orch: OrchProcess;
  let kubectl: Kubectl;
  before(async () => {
    orch = await startOrch("apiserver", ["--request-timeout=1s", "--max-requests-inflight=1"]);
    kubectl = new Kubectl(orch.kubeconfig);
    await kubectl.ok("get", "namespaces"); // discovery cached before the slots are filled
  });
  after(async () => {
    await orch?.stop();
  });

  test("a request over --request-timeout: Error from server (Timeout)", async () => {
    const started = Date.now();
    const r = await kubectl.run(["get", "--raw", SLOW_READ]);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, /Error from server \(Timeout\): Timeout: request did not complete within requested timeout - context deadline exceeded/);
    assert.ok(Date.now() - started < 2800, "answered at the timeout, not when the handler gave up");
  });

  test("over --max-requests-inflight kubectl gets 429 with Retry-After: 1 and retries until it is served", async () => {
    const slow = kubectl.run(["get", "--raw", SLOW_READ]);
    await new Promise((r) => setTimeout(r, 700));
    const started = Date.now();
    const r = await kubectl.run(["get", "configmaps", "-v=6"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /status="429 Too Many Requests"/);
    assert.match(r.stderr, /Got a Retry-After response" delay="1s"/);
    assert.ok(Date.now() - started >= 900, "it waited for the slot");
    await slow;
  });
});
