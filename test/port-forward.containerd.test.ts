// port-forward on a real containerd (Debian 1.6, runc, the bridge CNI): the
// node agent's /portForward splices a SPDY data stream to busybox's httpd in a
// pod, dialled on localhost inside the sandbox's network namespace (from
// containerd's verbose PodSandboxStatus), so one listening only on the pod's
// 127.0.0.1 is reached too; a port nothing listens on gets containerd's error
// with the sandbox id and namespace path. Skips with a reason
// where containerd cannot run (fails under CI=true).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NodeAgent } from "../src/nodeagent/index.js";
import { eventually } from "../src/nodeagent/testing/eventually.js";
import { dialPortForward, forwardRequest } from "../src/nodeagent/testing/port-forward-client.js";
import { startContainerdAgent } from "./support/containerd-agent.js";
import { containerdSkipReason, startContainerd, type Containerd } from "./support/containerd.js";

const skip = containerdSkipReason();
const NODE = "node-pf-ctrd";
let containerd: Containerd;
let agent: NodeAgent | undefined;
let http: Server;
let root: string;

before(async () => {
  if (skip) return;
  root = mkdtempSync(join(tmpdir(), "pf-ctrd-"));
  containerd = await startContainerd();
  agent = await startContainerdAgent(containerd, root, NODE);
  http = createServer();
  http.on("upgrade", (req, socket, head) => void agent!.servePortForward(req, socket, head, new URL(req.url!, "http://agent")));
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
});

after(async () => {
  if (skip) return;
  http?.closeAllConnections();
  http?.close();
  await agent?.stop();
  await containerd?.stop();
  rmSync(root, { recursive: true, force: true, maxRetries: 10 });
});

test("containerd: /portForward reaches the pod's httpd inside its network namespace, also one on the pod's 127.0.0.1 only; 20 requests on one session; a closed port is containerd's error", { skip }, async (t) => {
  if (!containerd.cni) return t.skip("containerd runs without the bridge CNI here (no /usr/lib/cni/bridge)");
  const spec = { terminationGracePeriodSeconds: 1, containers: [{ name: "main", image: "busybox", imagePullPolicy: "IfNotPresent", command: ["sh", "-c", "mkdir -p /www /lo && echo from-containerd > /www/index.html && echo loopback-only > /lo/index.html && { httpd -f -p 127.0.0.1:8081 -h /lo & } && exec httpd -f -p 8080 -h /www"] }] };
  writeFileSync(join(root, "manifests", "web.json"), JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "web" }, spec }));
  const ip = await eventually(() => {
    const s = agent!.pods().find((p) => p.pod.metadata.name === `web-${NODE}`)?.status;
    return s?.containerStatuses?.[0]?.state?.running && s.podIP ? s.podIP : undefined;
  }, 60_000, "web running with an IP");
  assert.notEqual(ip, "127.0.0.1");

  const { session } = await dialPortForward((http.address() as AddressInfo).port, `/portForward/default/web-${NODE}`);
  // httpd may take a moment after the container starts.
  await eventually(async () => {
    const r = forwardRequest(session!, 8080, `probe-${Date.now()}`);
    r.data.write(Buffer.from("GET / HTTP/1.0\r\n\r\n"));
    return /from-containerd/.test((await r.dataText).text) ? true : undefined;
  }, 20_000, "httpd answering");
  const all = await Promise.all(Array.from({ length: 20 }, (_, i) => {
    const r = forwardRequest(session!, 8080, `r${i}`);
    r.data.write(Buffer.from("GET / HTTP/1.0\r\n\r\n"));
    return r.dataText.then((t) => t.text);
  }));
  for (const text of all) assert.match(text, /^HTTP\/1\.[01] 200[\s\S]*from-containerd\n$/);
  const lo = await Promise.all(Array.from({ length: 20 }, (_, i) => {
    const r = forwardRequest(session!, 8081, `lo${i}`);
    r.data.write(Buffer.from("GET / HTTP/1.0\r\n\r\n"));
    return r.dataText.then((t) => t.text);
  }));
  for (const text of lo) assert.match(text, /^HTTP\/1\.[01] 200[\s\S]*loopback-only\n$/, "the server on the pod's 127.0.0.1");

  const closed = forwardRequest(session!, 9, "closed");
  const sandboxes = await containerd.client.listPodSandbox({});
  const sandbox = sandboxes.items.find((s) => s.metadata?.name === `web-${NODE}` && s.state === "SANDBOX_READY")!;
  const info = JSON.parse((await containerd.client.podSandboxStatus({ podSandboxId: sandbox.id, verbose: true })).info.info ?? "{}") as { runtimeSpec: { linux: { namespaces: { type: string; path?: string }[] } } };
  const netns = info.runtimeSpec.linux.namespaces.find((n) => n.type === "network")!.path!;
  const text = (await closed.errorText).text;
  assert.ok(text.startsWith(`error forwarding port 9 to pod ${sandbox.id}, uid : failed to execute portforward in network namespace "${netns}": failed to connect to localhost:9 inside namespace "${sandbox.id}", IPv4: dial tcp4 127.0.0.1:9: connect: connection refused IPv6 dial tcp6 [::1]:9: `), text);
  session!.goAway();
});
