import { test } from "node:test";
import assert from "node:assert/strict";
import { Channel, exitStatus, frame, parseResize, pickProtocol } from "./channel-protocol.js";

test("pickProtocol prefers v5, takes v4 from older clients, refuses what it does not speak", () => {
  assert.equal(pickProtocol(["v4.channel.k8s.io", "v5.channel.k8s.io"]), "v5.channel.k8s.io");
  assert.equal(pickProtocol(["v4.channel.k8s.io", "base64.channel.k8s.io"]), "v4.channel.k8s.io");
  assert.equal(pickProtocol(["base64.channel.k8s.io"]), undefined);
});

test("a frame is the channel byte, then the data", () => {
  assert.deepEqual([...frame(Channel.Stderr, "ab")], [2, 97, 98]);
  assert.deepEqual([...frame(Channel.Stdout)], [1]);
});

test("exit status: Success for 0; NonZeroExitCode with an ExitCode cause kubectl turns into its exit code", () => {
  assert.deepEqual(exitStatus(0), { metadata: {}, status: "Success" });
  const failed = exitStatus(3) as { status: string; reason: string; details: { causes: { reason: string; message: string }[] } };
  assert.equal(failed.status, "Failure");
  assert.equal(failed.reason, "NonZeroExitCode");
  assert.deepEqual(failed.details.causes, [{ reason: "ExitCode", message: "3" }]);
});

test("resize messages: Width and Height, anything else ignored", () => {
  assert.deepEqual(parseResize(Buffer.from('{"Width":120,"Height":40}')), { width: 120, height: 40 });
  assert.equal(parseResize(Buffer.from('{"Width":-1,"Height":40}')), undefined);
  assert.equal(parseResize(Buffer.from("nope")), undefined);
});
