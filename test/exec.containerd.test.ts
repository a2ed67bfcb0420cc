// exec on a real containerd (Debian 1.6, runc): the node agent's /exec, on the
// component port with the agent endpoints `orch nodeagent` serves, enters a
// containerd container's namespaces from the PID and OCI process containerd's
// verbose ContainerStatus reports; output, stdin, exit code and the image's
// own root (busybox's /bin/busybox, not the host's). Skips with a reason where
// containerd cannot run (fails under CI=true).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureCredentials } from "../src/component/pki.js";
import { agentEndpoints } from "../src/cli/agent-endpoints.js";
import { defaultFeatureGates, startComponentServer, type RunningComponentServer } from "../src/component/index.js";
import type { NodeAgent } from "../src/nodeagent/index.js";
import { eventually } from "../src/nodeagent/testing/eventually.js";
import { startContainerdAgent } from "./support/containerd-agent.js";
import { containerdSkipReason, startContainerd, type Containerd } from "./support/containerd.js";
import { agentExec } from "./support/exec-client.js";

const skip = containerdSkipReason();
const NODE = "node-exec-ctrd";
let containerd: Containerd;
let agent: NodeAgent | undefined;
let server: RunningComponentServer;
let client: { cert: string; key: string };
let root: string;

before(async () => {
  if (skip) return;
  root = mkdtempSync(join(tmpdir(), "exec-ctrd-"));
  const credentials = await ensureCredentials(join(root, "pki"));
  client = credentials.nodeAgentClient;
  containerd = await startContainerd({ cni: false });
  server = await startComponentServer({
    name: "orch-nodeagent", featureGates: defaultFeatureGates(), bindAddress: "127.0.0.1", port: 0, clientCa: credentials.caCertPem, log: () => {},
    ...agentEndpoints(() => agent),
  });
  agent = await startContainerdAgent(containerd, root, NODE);
});

after(async () => {
  if (skip) return;
  await agent?.stop();
  await server?.close();
  await containerd?.stop();
  rmSync(root, { recursive: true, force: true, maxRetries: 10 });
});

test("containerd: /exec runs the command in the container (its root, its environment), with stdin and the exit code", { skip }, async () => {
  const spec = { terminationGracePeriodSeconds: 1, hostNetwork: true, containers: [{ name: "main", image: "busybox", imagePullPolicy: "IfNotPresent", command: ["sleep", "3600"], env: [{ name: "GREETING", value: "from-the-pod" }] }] };
  writeFileSync(join(root, "manifests", "box.json"), JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "box" }, spec }));
  await eventually(() => (agent!.pods().find((p) => p.pod.metadata.name === `box-${NODE}`)?.status.containerStatuses?.[0]?.state?.running ? true : undefined), 30_000, "box running");
  const url = (cmd: string[], params: string) => `${server.url.replace("https:", "wss:")}/exec/default/box-${NODE}/main?${cmd.map((c) => `command=${encodeURIComponent(c)}`).join("&")}&${params}`;

  const env = await agentExec(url(["sh", "-c", "echo $GREETING; ls /; echo oops >&2"], "output=1&error=1"), client);
  assert.match(env.stdout, /^from-the-pod\n/);
  assert.doesNotMatch(env.stdout, /^work$/m, "the image's root, not the host's (which has /work)");
  assert.equal(env.stderr, "oops\n");
  assert.equal(env.status?.status, "Success");

  const input = await agentExec(url(["cat"], "input=1&output=1"), { ...client, stdin: "piped\n" });
  assert.equal(input.stdout, "piped\n");

  const failed = await agentExec(url(["sh", "-c", "exit 7"], "output=1"), client);
  assert.equal(failed.status?.reason, "NonZeroExitCode");
  assert.deepEqual(failed.status?.details?.causes, [{ reason: "ExitCode", message: "7" }]);
});

