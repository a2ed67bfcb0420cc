// Controller expectations: met, pending, and expired unmet (the case the
// ReplicaSet controller checks against the server before acting).

import { test } from "node:test";
import assert from "node:assert/strict";
import { sleep } from "../../machinery/until.js";
import { Expectations } from "./expectations.js";

test("pending creations hold the key until seen; past the TTL unseen they count as met, and as expired unmet", async () => {
  const e = new Expectations({ ttlMs: 50 });
  assert.equal(e.satisfied("ns/a"), true, "nothing expected");
  assert.equal(e.expiredUnmet("ns/a"), false);
  e.expect("ns/a", 2);
  assert.equal(e.satisfied("ns/a"), false);
  e.creationObserved("ns/a");
  e.creationObserved("ns/a");
  assert.equal(e.satisfied("ns/a"), true, "both creations seen");
  assert.equal(e.expiredUnmet("ns/a"), false);

  e.expect("ns/b", 1, ["ns/pod-1"]);
  await sleep(80);
  assert.equal(e.satisfied("ns/b"), true, "expired: the key may act again");
  assert.equal(e.expiredUnmet("ns/b"), true, "but what it expected was never seen");
  e.creationObserved("ns/b");
  e.deletionObserved("ns/b", "ns/pod-1");
  assert.equal(e.expiredUnmet("ns/b"), false, "seen late: met");
});
