// --registry-config on the commands: `orch server` and `orch nodeagent`
// refuse a bad registries file before starting anything (exit 2, the file and
// field named), also when it is found at its default place; `orch images
// pull --registry-config` pulls through a mirror (Debian's docker-registry on
// loopback); `orch images containerd-hosts` writes containerd's hosts.toml.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildBusyboxImage, busyboxSkipReason } from "../../test/support/busybox-image.js";
import { registrySkipReason, startRegistry } from "../../test/support/registry.js";
import { containerdSkipReason, startContainerd } from "../../test/support/containerd.js";

const BIN = fileURLToPath(new URL("../../../bin/orch.js", import.meta.url));

async function orch(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
  return { code, stdout, stderr };
}

const BAD = 'mirrors:\n  docker.io:\n    endpoint: ["ftp://mirror"]\n';
const WHY = /invalid configuration: .*registries\.yaml: mirrors\["docker\.io"\]\.endpoint\[0\]: "ftp:\/\/mirror": the scheme must be http or https, not ftp/;

test("orch server and orch nodeagent: a bad registries file, named or at its default place, exits 2 naming the file and field before anything starts", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-registry-config-"));
  try {
    const file = join(dir, "registries.yaml");
    writeFileSync(file, BAD);
    const data = join(dir, "data");
    mkdirSync(data);
    const named = await orch(["server", "--data-dir", data, "--secure-port", "0", "--registry-config", file]);
    assert.equal(named.code, 2, named.stderr);
    assert.match(named.stderr, new RegExp(`^orch server: ${WHY.source}`, "m"));
    assert.doesNotMatch(named.stderr, /serving/, "nothing started");
    const missing = await orch(["server", "--data-dir", data, "--secure-port", "0", "--registry-config", join(dir, "absent.yaml")]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /absent\.yaml: cannot read the registries file: ENOENT/);
    writeFileSync(join(data, "registries.yaml"), BAD);
    const byDefault = await orch(["server", "--data-dir", data, "--secure-port", "0"]);
    assert.equal(byDefault.code, 2, byDefault.stderr);
    assert.match(byDefault.stderr, new RegExp(`${data}/registries\\.yaml: mirrors`));

    const agent = await orch(["nodeagent", "--port", "0", "--root-dir", join(dir, "root"), "--registry-config", file]);
    assert.equal(agent.code, 2, agent.stderr);
    assert.match(agent.stderr, new RegExp(`^orch nodeagent: ${WHY.source}`, "m"));
    mkdirSync(join(dir, "root2"));
    writeFileSync(join(dir, "root2", "registries.yaml"), "configs:\n  r.example:\n    tls: {ca_file: /nonexistent.pem}\n");
    const agentDefault = await orch(["nodeagent", "--port", "0", "--root-dir", join(dir, "root2")]);
    assert.equal(agentDefault.code, 2, agentDefault.stderr);
    assert.match(agentDefault.stderr, /root2\/registries\.yaml: configs\["r\.example"\]\.tls\.ca_file: cannot read \/nonexistent\.pem/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("orch images containerd-hosts writes hosts.toml per registry; without --registry-config it is refused", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-containerd-hosts-"));
  try {
    writeFileSync(join(dir, "registries.yaml"), 'mirrors:\n  docker.io:\n    endpoint: ["http://127.0.0.1:5000"]\n');
    const r = await orch(["images", "containerd-hosts", join(dir, "certs.d"), "--registry-config", join(dir, "registries.yaml")]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `wrote ${join(dir, "certs.d", "docker.io", "hosts.toml")}\n`);
    assert.match(readFileSync(join(dir, "certs.d", "docker.io", "hosts.toml"), "utf8"), /^server = "https:\/\/registry-1\.docker\.io"\n\n\[host\."http:\/\/127\.0\.0\.1:5000"\]\n {2}capabilities = \["pull", "resolve"\]\n$/m);
    const without = await orch(["images", "containerd-hosts", join(dir, "certs.d")]);
    assert.notEqual(without.code, 0);
    assert.match(without.stderr, /"containerd-hosts" takes one DIR \(containerd's config_path\) and --registry-config FILE/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("orch images pull --registry-config: docker.io/library/busybox comes from the mirror", { skip: registrySkipReason() ?? busyboxSkipReason() ?? false }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-images-mirror-"));
  const registry = await startRegistry();
  try {
    const id = await buildBusyboxImage({ file: join(dir, "busybox.tar") });
    await registry.push(join(dir, "busybox.tar"), "library/busybox", "1.36");
    writeFileSync(join(dir, "registries.yaml"), `mirrors:\n  docker.io:\n    endpoint: ["http://${registry.host}"]\n`);
    const r = await orch(["images", "pull", "busybox:1.36", "--root", join(dir, "runtime"), "--registry-config", join(dir, "registries.yaml")]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `pulled docker.io/library/busybox:1.36 (${id})\n`);
  } finally {
    await registry.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("containerd pulls docker.io/library/busybox from the mirror in the hosts.toml files orch images containerd-hosts wrote", { skip: registrySkipReason() ?? containerdSkipReason() ?? false }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-containerd-mirror-"));
  const registry = await startRegistry();
  try {
    const id = await buildBusyboxImage({ file: join(dir, "busybox.tar"), files: { "mirror.txt": "from the mirror\n" } });
    await registry.push(join(dir, "busybox.tar"), "library/busybox", "mirror-test");
    writeFileSync(join(dir, "registries.yaml"), `mirrors:\n  docker.io:\n    endpoint: ["http://127.0.0.1:1", "http://${registry.host}"]\n`);
    const written = await orch(["images", "containerd-hosts", join(dir, "certs.d"), "--registry-config", join(dir, "registries.yaml")]);
    assert.equal(written.code, 0, written.stderr);
    const containerd = await startContainerd({ cni: false, registryConfigPath: join(dir, "certs.d") });
    try {
      const { imageRef } = await containerd.client.pullImage({ image: { image: "busybox:mirror-test" } });
      assert.equal(imageRef, id);
      const { image } = await containerd.client.imageStatus({ image: { image: "docker.io/library/busybox:mirror-test" } });
      assert.deepEqual(image?.repoTags, ["docker.io/library/busybox:mirror-test"]);
    } finally {
      await containerd.stop();
    }
  } finally {
    await registry.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
