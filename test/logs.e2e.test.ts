// End to end: `kubectl logs` (kubectl 1.33) against a real `orch server`
// process: the API server's pods/log streams from the node agent's
// /containerLogs, which reads the CRI log files the embedded runtime writes
// (containers are host processes: busybox is not imported). Also a second
// node joined with `orch server --join`, a third run by `orch nodeagent`, and the agent's port refusing
// callers without a client certificate; the component ports `orch server` serves.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../src/controllers/testing.js";
import { httpsGet } from "../src/component/testing/https-get.js";
import { issueClientCert } from "../src/component/pki.js";
import { killMatching, suiteToken } from "./support/suite-processes.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { WebSocket } from "ws";
import { loadKubeconfig } from "../src/client/index.js";
import { startComponent, startJoinedAgent, startOrch, type ComponentProcess, type JoinedAgentProcess, type OrchProcess } from "./support/orch-process.js";

const files = mkdtempSync(join(tmpdir(), "orch-e2e-logs-"));
// A number no other process on the machine uses, so this suite's containers can be found (and ended) by pid.
const TOKEN = suiteToken(800_000);

function pod(name: string, containers: Record<string, string>, extra = ""): string {
  const list = Object.entries(containers).map(([c, script]) => `  - {name: ${c}, image: busybox, command: [sh, -c, ${JSON.stringify(`${script} # ${TOKEN}`)}]}`);
  const path = join(files, `${name}.yaml`);
  writeFileSync(path, `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n  terminationGracePeriodSeconds: 1\n${extra}  containers:\n${list.join("\n")}\n`);
  return path;
}

/** Pod "two"'s containers' logs, one after the other: kubectl reads them in no fixed order (a Go map's). */
const bothContainers = (out: string): boolean => ["one\ntwo\nthree\nfrom-second\n", "from-second\none\ntwo\nthree\n"].includes(out);

describe("kubectl logs against orch server", { skip: kubectlSkipReason() ?? false }, () => {
  let orch: OrchProcess;
  let k: Kubectl;
  let other: JoinedAgentProcess | undefined;
  let third: ComponentProcess | undefined;
  const logs = async (...args: string[]) => k.run(["logs", ...args]);
  const phase = async (name: string) => JSON.parse(await k.ok("get", "pod", name, "-o", "json")) as {
    status: { phase?: string; containerStatuses?: { restartCount: number; state: Record<string, unknown> }[] };
  };

  before(async () => {
    orch = await startOrch("server", ["--node-name=logs-main"], { readyTimeoutMs: 60_000 });
    k = new Kubectl(orch.kubeconfig);
    await k.ok("create", "-f", pod("two", { first: `echo one; echo two; echo three; sleep ${TOKEN}`, second: `echo from-second; sleep ${TOKEN}` }));
    await k.ok("create", "-f", pod("ticker", { main: `i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.2; done` }));
    await k.ok("create", "-f", pod("crasher", { main: "echo run $(date +%s%N); sleep 0.3; exit 3" }));
    await k.ok("create", "-f", pod("done", { main: "echo finished" }, "  restartPolicy: Never\n"));
    await k.ok("create", "deployment", "web", "--image=busybox", "--", "sh", "-c", `echo hello from web; sleep ${TOKEN}`);
    await k.ok("wait", "--for=condition=Ready", "pod/two", "pod/ticker", "--timeout=60s");
    // Ready says the processes started, not that their output has reached the log yet.
    await eventually("both containers' lines logged", async () => bothContainers((await logs("two", "--all-containers")).stdout), 20_000);
  });
  after(async () => {
    await other?.stop();
    await third?.stop();
    await orch?.stop();
    await killMatching(`# ${TOKEN}|sleep ${TOKEN}`);
    rmSync(files, { recursive: true, force: true, maxRetries: 10 });
  });

  test("kubectl logs POD -c, --tail, --timestamps, --since, --limit-bytes", async () => {
    assert.equal((await logs("two", "-c", "first")).stdout, "one\ntwo\nthree\n");
    assert.equal((await logs("two", "-c", "second")).stdout, "from-second\n");
    assert.equal((await logs("two", "-c", "first", "--tail=1")).stdout, "three\n");
    assert.equal((await logs("two", "-c", "first", "--tail=2", "--since=1h")).stdout, "two\nthree\n");
    assert.equal((await logs("two", "-c", "first", "--limit-bytes=6")).stdout, "one\ntw");
    assert.match((await logs("two", "-c", "first", "--timestamps", "--tail=1")).stdout, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z three\n$/);
    // Lines older than --since are left out; the ticker writes one every 0.2 s (wait for 2 s of them).
    await eventually("ten ticks", async () => (await logs("ticker")).stdout.split("\n").length > 10, 20_000);
    const recent = (await logs("ticker", "--since=1s")).stdout.trim().split("\n");
    const all = (await logs("ticker")).stdout.trim().split("\n");
    assert.ok(recent.length >= 1 && recent.length < all.length, `--since=1s gave ${recent.length} of ${all.length} lines`);
  });

  test("pods/log over a WebSocket: binary.k8s.io sends binary messages, base64.binary.k8s.io text ones, then a normal close; another subprotocol is a 400", async () => {
    const cfg = loadKubeconfig(orch.kubeconfig);
    const read = (protocol: string) => new Promise<{ text: string; code: number; binary: boolean[]; chosen: string }>((resolve, reject) => {
      const url = `${cfg.server.replace(/^https/, "wss")}/api/v1/namespaces/default/pods/two/log?container=first`;
      const ws = new WebSocket(url, [protocol], { ...(cfg.ca ? { ca: cfg.ca } : {}), ...(cfg.cert ? { cert: cfg.cert, key: cfg.key } : {}), headers: cfg.token ? { authorization: `Bearer ${cfg.token}` } : {} });
      let text = "";
      const binary: boolean[] = [];
      ws.on("message", (data, isBinary) => {
        binary.push(isBinary);
        text += protocol === "base64.binary.k8s.io" ? Buffer.from(String(data), "base64").toString() : String(data);
      });
      ws.on("close", (code) => resolve({ text, code, binary, chosen: ws.protocol }));
      ws.on("unexpected-response", (_req, res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => reject(new Error(`${res.statusCode} ${body}`)));
      });
      ws.on("error", reject);
    });
    const bin = await read("binary.k8s.io");
    assert.deepEqual([bin.text, bin.code, bin.chosen, bin.binary.every(Boolean)], ["one\ntwo\nthree\n", 1000, "binary.k8s.io", true]);
    const b64 = await read("base64.binary.k8s.io");
    assert.deepEqual([b64.text, b64.code, b64.chosen, b64.binary.some(Boolean)], ["one\ntwo\nthree\n", 1000, "base64.binary.k8s.io", false]);
    await assert.rejects(read("v5.channel.k8s.io"), /^Error: 400 .*none of the offered subprotocols is served/);
  });

  test("a pod with several containers: kubectl defaults to the first, --all-containers reads each; the API asks for one with upstream's message", async () => {
    const r = await logs("two");
    assert.equal(r.stdout, "one\ntwo\nthree\n");
    assert.match(r.stderr, /Defaulted container "first" out of: first, second/);
    const all = (await logs("two", "--all-containers")).stdout;
    assert.ok(bothContainers(all), `--all-containers printed ${JSON.stringify(all)}`);
    const raw = await k.run(["get", "--raw", "/api/v1/namespaces/default/pods/two/log"]);
    assert.notEqual(raw.code, 0);
    assert.match(raw.stderr, /Error from server \(BadRequest\): a container name must be specified for pod two, choose one of: \[first second\]/);
  });

  test("kubectl logs -f sees new lines as they are written; killing kubectl ends the stream in the API server", async () => {
    const f = k.spawn(["logs", "-f", "ticker", "--tail=1"]);
    const first = await eventually("a first line", () => /tick (\d+)\n/.exec(f.output())?.[1], 20_000);
    await eventually("two lines more", () => new RegExp(`tick ${Number(first) + 2}\\n`).test(f.output()), 20_000);
    const metric = async () => {
      const text = await k.ok("get", "--raw", "/metrics");
      return Number(/apiserver_longrunning_requests\{[^}]*resource="pods"[^}]*subresource="log"[^}]*\} (\d+)/.exec(text)?.[1] ?? "0");
    };
    assert.equal(await metric(), 1, "one log stream open");
    f.child.kill("SIGTERM");
    await f.exited;
    await eventually("the stream closed in the API server", async () => (await metric()) === 0, 20_000);
  });

  test("kubectl logs -f of a container that has finished prints its log and returns", async () => {
    await eventually("done finished", async () => (await phase("done")).status.phase === "Succeeded", 30_000);
    const r = await k.run(["logs", "-f", "done"], { timeoutMs: 20_000 });
    assert.deepEqual([r.code, r.stdout], [0, "finished\n"]);
  });

  test("kubectl logs --previous shows the last terminated instance after a crash restart", async () => {
    await eventually("crasher restarted", async () => ((await phase("crasher")).status.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 30_000);
    const r = await logs("crasher", "--previous");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^run \d+\n$/);
    const none = await logs("two", "-c", "first", "--previous");
    assert.match(none.stderr, /Error from server \(BadRequest\): previous terminated container "first" in pod "two" not found/);
  });

  test("kubectl logs deployment/NAME reads one of its pods", async () => {
    await k.ok("rollout", "status", "deployment/web", "--timeout=60s");
    const r = await eventually("the web log", async () => {
      const out = await logs("deployment/web");
      return out.stdout.includes("hello from web") ? out : undefined;
    }, 20_000);
    assert.equal(r.stdout, "hello from web\n");
  });

  test("bad input: unknown pod 404, bad tailLines 400, negative tailLines 422, unknown container 400, waiting container 400, unscheduled pod empty", async () => {
    // kubectl reads the pod first; the log endpoint itself answers 404 too.
    assert.match((await logs("nopod")).stderr, /\(NotFound\): pods "nopod" not found/);
    assert.match((await k.run(["get", "--raw", "/api/v1/namespaces/default/pods/nopod/log"])).stderr, /Error from server \(NotFound\): pods "nopod" not found/);
    const raw = (q: string) => k.run(["get", "--raw", `/api/v1/namespaces/default/pods/two/log?${q}`]);
    assert.match((await raw("container=first&tailLines=abc")).stderr, /Error from server \(BadRequest\): strconv\.ParseInt: parsing "abc": invalid syntax/);
    assert.match((await raw("container=first&tailLines=-1")).stderr, /PodLogOptions "two" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0/);
    assert.match((await raw("container=nope")).stderr, /Error from server \(BadRequest\): container nope is not valid for pod two/);
    // A container held back by a missing ConfigMap waits with CreateContainerConfigError; the agent says so.
    const held = pod("held", { main: "echo never" });
    writeFileSync(held, readFileSync(held, "utf8").replace("image: busybox,", "image: busybox, envFrom: [{configMapRef: {name: missing}}],"));
    await k.ok("create", "-f", held);
    const waiting = await eventually("held waiting", async () => {
      const r = await logs("held");
      return /is waiting to start/.test(r.stderr) ? r : undefined;
    }, 30_000);
    assert.match(waiting.stderr, /Error from server \(BadRequest\): container "main" in pod "held" is waiting to start: (CreateContainerConfigError|ContainerCreating)/);
    // Not on a node yet: no log (upstream answers 204, kubectl prints nothing).
    await k.ok("create", "-f", pod("unscheduled", { main: "echo never" }, "  schedulerName: nobody\n"));
    const r = await logs("unscheduled");
    assert.deepEqual([r.code, r.stdout], [0, ""]);
  });

  test("the agent's port refuses a caller without a client certificate, serves the API server's, and lets others in as RBAC allows (nodes/proxy, nodes/metrics)", async () => {
    const node = JSON.parse(await k.ok("get", "node", "logs-main", "-o", "json")) as {
      status: { addresses: { type: string; address: string }[]; daemonEndpoints: { kubeletEndpoint: { Port: number } } };
    };
    const port = node.status.daemonEndpoints.kubeletEndpoint.Port;
    assert.ok(port > 0 && port !== 10250, `the Node advertises the port picked (${port})`);
    const ip = node.status.addresses.find((a) => a.type === "InternalIP")!.address;
    const url = `https://${ip}:${port}/containerLogs/default/two/first`;
    assert.equal((await httpsGet(url)).status, 401);
    const clientCert = { cert: readFileSync(join(orch.dataDir, "apiserver-nodeagent-client.crt"), "utf8"), key: readFileSync(join(orch.dataDir, "apiserver-nodeagent-client.key"), "utf8") };
    const ok = await httpsGet(url, { clientCert });
    assert.deepEqual([ok.status, ok.text], [200, "one\ntwo\nthree\n"]);
    const missing = await httpsGet(`https://${ip}:${port}/containerLogs/default/two/nope`, { clientCert });
    assert.deepEqual([missing.status, missing.text], [404, `container "nope" not found in pod "two"`]);

    // Any other certificate of the cluster CA, and any token, is judged by a SubjectAccessReview about nodes/<subresource>.
    const eve = await issueClientCert({ cert: readFileSync(join(orch.dataDir, "ca.crt"), "utf8"), key: readFileSync(join(orch.dataDir, "ca.key"), "utf8") }, "eve");
    const denied = await httpsGet(url, { clientCert: eve });
    assert.deepEqual([denied.status, denied.text], [403, "Forbidden (user=eve, verb=get, resource=nodes, subresource=proxy)\n"]);
    const metricsDenied = await httpsGet(`https://${ip}:${port}/metrics`, { clientCert: eve });
    assert.deepEqual([metricsDenied.status, metricsDenied.text], [403, "Forbidden (user=eve, verb=get, resource=nodes, subresource=metrics)\n"]);
    await k.ok("create", "serviceaccount", "agent-reader");
    const robot = (await k.ok("create", "token", "agent-reader")).trim();
    assert.equal((await httpsGet(url, { token: robot })).status, 403);
    const rbac = "rbac.authorization.orch.io";
    writeFileSync(join(files, "agent-reader.yaml"), [
      `apiVersion: ${rbac}/v1`, "kind: ClusterRole", "metadata:", "  name: agent-reader", "rules:",
      "- apiGroups: [\"\"]", "  resources: [nodes/proxy, nodes/metrics]", "  verbs: [get]", "---",
      `apiVersion: ${rbac}/v1`, "kind: ClusterRoleBinding", "metadata:", "  name: agent-reader",
      "roleRef:", `  apiGroup: ${rbac}`, "  kind: ClusterRole", "  name: agent-reader", "subjects:",
      `- {kind: User, apiGroup: ${rbac}, name: eve}`, "- {kind: ServiceAccount, namespace: default, name: agent-reader}", "",
    ].join("\n"));
    await k.ok("create", "-f", join(files, "agent-reader.yaml"));
    // A refusal is reused for cacheUnauthorizedTTL (30 s by default).
    await eventually("eve may read logs", async () => (await httpsGet(url, { clientCert: eve })).status === 200, 45_000);
    await eventually("the service account may read logs", async () => (await httpsGet(url, { token: robot })).text === "one\ntwo\nthree\n", 15_000);
    assert.equal((await httpsGet(`https://${ip}:${port}/metrics`, { clientCert: eve })).status, 200);
  });

  test("orch server serves the controller manager's, scheduler's and agent's endpoints on their own ports", async () => {
    const token = readFileSync(join(orch.dataDir, "admin.token"), "utf8").trim();
    const urls = Object.fromEntries([...orch.output().matchAll(/(orch-[a-z-]+): serving \/healthz.* on (https:\/\/\S+)/g)].map((m) => [m[1]!, m[2]!]));
    assert.deepEqual(Object.keys(urls).sort(), ["orch-controller-manager", "orch-nodeagent", "orch-scheduler"]);
    const want: Record<string, string> = {
      "orch-controller-manager": "workqueue_adds_total",
      "orch-scheduler": "scheduler_schedule_attempts_total",
      "orch-nodeagent": "nodeagent_running_pods",
    };
    for (const [name, url] of Object.entries(urls)) {
      await eventually(`${name} ready`, async () => (await httpsGet(`${url}/readyz`)).status === 200, 20_000);
      assert.equal((await httpsGet(`${url}/metrics`)).status, 401, `${name}: metrics need credentials`);
      const metrics = await httpsGet(`${url}/metrics`, { token });
      assert.match(metrics.text, new RegExp(`^${want[name]}`, "m"), name);
    }
  });

  test("logs of pods on more nodes: one joined with orch server --join, one run by orch nodeagent; an agent that is gone is a 500", async () => {
    const join_ = ["--join", orch.url, "--token", readFileSync(join(orch.dataDir, "admin.token"), "utf8").trim(), "--certificate-authority", join(orch.dataDir, "ca.crt")];
    const agentDir = join(files, "third");
    mkdirSync(join(agentDir, "manifests"), { recursive: true });
    writeFileSync(join(agentDir, "config.yaml"), `apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeAgentConfiguration\nstaticPodPath: ${join(agentDir, "manifests")}\n`);
    [other, third] = await Promise.all([
      startJoinedAgent(join_, "logs-other", { readyTimeoutMs: 60_000 }),
      startComponent("nodeagent", [
        `--kubeconfig=${orch.kubeconfig}`, `--config=${join(agentDir, "config.yaml")}`, `--root-dir=${join(agentDir, "root")}`, `--pod-logs-dir=${join(agentDir, "logs")}`,
        "--hostname-override=logs-third", "--port=0", "--bind-address=127.0.0.1", "--node-ip=127.0.0.1",
      ], { readyTimeoutMs: 60_000 }),
    ]);
    await k.ok("create", "-f", pod("remote", { main: `echo from the other node; sleep ${TOKEN}` }, "  nodeName: logs-other\n"));
    await k.ok("create", "-f", pod("third", { main: `echo from orch nodeagent; sleep ${TOKEN}` }, "  nodeName: logs-third\n"));
    await k.ok("wait", "--for=condition=Ready", "pod/remote", "pod/third", "--timeout=60s");
    assert.equal((await logs("remote")).stdout, "from the other node\n");
    assert.equal((await logs("third")).stdout, "from orch nodeagent\n");
    await other.stop();
    other = undefined;
    const gone = await logs("remote");
    assert.match(gone.stderr, /Error from server: Get "https:\/\/127\.0\.0\.1:\d+\/containerLogs\/default\/remote\/main": connect ECONNREFUSED/);
  });
});
