// End to end: the real `orch server` with its own default,
// --host-root-fallback=marked, driven by kubectl 1.33. A pod whose image
// cannot be had and that is not marked `orch.io/host-root: "true"` is not run
// on the host: its container waits in ErrImagePull/ImagePullBackOff with a
// message naming the marker. A marked pod runs on the host root, but the
// server's data dir (admin.token, the store, the keys) is empty to it.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { eventually } from "../src/controllers/testing.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const skip = kubectlSkipReason() ?? (process.getuid?.() !== 0 ? "orch server's node agent needs root" : undefined);
const ABSENT = "127.0.0.1:1/never-imported:1";

describe("orch server --host-root-fallback=marked", { skip: skip ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  const pod = (name: string, marked: boolean, script: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  annotations: {${marked ? `orch.io/host-root: "true"` : ""}}
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: ${ABSENT}
    command: [/bin/sh, -c, ${JSON.stringify(script)}]
`;
  const apply = async (yaml: string) => {
    const r = await k.run(["apply", "-f", "-"], { input: yaml });
    assert.equal(r.code, 0, r.stderr);
  };
  const get = async (name: string) => JSON.parse(await k.ok("get", "pod", name, "-o", "json")) as {
    status: { phase?: string; containerStatuses?: { state: { waiting?: { reason: string; message?: string } } }[] };
  };

  before(async () => {
    orch = await startOrch("server", ["--node-name=host-root", "--host-root-fallback=marked"], { readyTimeoutMs: 60_000 });
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await orch?.stop();
  });

  test("an unmarked pod with an image the node cannot get waits with a reason naming the marker", async () => {
    await apply(pod("plain", false, "echo ran"));
    const waiting = await eventually("the pull refused", async () => {
      const w = (await get("plain")).status.containerStatuses?.[0]?.state.waiting;
      return w !== undefined && /ErrImagePull|ImagePullBackOff/.test(w.reason) && w.message ? w : undefined;
    }, 30_000);
    assert.match(waiting.message!, /is not marked for the host-root fallback \(annotation orch\.io\/host-root: "true"\); import the image with "orch images import FILE"/);
    assert.notEqual((await get("plain")).status.phase, "Succeeded");
  });

  test("a marked pod runs on the host root without seeing the server's data dir", async () => {
    assert.ok(existsSync(join(orch.dataDir, "admin.token")), "the server keeps its admin token in its data dir");
    const script = `cat /etc/hostname >/dev/null && echo "host:ok"; echo "token:[$(cat ${join(orch.dataDir, "admin.token")} 2>&1)]"; echo "dir:[$(ls -A ${orch.dataDir})]"`;
    await apply(pod("marked", true, script));
    await eventually("the marked pod to finish", async () => (await get("marked")).status.phase === "Succeeded", 60_000);
    const out = await k.ok("logs", "marked");
    assert.match(out, /host:ok/);
    assert.match(out, /token:\[cat: .*admin\.token: No such file or directory\]/, out);
    assert.match(out, /dir:\[\]/, out);
  });
});
