import assert from "node:assert/strict";
import { test } from "node:test";
import { hasReleaseVersion, planShards } from "./plan.js";

test("[Serial] and [Disruptive] specs run alone after the parallel shards; the rest round-robin", () => {
  const specs = ["a [Conformance]", "[sig-node] NoExecuteTaintManager Single Pod [Serial] removing taint cancels eviction [Disruptive] [Conformance]", "b [Conformance]", "c [Conformance]", "[sig-apps] Daemon set [Serial] should run [Conformance]"];
  assert.deepEqual(planShards(specs, 2), {
    parallel: [["a [Conformance]", "c [Conformance]"], ["b [Conformance]"]],
    serial: [specs[1], specs[4]],
  });
  assert.deepEqual(planShards(["x [Serial]"], 3), { parallel: [], serial: ["x [Serial]"] });
});

test("a kubectl built without version variables is told apart from a release build", () => {
  const bare = 'Client Version: version.Info{Major:"1", Minor:"23", GitVersion:"v1.23.16", GitCommit:"$Format:%H$", GitTreeState:"", BuildDate:"1970-01-01T00:00:00Z", GoVersion:"go1.19.8", Compiler:"gc", Platform:"linux/amd64"}';
  const release = 'Client Version: version.Info{Major:"1", Minor:"23", GitVersion:"v1.23.16", GitCommit:"f494d12ca9361ed89ae79acbb1d0074e1a58a4d3", GitTreeState:"dirty", BuildDate:"2023-07-22T13:59:53Z", GoVersion:"go1.19.8", Compiler:"gc", Platform:"linux/amd64"}';
  assert.equal(hasReleaseVersion(bare), false);
  assert.equal(hasReleaseVersion(release), true);
  assert.equal(hasReleaseVersion(release.replace("Client", "Server"), "Server Version: "), true);
});
