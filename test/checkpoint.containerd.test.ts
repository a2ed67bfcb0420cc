// The checkpoint operation against a real containerd 1.6 (Debian): that
// runtime has no CheckpointContainer (it answers UNIMPLEMENTED), so the agent
// answers 500 with the runtime's message, as seed 001's "Errors" table says
// for a runtime lacking the interface. Skips with a reason where containerd
// cannot run.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { NodeAgent } from "../src/nodeagent/index.js";
import { eventually } from "../src/nodeagent/testing/eventually.js";
import { serveContainerdAgent, type ServedContainerdAgent } from "./support/containerd-agent.js";
import { containerdSkipReason } from "./support/containerd.js";

const skip = containerdSkipReason();
const NODE = "node-ctrd-ckpt";
let served: ServedContainerdAgent;
let agent: NodeAgent;
let root: string;
let base: string;

before(async () => {
  if (skip) return;
  served = await serveContainerdAgent(NODE, (a, req, res, url) => a.serveCheckpoint(req, res, url));
  ({ agent, root, base } = served);
});

after(async () => {
  if (!skip) await served?.stop();
});

test("containerd 1.6: checkpoint answers 500 with the runtime's UNIMPLEMENTED; no archive is left", { skip }, async () => {
  writeFileSync(join(root, "manifests", "idle.json"), JSON.stringify({
    apiVersion: "v1", kind: "Pod", metadata: { name: "idle" },
    spec: { terminationGracePeriodSeconds: 1, containers: [{ name: "main", image: "busybox", imagePullPolicy: "IfNotPresent", command: ["sh", "-c", "while true; do sleep 1; done"] }] },
  }));
  await eventually(() => agent.pods().find((p) => p.pod.metadata.name === `idle-${NODE}`)?.status.containerStatuses?.[0]?.state?.running, 60_000, "the pod running on containerd");
  const r = await fetch(`${base}/checkpoint/default/idle-${NODE}/main`, { method: "POST" });
  const text = await r.text();
  assert.equal(r.status, 500, text);
  assert.match(text, new RegExp(`^checkpointing of default/idle-${NODE}/main failed \\(rpc error: code = Unimplemented desc = .*CheckpointContainer.*\\)$`));
  assert.deepEqual(readdirSync(join(root, "agent", "checkpoints")), []);
});