test("containerd: /attach carries the running container's output from its CRI log and ends with it", { skip }, async () => {
  // Thirty lines 100 ms apart, then the container exits (and is restarted as a new instance attach does not follow).
  const spec = { terminationGracePeriodSeconds: 1, hostNetwork: true, containers: [{ name: "main", image: "busybox", imagePullPolicy: "IfNotPresent", command: ["sh", "-c", "for i in $(seq 1 30); do echo tick $i; sleep 0.1; done; echo last"] }] };
  writeFileSync(join(root, "manifests", "ticker.json"), JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "ticker" }, spec }));
  await eventually(() => (agent!.pods().find((p) => p.pod.metadata.name === `ticker-${NODE}`)?.status.containerStatuses?.[0]?.state?.running ? true : undefined), 30_000, "ticker running");
  const attached = await agentExec(`${server.url.replace("https:", "wss:")}/attach/default/ticker-${NODE}/main?output=1&error=1`, client);
  assert.match(attached.stdout, /^tick \d+\ntick \d+\n/, "lines as the container writes them");
  assert.match(attached.stdout, /last\n$/);
  assert.equal(attached.status?.status, "Success");
});

test("containerd: /attach with input reaches the container's stdin through CRI Attach's streaming server; stdinOnce ends it with the client's input", { skip }, async () => {
  const spec = { terminationGracePeriodSeconds: 1, hostNetwork: true, restartPolicy: "Never", containers: [{ name: "main", image: "busybox", imagePullPolicy: "IfNotPresent", stdin: true, stdinOnce: true, command: ["sh", "-c", "while read -r l; do echo \"got $l\"; echo \"err $l\" >&2; done; echo eof"] }] };
  writeFileSync(join(root, "manifests", "reader.json"), JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "reader" }, spec }));
  await eventually(() => (agent!.pods().find((p) => p.pod.metadata.name === `reader-${NODE}`)?.status.containerStatuses?.[0]?.state?.running ? true : undefined), 30_000, "reader running");
  // v5 (the client closes its stdin): the runtime's stdin is half-closed and, stdinOnce, the container's input ends.
  const r = await agentExec(`${server.url.replace("https:", "wss:")}/attach/default/reader-${NODE}/main?input=1&output=1&error=1`, { ...client, stdin: "one\ntwo\n" });
  assert.equal(r.refused, undefined, r.refused?.body);
  assert.equal(r.status?.status, "Success");
  // What the attach carried back is in order, stdout apart from stderr. Its tail is not required: containerd
  // may close an attach's output as the input ends, before the container answers the last lines (about one
  // run in six here, sometimes before the first answer; the relay waits for the runtime to end every stream).
  assert.ok("got one\ngot two\neof\n".startsWith(r.stdout), `stdout: ${JSON.stringify(r.stdout)}`);
  assert.ok("err one\nerr two\n".startsWith(r.stderr), `stderr: ${JSON.stringify(r.stderr)}`);
  // stdinOnce: the client's end of input ended the container's, so its loop ended and it exited 0 ...
  const exited = await eventually(() => agent!.pods().find((p) => p.pod.metadata.name === `reader-${NODE}`)?.status.containerStatuses?.[0]?.state?.terminated ?? undefined, 30_000, "reader exited");
  assert.equal(exited.exitCode, 0);
  // ... having read every line the client sent: the container's log holds all it wrote.
  const logs = join(root, "logs");
  const file = readdirSync(logs, { recursive: true }).map(String).find((f) => f.includes(`reader-${NODE}`) && f.endsWith(".log"));
  assert.ok(file !== undefined, "the container's log file");
  const lines = readFileSync(join(logs, file), "utf8").split("\n").filter((l) => l !== "").map((l) => l.split(" ").slice(1).join(" "));
  assert.deepEqual(lines.filter((l) => l.startsWith("stdout")), ["stdout F got one", "stdout F got two", "stdout F eof"]);
  assert.deepEqual(lines.filter((l) => l.startsWith("stderr")), ["stderr F err one", "stderr F err two"]);
});

test("containerd: /attach to a container without stdin is refused with the reason", { skip }, async () => {
  const spec = { terminationGracePeriodSeconds: 1, hostNetwork: true, containers: [{ name: "main", image: "busybox", imagePullPolicy: "IfNotPresent", command: ["sleep", "3600"] }] };
  writeFileSync(join(root, "manifests", "plain.json"), JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "plain" }, spec }));
  await eventually(() => (agent!.pods().find((p) => p.pod.metadata.name === `plain-${NODE}`)?.status.containerStatuses?.[0]?.state?.running ? true : undefined), 30_000, "plain running");
  const r = await agentExec(`${server.url.replace("https:", "wss:")}/attach/default/plain-${NODE}/main?input=1&output=1`, client);
  assert.equal(r.refused?.status, 400);
  assert.match(r.refused?.body ?? "", /container main was not started with stdin \(spec\.stdin is false\), leave out -i/);
});
