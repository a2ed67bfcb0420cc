// End to end: `kubectl port-forward` of kubectl 1.27 (SPDY/3.1 upgrade) and
// 1.33 (SPDY tunnelled in a WebSocket, subprotocol SPDY/3.1+portforward.k8s.io)
// against a real `orch server`, on the embedded runtime and on a private
// containerd: pods/portforward through the API server to the node agent's
// /portForward (src/nodeagent/exec/port-forward.ts), the local port kubectl
// prints answering HTTP from busybox's httpd in the pod, also from one that
// listens only on the pod's 127.0.0.1 (the agent dials inside the pod's
// network namespace, as upstream's runtimes do).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { get } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NODE_RUNTIMES, runtimeSkipReason, startOrchOn, type OrchOnRuntime } from "./support/orch-on-runtime.js";
import { killMatching, suiteToken } from "./support/suite-processes.js";
import { Kubectl, kubectlPath, kubectlSkipReason } from "./support/kubectl.js";
import type { OrchProcess } from "./support/orch-process.js";

const files = mkdtempSync(join(tmpdir(), "orch-e2e-pf-"));
const TOKEN = suiteToken(720_000);
const VERSIONS = ["1.27", "1.33"] as const;
const skip = kubectlSkipReason() ?? (VERSIONS.some((v) => kubectlPath(v) === undefined) ? "kubectl.1.27 or kubectl.1.33 is not installed" : false);

