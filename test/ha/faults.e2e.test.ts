// The fault suite (issue 20): real etcd members and real `orch apiserver`
// processes, a recorded client history checked for linearizability, watch
// invariants checked on every watcher, and no acknowledged write lost, under
// each fault of faults-scenarios.ts; and the embedded lmdb store under kill -9.
// FAULTS_LONG=1 lengthens the load before and after each fault.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { etcdSkipReason } from "../../src/storage/etcd/testing/etcd-server.js";
import { FAULTS, partitionSkipReason, runEtcdFault, runLmdbKill, summary, type FaultReport } from "./faults-scenarios.js";

function assertClean(r: FaultReport): void {
  console.log(`# ${summary(r)}`);
  assert.ok(r.acknowledged > 0, `no write was acknowledged: ${summary(r)}`);
  assert.equal(r.lost, 0, summary(r));
  assert.equal(r.linearizable, true, summary(r));
  assert.equal(r.watchViolations, 0, summary(r));
}

describe("faults on a 3-member etcd cluster with two API servers", { skip: etcdSkipReason() ?? false, concurrency: 1 }, () => {
  for (const name of Object.keys(FAULTS)) {
    test(name, { timeout: 240_000, skip: name.startsWith("partition") ? partitionSkipReason() : false }, async () => assertClean(await runEtcdFault(name)));
  }
});

describe("faults on the embedded lmdb store", () => {
  test("kill -9 of the API server: acknowledged writes are there after the restart", { timeout: 120_000 }, async () => assertClean(await runLmdbKill()));
});
