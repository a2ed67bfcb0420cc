// The README's quick start and every file in examples/, as a new user runs
// them: kubectl 1.33 against `orch server` on the embedded runtime, twice.
//
// 1. With no registry reachable (CI reaches none; the images are not
//    imported, so the commands run on the host's root file system).
// 2. With a registry reachable: Debian's docker-registry on loopback stands
//    in for docker.io, named as its mirror in DATA_DIR/registries.yaml (the
//    default place `orch server` reads). The images the files name are
//    pushed there under their exact references (library/node:20-slim: the
//    host's node and its libraries; library/busybox:latest), and every pod
//    must run FROM THE PULLED IMAGE: its imageID is the pushed image's ID, a
//    marker file only the image holds is there, and the server never logs a
//    host-root fallback.
//
// In both, the web example's pods answer on their own addresses and through
// the Service's cluster IP (the proxy runs, under this test's own chain prefix).

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { eventually } from "../src/nodeagent/testing/eventually.js";
import { packageRoot } from "../src/component/package-root.js";
import { normalizeReference } from "../src/nodeagent/runtime/images/reference.js";
import { getText as get } from "./support/http-text.js";
import { Kubectl, kubectlSkipReason } from "./support/kubectl.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";
import { buildBusyboxImage, busyboxSkipReason, packImage } from "./support/busybox-image.js";
import { registrySkipReason, startRegistry, type Registry } from "./support/registry.js";
import { copyWithLibraries } from "./conformance/images.js";

const rootSkip = process.getuid?.() !== 0 ? "needs root (iptables, the embedded runtime's namespaces)" : undefined;
const EXAMPLES = join(packageRoot(), "examples");
const exampleFiles = () => readdirSync(EXAMPLES).filter((f) => f.endsWith(".yaml"));

/** A server as a new user starts it (the default fallback policy; the test helpers otherwise allow every pod), with its own proxy chains. */
function startServer(prefix: string, nodeName: string, dataDir?: string): Promise<OrchProcess> {
  return startOrch("server", [`--node-name=${nodeName}`, `--iptables-chain-prefix=${prefix}`, "--iptables-min-sync-period=0", "--host-root-fallback=marked"], { readyTimeoutMs: 60_000, ...(dataDir ? { dataDir } : {}) });
}

function cleanupChains(prefix: string): void {
  spawnSync(process.execPath, [join(packageRoot(), "bin", "orch.js"), "proxy", "--cleanup", `--iptables-chain-prefix=${prefix}`]);
}

/** The quick start's commands, as the README spells them; leaves the pod `hello` Running. */
async function quickStart(k: Kubectl, nodeName: string): Promise<void> {
  assert.match(await k.ok("get", "nodes"), new RegExp(`^${nodeName}\\s+Ready\\s`, "m"));
  await k.ok("run", "hello", "--image=busybox", "--annotations=orch.io/host-root=true", "--", "sleep", "3600");
  await k.ok("wait", "--for=condition=Ready", "pod/hello", "--timeout=90s");
  assert.equal((await k.ok("get", "pod", "hello", "-o", "jsonpath={.status.phase}")).trim(), "Running");
}

/** Applies every file of examples/ and waits for its Deployments to roll out. */
async function applyExamples(k: Kubectl): Promise<void> {
  const files = exampleFiles();
  assert.ok(files.includes("web.yaml"));
  for (const file of files) {
    await k.ok("apply", "-f", join(EXAMPLES, file));
    const deployments = (await k.ok("get", "-f", join(EXAMPLES, file), "-o", "jsonpath={range .items[?(@.kind==\"Deployment\")]}{.metadata.name} {end}")).trim().split(" ").filter((n) => n !== "");
    for (const name of deployments) await k.ok("rollout", "status", `deployment/${name}`, "--timeout=90s");
  }
}

/** web.yaml: each replica answers on its pod address, and the Service reaches both. */
async function webAnswers(k: Kubectl): Promise<void> {
  const pods = JSON.parse(await k.ok("get", "pods", "-l", "app=web", "-o", "json")).items as { metadata: { name: string }; status: { podIP: string } }[];
  assert.equal(pods.length, 2);
  for (const pod of pods) assert.equal(await get(pod.status.podIP, 8080), `hello from ${pod.metadata.name}`);
  const ip = (await k.ok("get", "service", "web", "-o", "jsonpath={.spec.clusterIP}")).trim();
  await eventually(() => get(ip, 80).catch(() => undefined), 20_000, "the service address to answer");
  // The proxy follows the endpoints: both replicas are in its rules a moment after both are ready.
  const seen = new Set<string>();
  for (const deadline = Date.now() + 20_000; seen.size < 2 && Date.now() < deadline; ) seen.add(await get(ip, 80));
  assert.deepEqual([...seen].sort(), pods.map((p) => `hello from ${p.metadata.name}`).sort());
}