/** GET http://HOST:PORT/ with a fresh connection: the status and body, or the error's code. */
function httpGet(port: number, host = "127.0.0.1"): Promise<{ status?: number; body?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = get({ host, port, path: "/", agent: false, timeout: 10_000 }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
      res.on("error", (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    });
    req.on("timeout", () => req.destroy(Object.assign(new Error("timeout"), { code: "ETIMEDOUT" })));
    req.on("error", (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
  });
}

interface Forward {
  /** Local port by remote port, as kubectl printed them. */
  ports: Map<number, number>;
  output(): string;
  stop(): Promise<void>;
  running(): boolean;
}

/** Starts `kubectl port-forward TARGET SPECS...` and waits for every "Forwarding from 127.0.0.1:L -> R" line. */
async function portForward(k: Kubectl, target: string, remotes: number[]): Promise<Forward> {
  const p = k.spawn(["port-forward", target, ...remotes.map((r) => `:${r}`), "-v=6"]);
  let exited = false;
  void p.exited.then(() => (exited = true));
  const ports = new Map<number, number>();
  const deadline = Date.now() + 20_000;
  while (ports.size < remotes.length) {
    for (const m of p.output().matchAll(/Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)/g)) ports.set(Number(m[2]), Number(m[1]));
    if (exited || Date.now() > deadline) throw new Error(`kubectl port-forward ${target} did not forward ${remotes.join(",")}:\n${p.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    ports,
    output: p.output,
    running: () => !exited,
    async stop() {
      p.child.kill("SIGTERM");
      await p.exited;
    },
  };
}

for (const runtime of NODE_RUNTIMES) describe(`kubectl port-forward (${runtime} runtime)`, { skip: skip || runtimeSkipReason(runtime) }, () => {
  let orch: OrchProcess;
  let server: OrchOnRuntime | undefined;

  before(async () => {
    server = await startOrchOn(runtime, ["--node-name=pf-main"]);
    orch = server.orch;
    const k = new Kubectl(orch.kubeconfig);
    const path = join(files, "web.yaml");
    writeFileSync(path, `apiVersion: v1\nkind: Pod\nmetadata: {name: web, labels: {app: web}}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - name: main\n    image: busybox:1.36\n    ports: [{containerPort: 80, name: http}]\n    command: [sh, -c, "mkdir -p /www /lo && echo hello-pf > /www/index.html && echo hello-lo > /lo/index.html && { busybox httpd -f -p 127.0.0.1:8081 -h /lo & } && exec busybox httpd -f -p 80 -h /www; : ${TOKEN}"]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{port: 8080, targetPort: http}]\n`);
    await k.ok("create", "-f", path);
    await k.ok("wait", "--for=condition=Ready", "pod/web", "--timeout=60s");
  });
  after(async () => {
    await server?.stop();
    await killMatching(String(TOKEN));
  });

  for (const version of VERSIONS) {
    describe(`kubectl ${version}`, () => {
      let k: Kubectl;
      before(() => {
        k = new Kubectl(orch.kubeconfig, version);
      });

      test("pod/web :80, then a GET through the printed local port returns the page; 20 GETs at once all do", async () => {
        const f = await portForward(k, "pod/web", [80]);
        try {
          const local = f.ports.get(80)!;
          assert.deepEqual(await httpGet(local), { status: 200, body: "hello-pf\n" });
          const all = await Promise.all(Array.from({ length: 20 }, () => httpGet(local)));
          assert.deepEqual(all.filter((r) => r.body !== "hello-pf\n"), []);
          assert.match(f.output(), /Handling connection for \d+/);
          // 1.33 asks for the WebSocket tunnel first: no fallback to the SPDY upgrade may have been needed.
          if (version === "1.33") assert.doesNotMatch(f.output(), /fallback to secondary dialer/);
        } finally {
          await f.stop();
        }
      });

      test("a server listening only on the pod's 127.0.0.1 (:8081), unreachable at the pod's IP, answers through the forward; 50 GETs at once", async () => {
        const ip = (await k.ok("get", "pod", "web", "-o", "jsonpath={.status.podIP}")).trim();
        assert.deepEqual(await httpGet(8081, ip), { error: "ECONNREFUSED" }, `the pod's IP ${ip} has nothing on 8081`);
        const f = await portForward(k, "pod/web", [8081]);
        try {
          const local = f.ports.get(8081)!;
          assert.deepEqual(await httpGet(local), { status: 200, body: "hello-lo\n" });
          const all = await Promise.all(Array.from({ length: 50 }, () => httpGet(local)));
          assert.deepEqual(all.filter((r) => r.body !== "hello-lo\n"), []);
        } finally {
          await f.stop();
        }
      });

      test("svc/web :8080 forwards to the pod's port the service's named targetPort resolves to", async () => {
        const f = await portForward(k, "svc/web", [8080]);
        try {
          // kubectl resolves the service's port to the pod's (targetPort `http` → 80) and prints that.
          const local = f.ports.get(80);
          assert.ok(local !== undefined, f.output());
          assert.deepEqual(await httpGet(local), { status: 200, body: "hello-pf\n" });
        } finally {
          await f.stop();
        }
      });

      test("a port nothing listens on: kubectl prints upstream's error; kubectl then ends the forward itself, and a new one works", async () => {
        const f = await portForward(k, "pod/web", [80, 81]);
        try {
          const failed = await httpGet(f.ports.get(81)!);
          assert.equal(failed.status, undefined, "no HTTP answer through a port nothing listens on");
          const deadline = Date.now() + 10_000;
          while (f.running() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
          // containerd's words: localhost inside the sandbox's network namespace, IPv4 then IPv6 (1.33 logs quotes escaped).
          assert.match(f.output(), /an error occurred forwarding \d+ -> 81: error forwarding port 81 to pod ([0-9a-f]{64}), uid : failed to execute portforward in network namespace \\?"\/[^"\\]+\\?": failed to connect to localhost:81 inside namespace \\?"\1\\?", IPv4: dial tcp4 127\.0\.0\.1:81: connect: connection refused IPv6 dial tcp6 \[::1\]:81: /);
          // client-go closes its own connection once an error stream carries a message (1.27 and 1.33 alike; the
          // agent's session would go on: src/nodeagent/exec/port-forward.test.ts), so kubectl exits.
          assert.match(f.output(), /error: lost connection to pod/);
          assert.equal(f.running(), false);
        } finally {
          await f.stop();
        }
        const again = await portForward(k, "pod/web", [80]);
        try {
          assert.deepEqual(await httpGet(again.ports.get(80)!), { status: 200, body: "hello-pf\n" });
        } finally {
          await again.stop();
        }
      });
    });
  }
});

after(() => rmSync(files, { recursive: true, force: true, maxRetries: 10 }));
