// The host-root fallback's limits, against the real embedded runtime (root:
// namespaces and mounts): with a marker, an unmarked pod's pull and create
// fail with a reason naming the marker and the way out; a marked pod runs on
// the host root but cannot read the masked host paths (a data dir with a
// token in it, a credentials file), /proc/kcore or /sys/firmware, while the
// rest of the host stays visible.

import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { CriClient, GrpcStatus, isCriError } from "../../cri/index.js";
import { waitFor } from "../../cri/testing/wait.js";
import { KERNEL_MASKS } from "./host-root.js";
import { startEmbeddedRuntime, type EmbeddedRuntime } from "./index.js";

const skip = process.getuid?.() !== 0 ? "mount namespaces need root" : undefined;
const MARKER = "orch.io/host-root";
const ABSENT = "127.0.0.1:1/never-imported:1";

describe("embedded runtime: host-root fallback opt-in and masks", { skip }, () => {
  let dir: string;
  let runtime: EmbeddedRuntime;
  let client: CriClient;
  let dataDir: string;
  let credentials: string;
  const logs = () => join(dir, "logs");
  const sandbox = async (name: string, marked: boolean) => {
    const config = { metadata: { name, uid: `u-${name}`, namespace: "team" }, hostname: name, logDirectory: logs(), annotations: marked ? { [MARKER]: "true" } : {} };
    const { podSandboxId } = await client.runPodSandbox({ config });
    return { podSandboxId, config };
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "orch-host-root-"));
    dataDir = join(dir, "data");
    mkdirSync(join(dataDir, "pki"), { recursive: true });
    writeFileSync(join(dataDir, "admin.token"), "secret-token\n");
    credentials = join(dir, "agent.kubeconfig");
    writeFileSync(credentials, "client-key-data: secret\n");
    writeFileSync(join(dir, "visible"), "host file\n");
    runtime = await startEmbeddedRuntime({ root: join(dir, "rt"), pullFromRegistries: false, hostRootMarker: MARKER, hostRootMasks: [dataDir, credentials, join(dir, "missing"), join(dataDir, "pki")] });
    client = new CriClient({ endpoint: runtime.endpoint, timeoutMs: 15_000 });
  });
  after(async () => {
    for (const item of (await client.listPodSandbox({})).items) await client.removePodSandbox({ podSandboxId: item.id });
    client.close();
    await runtime?.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
  });

  test("an unmarked pod: the pull and the create fail, naming the marker and how to import", async () => {
    const { podSandboxId, config } = await sandbox("plain", false);
    const reason = /is not marked for the host-root fallback \(annotation orch\.io\/host-root: "true"\); import the image with "orch images import FILE"/;
    await assert.rejects(client.pullImage({ image: { image: ABSENT }, sandboxConfig: config as never }), (err: unknown) =>
      isCriError(err, GrpcStatus.FAILED_PRECONDITION) && reason.test((err as Error).message) && /pod team\/plain/.test((err as Error).message));
    await assert.rejects(client.createContainer({ podSandboxId, config: { metadata: { name: "c" }, image: { image: ABSENT }, command: ["/bin/true"] } }), (err: unknown) =>
      isCriError(err, GrpcStatus.FAILED_PRECONDITION) && reason.test((err as Error).message));
  });

  test("a marked pod runs on the host root, without the masked paths", async () => {
    const { podSandboxId, config } = await sandbox("marked", true);
    const { imageRef } = await client.pullImage({ image: { image: ABSENT }, sandboxConfig: config as never });
    assert.equal(imageRef, ABSENT);
    const procFiles = KERNEL_MASKS.filter((p) => p.startsWith("/proc/") && existsSync(p) && !statSync(p).isDirectory());
    const script = [
      `cat ${join(dir, "visible")}`,
      `echo "token:[$(cat ${join(dataDir, "admin.token")} 2>&1)]"`,
      `echo "listing:[$(ls -A ${dataDir})]"`,
      `echo "write:$(touch ${join(dataDir, "x")} 2>/dev/null && echo yes || echo no)"`,
      `echo "credentials:[$(cat ${credentials})]"`,
      `echo "proc:$(for f in ${procFiles.join(" ")}; do wc -c < $f; done | tr '\\n' ' ')"`,
      `echo "firmware:[$(ls -A /sys/firmware 2>&1)]"`,
    ].join("; ");
    const { containerId } = await client.createContainer({ podSandboxId, config: { metadata: { name: "probe" }, image: { image: imageRef }, command: ["/bin/sh", "-c", script], logPath: "probe.log" } });
    await client.startContainer({ containerId });
    const status = await waitFor("the probe to exit", async () => {
      const { status } = await client.containerStatus({ containerId });
      return status?.state === "CONTAINER_EXITED" ? status : undefined;
    });
    const out = existsSync(join(logs(), "probe.log")) ? readFileSync(join(logs(), "probe.log"), "utf8") : "";
    assert.equal(status.exitCode, 0, out);
    assert.match(out, / stdout F host file\n/, "the rest of the host is there");
    assert.match(out, /token:\[cat: .*No such file or directory\]/, out);
    assert.match(out, /listing:\[\]/, out);
    assert.match(out, /write:no/, out);
    assert.match(out, /credentials:\[\]/, out);
    // The /proc masks that exist on this host (/proc/kcore is absent on some kernels), each read as empty.
    assert.match(out, new RegExp(`proc:${procFiles.map(() => "0 ").join("")}\n`), out);
    assert.ok(procFiles.length > 0, "no masked /proc file on this host to check");
    assert.match(out, /firmware:\[\]/, out);
    // (On this host /sys/firmware has entries, so the empty listing is the mask's doing.)
    if (existsSync("/sys/firmware")) assert.ok(readdirSync("/sys/firmware").length > 0, "the host's /sys/firmware is empty: the check above proves nothing here");
    // The host's own files are untouched.
    assert.equal(readFileSync(join(dataDir, "admin.token"), "utf8"), "secret-token\n");
  });
});