describe("the README's quick start and examples/ on a machine with no registry", { skip: kubectlSkipReason() ?? rootSkip ?? false }, () => {
  const PREFIX = `X${process.pid.toString(36).toUpperCase()}`.slice(0, 7);
  let orch: OrchProcess;
  let k: Kubectl;
  before(async () => {
    orch = await startServer(PREFIX, "examples");
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await orch?.stop();
    cleanupChains(PREFIX);
  });

  test("the quick start's commands: the node, a busybox pod marked for the host root running", async () => {
    await quickStart(k, "examples");
    await k.ok("delete", "pod", "hello", "--wait=false");
  });

  test("every file in examples/ applies and its workloads roll out", () => applyExamples(k));

  test("web.yaml: each replica answers on its pod address, and the Service reaches both", () => webAnswers(k));

  test("the pods ran on the host root: the server logged the fallback it used", () => {
    assert.match(orch.output(), /image docker\.io\/library\/node:20-slim could not be pulled \(.*\): its containers run on the host's root file system/);
  });
});

/** The marker file every pushed image holds at its root, and what it says. */
const MARKER = "orch-example-image";

/**
 * docker.io/library/node:20-slim as the examples need it: the host's node with
 * its libraries (ldd), /etc/passwd, /tmp, and the marker. Written as a
 * docker-save tarball; returns its image ID.
 */
async function buildNodeImage(file: string, work: string): Promise<string> {
  const root = join(work, "node-rootfs");
  for (const d of ["etc", "tmp", "proc", "sys", "dev", "root"]) mkdirSync(join(root, d), { recursive: true });
  const node = realpathSync(process.execPath);
  copyWithLibraries(root, [node]);
  writeFileSync(join(root, "etc", "passwd"), "root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n");
  writeFileSync(join(root, "etc", "group"), "root:x:0:\nnode:x:1000:\n");
  writeFileSync(join(root, MARKER), "node:20-slim from the mirror\n");
  return packImage(root, { file, tags: ["docker.io/library/node:20-slim"], format: "docker", config: { Cmd: ["node"], Env: [`PATH=${dirname(node)}:/usr/local/bin:/usr/bin:/bin`] } });
}

describe("the README's quick start and examples/ on a machine that reaches a registry (a loopback mirror of docker.io)", { skip: kubectlSkipReason() ?? rootSkip ?? registrySkipReason() ?? busyboxSkipReason() ?? false }, () => {
  const PREFIX = `R${process.pid.toString(36).toUpperCase()}`.slice(0, 7);
  let work: string;
  let registry: Registry;
  let orch: OrchProcess;
  let k: Kubectl;
  /** Pushed images: normalized reference → image ID. */
  const pushed = new Map<string, string>();
  before(async () => {
    work = mkdtempSync(join(tmpdir(), "orch-examples-registry-"));
    registry = await startRegistry();
    const node = join(work, "node.tar");
    pushed.set("docker.io/library/node:20-slim", await buildNodeImage(node, work));
    await registry.push(node, "library/node", "20-slim");
    const busybox = join(work, "busybox.tar");
    pushed.set("docker.io/library/busybox:latest", await buildBusyboxImage({ file: busybox, files: { [MARKER]: "busybox from the mirror\n" } }));
    await registry.push(busybox, "library/busybox", "latest");
    // The server's default registries file: DATA_DIR/registries.yaml.
    const dataDir = join(work, "data");
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, "registries.yaml"), `mirrors:\n  docker.io:\n    endpoint:\n      - "http://${registry.host}"\n`);
    orch = await startServer(PREFIX, "examples-mirror", dataDir);
    k = new Kubectl(orch.kubeconfig);
  });
  after(async () => {
    await orch?.stop();
    cleanupChains(PREFIX);
    await registry?.stop();
    if (work) rmSync(work, { recursive: true, force: true, maxRetries: 10 });
  });

  /** Every container of `pod` runs the image pushed under its reference, and holds that image's marker. */
  async function assertFromPushedImage(pod: string, markerRead: string[], want: string): Promise<void> {
    const p = JSON.parse(await k.ok("get", "pod", pod, "-o", "json")) as { spec: { containers: { image: string }[] }; status: { containerStatuses: { image: string; imageID: string }[] } };
    for (const [i, c] of p.spec.containers.entries()) {
      const id = pushed.get(normalizeReference(c.image));
      assert.ok(id !== undefined, `pod ${pod} runs ${c.image}, which this test does not push to the mirror: push it too`);
      assert.equal(p.status.containerStatuses[i]?.imageID, id, `pod ${pod}: ${c.image} runs from the pulled image`);
    }
    assert.equal(await k.ok("exec", pod, "--", ...markerRead), want);
  }

  test("the quick start's commands: the node, the busybox pod running from busybox pulled through the mirror", async () => {
    await quickStart(k, "examples-mirror");
    await assertFromPushedImage("hello", ["cat", `/${MARKER}`], "busybox from the mirror\n");
    await k.ok("delete", "pod", "hello", "--wait=false");
  });

  test("every file in examples/ applies and its workloads roll out, each pod from its pulled image", async () => {
    await applyExamples(k);
    const pods = (await k.ok("get", "pods", "-o", "jsonpath={range .items[*]}{.metadata.name} {end}")).trim().split(" ").filter((n) => n !== "" && n !== "hello");
    assert.ok(pods.length >= 2);
    for (const pod of pods) {
      const image = (await k.ok("get", "pod", pod, "-o", "jsonpath={.spec.containers[0].image}")).trim();
      // The marker read with a program the image has: node for node images, cat for busybox.
      const read = image.startsWith("node") ? ["node", "-e", `process.stdout.write(require("fs").readFileSync("/${MARKER}", "utf8"))`] : ["cat", `/${MARKER}`];
      await assertFromPushedImage(pod, read, image.startsWith("node") ? "node:20-slim from the mirror\n" : "busybox from the mirror\n");
    }
  });

  test("web.yaml: each replica answers on its pod address, and the Service reaches both", () => webAnswers(k));

  test("no pod fell back to the host root: the server logged no fallback and no failed pull", () => {
    assert.doesNotMatch(orch.output(), /could not be pulled|run on the host's root file system/);
    assert.doesNotMatch(orch.output(), /pulling \S+: (mirror|registry) \S+ failed/);
  });
});
