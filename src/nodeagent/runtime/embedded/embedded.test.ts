// What the embedded runtime does beyond the shared CRI suite: the host-root
// fallback for images it does not hold, the refused pull, seccomp checks,
// volumes, cgroup limits, hostnames, plain processes without namespaces, and
// re-adoption of running containers after the runtime is killed or closed.

import { CAPABILITIES, DEFAULT_CAPABILITIES } from "./capabilities.js";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { CriClient, GrpcStatus, isCriError, type ContainerStatus, type DeepPartial, type ContainerConfig } from "../../cri/index.js";
import { packageRoot } from "../../../component/index.js";
import { importArchive } from "../images/archive.js";
import { buildBusyboxImage, busyboxSkipReason } from "../../../../test/support/busybox-image.js";
import { registrySkipReason, startRegistry } from "../../../../test/support/registry.js";
import { waitFor } from "../../cri/testing/wait.js";
import { startEmbeddedRuntime, type EmbeddedRuntime } from "./index.js";

const skip = busyboxSkipReason() ?? (process.getuid?.() !== 0 ? "namespaces and cgroups need root" : undefined);

interface Harness {
  dir: string;
  runtime: EmbeddedRuntime;
  client: CriClient;
  sandbox: string;
  logs: string;
  run(name: string, config: DeepPartial<ContainerConfig>): Promise<string>;
  exited(id: string): Promise<ContainerStatus>;
  close(): Promise<void>;
}

async function harness(options: { absentImages?: "host-root" | "error"; namespaces?: boolean; root?: string } = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), "orch-embedded-"));
  const runtime = await startEmbeddedRuntime({ root: options.root ?? join(dir, "rt"), ...options });
  const client = new CriClient({ endpoint: runtime.endpoint, timeoutMs: 15_000 });
  await buildBusyboxImage({ file: join(dir, "busybox.tar") });
  await importArchive(runtime.service.images, join(dir, "busybox.tar"));
  const logs = join(dir, "logs");
  const { podSandboxId } = await client.runPodSandbox({ config: { metadata: { name: "web", uid: "u-1", namespace: "default" }, hostname: "web-0", logDirectory: logs } });
  return {
    dir,
    runtime,
    client,
    sandbox: podSandboxId,
    logs,
    async run(name, config) {
      const { containerId } = await client.createContainer({ podSandboxId, config: { metadata: { name }, image: { image: "busybox" }, logPath: `${name}.log`, ...config } });
      await client.startContainer({ containerId });
      return containerId;
    },
    exited: (id) => waitFor(`${id} to exit`, async () => {
      const { status } = await client.containerStatus({ containerId: id });
      return status?.state === "CONTAINER_EXITED" ? status : undefined;
    }),
    async close() {
      // Sandboxes outlive a runtime by design; a test removes its own (and their network namespaces).
      for (const item of (await client.listPodSandbox({})).items) await client.removePodSandbox({ podSandboxId: item.id });
      client.close();
      await runtime.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
    },
  };
}

const log = (h: Harness, name: string): string => (existsSync(join(h.logs, `${name}.log`)) ? readFileSync(join(h.logs, `${name}.log`), "utf8") : "");

describe("embedded runtime", { skip }, () => {
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(async () => {
    await h?.close();
  });

  test("an image not in the store: the pull answers, the command runs on the host root, the status says so", async () => {
    // A registry that refuses connections: the pull fails at once, the fallback answers.
    const { imageRef } = await h.client.pullImage({ image: { image: "127.0.0.1:1/never-imported:1" } });
    assert.equal(imageRef, "127.0.0.1:1/never-imported:1");
    const marker = join(h.dir, "host-file");
    writeFileSync(marker, "from the host\n");
    const id = await h.run("hostroot", { image: { image: imageRef }, command: ["/bin/cat", marker] });
    const status = await h.exited(id);
    assert.equal(status.exitCode, 0);
    assert.match(status.message, /not in the embedded runtime's image store: the command runs on the host's root file system/);
    assert.equal(status.imageId, "");
    const verbose = await h.client.containerStatus({ containerId: id, verbose: true });
    assert.equal(JSON.parse(verbose.info.info!).rootfs, "host");
    assert.match(log(h, "hostroot"), / stdout F from the host\n/);
  });

  test("an imported image is the container's root: host files are not visible", async () => {
    const id = await h.run("imageroot", { command: ["sh", "-c", `test -e ${JSON.stringify(h.dir)} && echo visible || echo hidden`] });
    await h.exited(id);
    assert.match(log(h, "imageroot"), / stdout F hidden\n/);
  });

  test("the container's hostname is the sandbox's, and the host keeps its own", async () => {
    const id = await h.run("hostname", { command: ["hostname"] });
    await h.exited(id);
    assert.match(log(h, "hostname"), / stdout F web-0\n/);
    assert.equal(hostname(), readFileSync("/proc/sys/kernel/hostname", "utf8").trim());
    assert.notEqual(hostname(), "web-0");
  });

  test("sysctls: namespaced ones are set in the container only; ones that would change the node, or a host-network pod's net.*, fail the start", async () => {
    const hostValue = readFileSync("/proc/sys/kernel/shm_rmid_forced", "utf8").trim();
    const want = hostValue === "1" ? "0" : "1";
    const start = async (name: string, sysctls: Record<string, string>, network: "POD" | "NODE" = "POD") => {
      const { podSandboxId } = await h.client.runPodSandbox({ config: { metadata: { name, uid: `u-${name}`, namespace: "default" }, logDirectory: h.logs, linux: { sysctls, securityContext: { namespaceOptions: { network } } } } });
      const { containerId } = await h.client.createContainer({ podSandboxId, config: { metadata: { name }, image: { image: "busybox" }, logPath: `${name}.log`, command: ["cat", "/proc/sys/kernel/shm_rmid_forced", "/proc/sys/kernel/msgmax"] } });
      try {
        await h.client.startContainer({ containerId });
        return { containerId, error: undefined };
      } catch (err) {
        return { containerId, error: (err as Error).message };
      }
    };
    const ok = await start("sysctl-ok", { "kernel.shm_rmid_forced": want, "kernel/msgmax": "12345" });
    assert.equal(ok.error, undefined);
    assert.equal((await h.exited(ok.containerId)).exitCode, 0);
    assert.match(log(h, "sysctl-ok"), new RegExp(` stdout F ${want}\n.* stdout F 12345\n`, "s"));
    assert.equal(readFileSync("/proc/sys/kernel/shm_rmid_forced", "utf8").trim(), hostValue, "the host keeps its value");
    const node = await start("sysctl-node", { "vm.swappiness": "1" });
    assert.match(node.error ?? "", /sysctl "vm.swappiness" is not namespaced/);
    const hostNet = await start("sysctl-hostnet", { "net.ipv4.ip_forward": "0" }, "NODE");
    assert.match(hostNet.error ?? "", /network sysctl and the pod uses the host's network/);
    assert.equal((await h.client.containerStatus({ containerId: hostNet.containerId })).status?.reason, "StartError");
  });

  test("volumes: a host directory mounted read-only is readable, not writable", async () => {
    const vol = join(h.dir, "vol");
    mkdirSync(vol);
    writeFileSync(join(vol, "config.txt"), "setting=1\n");
    const id = await h.run("volume", {
      command: ["sh", "-c", "cat /etc/app/config.txt; touch /etc/app/new 2>/dev/null && echo wrote || echo read-only"],
      mounts: [{ containerPath: "/etc/app", hostPath: vol, readonly: true }],
    });
    await h.exited(id);
    assert.match(log(h, "volume"), / stdout F setting=1\n.* stdout F read-only\n/s);
    assert.equal(existsSync(join(vol, "new")), false);
  });

  test("capabilities (grep Cap /proc/self/status): containerd's default set; add and drop change it; privileged keeps all", async () => {
    const caps = async (name: string, config: object) => {
      const id = await h.run(name, { command: ["sh", "-c", "grep -E '^Cap(Eff|Bnd)' /proc/self/status"], ...config });
      await h.exited(id);
      const out = log(h, name);
      const eff = /CapEff:\s+([0-9a-f]+)/.exec(out)?.[1];
      const bnd = /CapBnd:\s+([0-9a-f]+)/.exec(out)?.[1];
      assert.ok(eff !== undefined && bnd !== undefined, `${name}: ${out}`);
      return { eff: BigInt(`0x${eff}`), bnd: BigInt(`0x${bnd}`) };
    };
    const mask = (names: string[]) => names.reduce((m, n) => m | (1n << BigInt(CAPABILITIES[n]!)), 0n);
    const def = await caps("caps-default", {});
    assert.equal(def.eff, mask([...DEFAULT_CAPABILITIES]), `containerd's 14: 0x${def.eff.toString(16)}`);
    assert.equal(def.bnd, def.eff);
    const changed = await caps("caps-changed", { linux: { securityContext: { capabilities: { addCapabilities: ["NET_ADMIN", "CAP_SYS_TIME"], dropCapabilities: ["NET_RAW", "MKNOD"] } } } });
    assert.equal(changed.eff, (mask([...DEFAULT_CAPABILITIES, "NET_ADMIN", "SYS_TIME"]) & ~mask(["NET_RAW", "MKNOD"])));
    const minimal = await caps("caps-minimal", { linux: { securityContext: { capabilities: { addCapabilities: ["NET_BIND_SERVICE"], dropCapabilities: ["ALL"] } } } });
    assert.equal(minimal.eff, mask(["NET_BIND_SERVICE"]));
    const priv = await caps("caps-privileged", { linux: { securityContext: { privileged: true } } });
    assert.ok(priv.eff > def.eff && (priv.eff & mask(["SYS_ADMIN"])) !== 0n, "privileged: every capability");
  });

  test("privileged containers see the host's /dev; others a minimal one plus their devices; a read-only root refuses writes", async () => {
    const priv = await h.run("privileged", { command: ["sh", "-c", "ls /dev | wc -l"], linux: { securityContext: { privileged: true } } });
    const plain = await h.run("unprivileged", { command: ["sh", "-c", "ls /dev | wc -l; ls /dev/mydisk"], devices: [{ hostPath: "/dev/zero", containerPath: "/dev/mydisk", permissions: "r" }] });
    await h.exited(priv);
    await h.exited(plain);
    const count = (name: string) => Number(/ stdout F (\d+)\n/.exec(log(h, name))?.[1]);
    assert.ok(count("privileged") > count("unprivileged") + 5, `${count("privileged")} host devices vs ${count("unprivileged")}`);
    assert.match(log(h, "unprivileged"), / stdout F \/dev\/mydisk\n/);
    const ro = await h.run("readonly", { command: ["sh", "-c", "touch /newfile && echo wrote || echo refused; touch /tmp/x 2>/dev/null || echo tmp-refused"], linux: { securityContext: { readonlyRootfs: true } } });
    await h.exited(ro);
    assert.match(log(h, "readonly"), / stdout F refused\n.* stdout F tmp-refused\n/s);
  });

  test("env, working directory and user come from the config over the image", async () => {
    const id = await h.run("identity", {
      command: ["sh", "-c", "echo $GREETING $PATH; pwd; id -u; id -g"],
      envs: [{ key: "GREETING", value: "hello" }],
      workingDir: "/tmp",
      linux: { securityContext: { runAsUser: { value: 1234 }, runAsGroup: { value: 5678 } } },
    });
    await h.exited(id);
    const out = log(h, "identity");
    assert.match(out, / stdout F hello \/usr\/local\/sbin:/);
    assert.match(out, / stdout F \/tmp\n.* stdout F 1234\n.* stdout F 5678\n/s);
  });

  test("seccomp: a missing Localhost profile fails CreateContainer; a valid one is checked and noted; privileged skips it", async () => {
    const missing = join(h.dir, "seccomp", "missing.json");
    await assert.rejects(
      h.client.createContainer({ podSandboxId: h.sandbox, config: { metadata: { name: "sec-missing" }, image: { image: "busybox" }, command: ["true"], linux: { securityContext: { seccomp: { profileType: "Localhost", localhostRef: missing } } } } }),
      (err: unknown) => isCriError(err) && /cannot load seccomp profile/.test((err as Error).message) && /no such file or directory/.test((err as Error).message),
    );
    const bad = join(h.dir, "bad.json");
    writeFileSync(bad, '{"syscalls": []}');
    await assert.rejects(
      h.client.createContainer({ podSandboxId: h.sandbox, config: { metadata: { name: "sec-bad" }, image: { image: "busybox" }, command: ["true"], linux: { securityContext: { seccomp: { profileType: "Localhost", localhostRef: bad } } } } }),
      /has no defaultAction/,
    );
    const good = join(h.dir, "good.json");
    writeFileSync(good, JSON.stringify({ defaultAction: "SCMP_ACT_ALLOW", syscalls: [{ names: ["mkdir"], action: "SCMP_ACT_ERRNO", errnoRet: 1 }] }));
    // Enforced: mkdir is refused inside the container, other calls go through.
    const id = await h.run("sec-good", { command: ["sh", "-c", "mkdir /tmp/denied || exit 3"], linux: { securityContext: { seccomp: { profileType: "Localhost", localhostRef: good } } } });
    assert.equal((await h.exited(id)).exitCode, 3, "mkdir fails under the Localhost profile");
    const unconfined = await h.run("sec-none", { command: ["sh", "-c", "mkdir /tmp/allowed || exit 3"], linux: { securityContext: { seccomp: { profileType: "Unconfined" } } } });
    assert.equal((await h.exited(unconfined)).exitCode, 0, "mkdir works unconfined");
    // With SYS_ADMIN added (not in the default set), RuntimeDefault still keeps root from mounting; Unconfined lets it; without SYS_ADMIN the capability is missing.
    const mount = "mount -t tmpfs scratch /tmp || exit 4";
    const sysAdmin = { capabilities: { addCapabilities: ["SYS_ADMIN"], dropCapabilities: [] } };
    assert.equal((await h.exited(await h.run("sec-rd", { command: ["sh", "-c", mount], linux: { securityContext: { ...sysAdmin, seccomp: { profileType: "RuntimeDefault" } } } }))).exitCode, 4, "RuntimeDefault refuses mount");
    assert.equal((await h.exited(await h.run("sec-rd-off", { command: ["sh", "-c", mount], linux: { securityContext: { ...sysAdmin, seccomp: { profileType: "Unconfined" } } } }))).exitCode, 0, "unconfined root with SYS_ADMIN may mount in its own mount namespace");
    assert.equal((await h.exited(await h.run("sec-no-cap", { command: ["sh", "-c", mount], linux: { securityContext: { seccomp: { profileType: "Unconfined" } } } }))).exitCode, 4, "without SYS_ADMIN (the default set) mount fails");
    const priv = await h.run("sec-priv", { command: ["true"], linux: { securityContext: { privileged: true, seccomp: { profileType: "Localhost", localhostRef: missing } } } });
    assert.equal((await h.exited(priv)).exitCode, 0, "privileged containers are unconfined: the profile is not read");
  });

  test("cgroup limits: memory and CPU are written where the hierarchy is writable", async (t) => {
    if (h.runtime.service.cgroups.version !== "v1") return t.skip(`cgroup v1 not writable here (${h.runtime.service.cgroups.unavailable ?? h.runtime.service.cgroups.version})`);
    const id = await h.run("limited", {
      command: ["sh", "-c", "cat /proc/self/cgroup; sleep 30"],
      // NoSwap as the agent sends it on cgroup v1: memory+swap equal to memory (seed 001, "Swap behavior setting").
      linux: { resources: { memoryLimitInBytes: 64 * 1024 * 1024, memorySwapLimitInBytes: 64 * 1024 * 1024, cpuQuota: 50_000, cpuPeriod: 100_000, cpuShares: 512 } },
    });
    const path = await waitFor("the cgroup line", () => /:memory:(\S+)/.exec(log(h, "limited"))?.[1]);
    assert.equal(readFileSync(join("/sys/fs/cgroup/memory", path, "memory.limit_in_bytes"), "utf8").trim(), String(64 * 1024 * 1024));
    const memsw = join("/sys/fs/cgroup/memory", path, "memory.memsw.limit_in_bytes");
    if (existsSync(memsw)) assert.equal(readFileSync(memsw, "utf8").trim(), String(64 * 1024 * 1024));
    else assert.match((await h.client.containerStatus({ containerId: id })).status!.message, /swap accounting is off/);
    assert.equal(readFileSync(join("/sys/fs/cgroup/cpu", path, "cpu.cfs_quota_us"), "utf8").trim(), "50000");
    assert.equal(readFileSync(join("/sys/fs/cgroup/cpu", path, "cpu.shares"), "utf8").trim(), "512");
    await h.client.updateContainerResources({ containerId: id, linux: { memoryLimitInBytes: 96 * 1024 * 1024 } });
    assert.equal(readFileSync(join("/sys/fs/cgroup/memory", path, "memory.limit_in_bytes"), "utf8").trim(), String(96 * 1024 * 1024));
    await h.client.stopContainer({ containerId: id, timeout: 0 });
    await waitFor("the cgroup to be removed", () => (existsSync(join("/sys/fs/cgroup/memory", path)) ? undefined : true));
  });

  test("networking: host-network sandboxes get the host's address; pod-network ones a namespace that removal deletes", async (t) => {
    const hostNet = await h.client.runPodSandbox({ config: { metadata: { name: "hostnet", uid: "u-hn", namespace: "default" }, linux: { securityContext: { namespaceOptions: { network: "NODE" } } } } });
    const hostStatus = await h.client.podSandboxStatus({ podSandboxId: hostNet.podSandboxId, verbose: true });
    assert.equal(hostStatus.status?.linux?.namespaces?.options?.network, "NODE");
    assert.ok(Object.values(networkInterfaces()).flat().some((a) => a?.address === hostStatus.status?.network?.ip), "the host's own address");
    await h.client.removePodSandbox({ podSandboxId: hostNet.podSandboxId });
    const info = JSON.parse((await h.client.podSandboxStatus({ podSandboxId: h.sandbox, verbose: true })).info.info!) as { netns: string };
    if (info.netns === "") return t.skip("no CNI plugins here: every pod is on the host network");
    const pod = await h.client.runPodSandbox({ config: { metadata: { name: "podnet", uid: "u-pn", namespace: "default" } } });
    const netns = (JSON.parse((await h.client.podSandboxStatus({ podSandboxId: pod.podSandboxId, verbose: true })).info.info!) as { netns: string }).netns;
    assert.ok(existsSync(netns), netns);
    await h.client.stopPodSandbox({ podSandboxId: pod.podSandboxId });
    await h.client.removePodSandbox({ podSandboxId: pod.podSandboxId });
    assert.equal(existsSync(netns), false, "the namespace is gone");
  });

  test("networking: the pods of a runtime whose directory was deleted are unwired by the next runtime on the host", async (t) => {
    const root = mkdtempSync(join(tmpdir(), "orch-embedded-orphan-"));
    const gone = await startEmbeddedRuntime({ root });
    const client = new CriClient({ endpoint: gone.endpoint });
    const { podSandboxId } = await client.runPodSandbox({ config: { metadata: { name: "orphan", uid: "u-orphan", namespace: "default" } } });
    const netns = (JSON.parse((await client.podSandboxStatus({ podSandboxId, verbose: true })).info.info!) as { netns: string }).netns;
    client.close();
    await gone.close();
    rmSync(root, { recursive: true, force: true, maxRetries: 10 }); // a test folder deleted with its sandbox still there
    if (netns === "") return t.skip("no CNI plugins here: every pod is on the host network");
    assert.ok(existsSync(netns));
    const next = await startEmbeddedRuntime({ root: join(h.dir, "next") });
    try {
      await waitFor("the orphan's namespace to go", () => (existsSync(netns) ? undefined : true));
    } finally {
      await next.close();
    }
  });

  test("Status reports the runtime and its network ready, and seccomp as enforced", async () => {
    const s = await h.client.status({ verbose: true });
    const byType = new Map(s.status!.conditions.map((c) => [c.type, c]));
    assert.equal(byType.get("RuntimeReady")?.status, true);
    assert.equal(byType.get("NetworkReady")?.status, true);
    assert.equal(byType.get("SeccompEnforced")?.status, true);
    assert.equal(JSON.parse(s.info.isolation!).namespaces, true);
    assert.deepEqual(await h.client.runtimeConfig({}), { linux: { cgroupDriver: "CGROUPFS" } });
    await h.client.updateRuntimeConfig({ runtimeConfig: { networkConfig: { podCidr: "10.244.1.0/24" } } });
    assert.equal(JSON.parse((await h.client.status({ verbose: true })).info.podCIDR!), "10.244.1.0/24");
  });
});

describe("embedded runtime: choices", { skip }, () => {
  test("absentImages=error: a pull that reaches no registry fails, names the request and says how to import", async () => {
    const h = await harness({ absentImages: "error" });
    try {
      await assert.rejects(h.client.pullImage({ image: { image: "127.0.0.1:1/team/app:1.25" } }), (err: unknown) =>
        isCriError(err, GrpcStatus.UNKNOWN) && /failed to pull image "127.0.0.1:1\/team\/app:1.25": failed to do request: GET http:\/\/127.0.0.1:1\/v2\/team\/app\/manifests\/1.25/.test((err as Error).message) && /orch images import FILE/.test((err as Error).message));
      const { imageRef } = await h.client.pullImage({ image: { image: "busybox" } });
      assert.match(imageRef, /^sha256:[0-9a-f]{64}$/, "an imported image still pulls");
      await assert.rejects(h.client.pullImage({ image: { image: "Not A Reference" } }), (err: unknown) => isCriError(err, GrpcStatus.INVALID_ARGUMENT));
    } finally {
      await h.close();
    }
  });

  test("namespaces=false: containers are plain host processes; exit codes, logs and stop still work", async () => {
    const h = await harness({ namespaces: false });
    try {
      const done = await h.run("plain", { image: { image: "host-only" }, command: ["sh", "-c", "echo $$; exit 5"] });
      assert.equal((await h.exited(done)).exitCode, 5);
      assert.match(log(h, "plain"), / stdout F \d+\n/);
      const sleeper = await h.run("sleeper", { image: { image: "host-only" }, command: ["sh", "-c", "sleep 30"] });
      await h.client.stopContainer({ containerId: sleeper, timeout: 0 });
      assert.equal((await h.exited(sleeper)).exitCode, 137);
    } finally {
      await h.close();
    }
  });
});

describe("embedded runtime: registry pulls", { skip: skip ?? registrySkipReason() }, () => {
  test("PullImage fetches from a registry (Debian docker-registry on loopback): digests checked, tag and digest recorded, the image runs", async () => {
    const registry = await startRegistry();
    const h = await harness({ absentImages: "error" });
    try {
      const file = join(h.dir, "pushed.tar");
      const id = await buildBusyboxImage({ file, files: { "pulled.txt": "from the registry\n" } });
      const digest = await registry.push(file, "team/pulled", "v1");
      const ref = `${registry.host}/team/pulled:v1`;
      assert.equal((await h.client.imageStatus({ image: { image: ref } })).image, null);
      const { imageRef } = await h.client.pullImage({ image: { image: ref } });
      assert.equal(imageRef, id);
      const { image } = await h.client.imageStatus({ image: { image: ref } });
      assert.deepEqual(image?.repoTags, [ref]);
      assert.deepEqual(image?.repoDigests, [`${registry.host}/team/pulled@${digest}`]);
      const c = await h.run("pulled", { image: { image: imageRef }, command: ["cat", "/pulled.txt"] });
      assert.equal((await h.exited(c)).exitCode, 0);
      assert.match(log(h, "pulled"), / stdout F from the registry\n/);
      await assert.rejects(h.client.pullImage({ image: { image: `${registry.host}/team/absent:v1` } }), /404 Not Found/);
    } finally {
      await h.close();
      await registry.stop();
    }
  });
});

describe("embedded runtime: restart", { skip }, () => {
  /**
   * A first runtime in a child process of its own process group starts
   * containers, then the group gets SIGINT (what a terminal's Ctrl-C sends)
   * and SIGKILL: the runtime dies without a word, the shims must not.
   */
  async function crashAfterStarting(dir: string, root: string, containers: Record<string, string>): Promise<{ podSandboxId: string; ids: Record<string, string> }> {
    const script = `
      import { startEmbeddedRuntime } from ${JSON.stringify(join(packageRoot(), "dist/src/nodeagent/runtime/embedded/index.js"))};
      import { CriClient } from ${JSON.stringify(join(packageRoot(), "dist/src/nodeagent/cri/index.js"))};
      const rt = await startEmbeddedRuntime({ root: ${JSON.stringify(root)} });
      const c = new CriClient({ endpoint: rt.endpoint });
      const { podSandboxId } = await c.runPodSandbox({ config: { metadata: { name: "p", uid: "u", namespace: "d" }, logDirectory: ${JSON.stringify(join(dir, "logs"))} } });
      const ids = {};
      for (const [name, script] of Object.entries(${JSON.stringify(containers)})) {
        const { containerId } = await c.createContainer({ podSandboxId, config: { metadata: { name }, image: { image: "none" }, command: ["/bin/sh", "-c", script], logPath: name + ".log" } });
        await c.startContainer({ containerId });
        ids[name] = containerId;
      }
      console.log(JSON.stringify({ podSandboxId, ids }));
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"], detached: true });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    const started = await waitFor("the first runtime to start its containers", () => (out.includes("\n") ? (JSON.parse(out) as { podSandboxId: string; ids: Record<string, string> }) : undefined), 15_000);
    const gone = new Promise((r) => child.once("exit", r));
    process.kill(-child.pid!, "SIGINT");
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // SIGINT was enough
    }
    await gone;
    return started;
  }

  const record = (root: string, id: string) => JSON.parse(readFileSync(join(root, "state", "containers", `${id}.json`), "utf8")) as { pid: number; pidStart: string; shimPid: number };
  // Alive: it exists and is not a zombie; a process that ends between the two reads is not alive.
  const alive = (pid: number) => {
    try {
      return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
    } catch {
      return false;
    }
  };

  test("containers outlive a killed runtime: the next one re-adopts the running ones, logs go on, an exit while it was down keeps its code", async () => {
    const dir = mkdtempSync(join(tmpdir(), "orch-embedded-restart-"));
    const root = join(dir, "rt");
    const logs = join(dir, "logs");
    let runtime: EmbeddedRuntime | undefined;
    let client: CriClient | undefined;
    try {
      const { podSandboxId, ids } = await crashAfterStarting(dir, root, {
        ticker: "i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.1; done",
        ender: "while [ ! -e " + join(dir, "go") + " ]; do sleep 0.05; done; echo bye; exit 3",
      });
      const ticker = record(root, ids["ticker"]!);
      assert.ok(alive(ticker.pid) && alive(ticker.shimPid), "the container and its shim survive the runtime's process group");
      // While no runtime runs: the log keeps growing, and a container ends with its own status.
      const ticks = () => (readFileSync(join(logs, "ticker.log"), "utf8").match(/ stdout F tick \d+\n/g) ?? []).length;
      const before = ticks();
      await waitFor("ticks written while no runtime runs", () => (ticks() >= before + 3 ? true : undefined));
      writeFileSync(join(dir, "go"), "");
      await waitFor("the ender's exit status on disk", () => (existsSync(join(root, "containers", ids["ender"]!, "exit-code")) ? true : undefined));

      runtime = await startEmbeddedRuntime({ root });
      client = new CriClient({ endpoint: runtime.endpoint });
      const { status } = await client.containerStatus({ containerId: ids["ticker"]! });
      assert.equal(status?.state, "CONTAINER_RUNNING", "re-adopted, not restarted");
      assert.equal(record(root, ids["ticker"]!).pid, ticker.pid, "the same process");
      const ended = (await client.containerStatus({ containerId: ids["ender"]! })).status;
      assert.equal(ended?.state, "CONTAINER_EXITED");
      assert.equal(ended?.exitCode, 3);
      assert.equal(ended?.reason, "Error");
      assert.match(readFileSync(join(logs, "ender.log"), "utf8"), / stdout F bye\n/);
      const now = ticks();
      await waitFor("ticks after the restart", () => (ticks() > now ? true : undefined));
      // An adopted container is stopped as any other: its exit is seen without being our child.
      await client.stopContainer({ containerId: ids["ticker"]!, timeout: 0 });
      const stopped = (await client.containerStatus({ containerId: ids["ticker"]! })).status;
      assert.equal(stopped?.state, "CONTAINER_EXITED");
      assert.equal(stopped?.exitCode, 137);
      await waitFor("the ticker's processes to end", () => (!alive(ticker.pid) && !alive(ticker.shimPid) ? true : undefined));
      await client.removePodSandbox({ podSandboxId });
    } finally {
      client?.close();
      await runtime?.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
    }
  });

  test("a recorded PID now used by another process is not adopted (nor signalled); without a recorded status the container is Unknown", async () => {
    const dir = mkdtempSync(join(tmpdir(), "orch-embedded-recycled-"));
    const root = join(dir, "rt");
    const stranger = spawn("sleep", ["300"], { stdio: "ignore" });
    let runtime: EmbeddedRuntime | undefined;
    try {
      const { ids } = await crashAfterStarting(dir, root, { victim: "sleep 300" });
      const file = join(root, "state", "containers", `${ids["victim"]!}.json`);
      const victim = record(root, ids["victim"]!);
      process.kill(victim.shimPid, "SIGKILL");
      process.kill(victim.pid, "SIGKILL");
      await waitFor("the container to end", () => (!alive(victim.pid) ? true : undefined));
      // As if the kernel had given the container's PID to an unrelated process since.
      writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), pid: stranger.pid, shimPid: stranger.pid }));
      runtime = await startEmbeddedRuntime({ root });
      const status = runtime.service.containerStatus({ containerId: ids["victim"]!, verbose: false }).status;
      assert.equal(status?.state, "CONTAINER_EXITED");
      assert.equal(status?.exitCode, 255);
      assert.equal(status?.reason, "Unknown");
      assert.ok(alive(stranger.pid!), "the process now holding the PID was left alone");
    } finally {
      stranger.kill("SIGKILL");
      await runtime?.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
    }
  });

  test("close({ stopContainers: false }) leaves containers running for the next runtime; close() stops them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "orch-embedded-keep-"));
    const root = join(dir, "rt");
    try {
      const first = await startEmbeddedRuntime({ root });
      const client = new CriClient({ endpoint: first.endpoint });
      const { podSandboxId } = await client.runPodSandbox({ config: { metadata: { name: "p", uid: "u", namespace: "d" }, logDirectory: join(dir, "logs") } });
      const { containerId } = await client.createContainer({ podSandboxId, config: { metadata: { name: "s" }, image: { image: "none" }, command: ["sleep", "300"], logPath: "s.log" } });
      await client.startContainer({ containerId });
      client.close();
      const { pid } = record(root, containerId);
      await first.close({ stopContainers: false });
      assert.ok(alive(pid), "still running after the runtime closed");
      const second = await startEmbeddedRuntime({ root });
      assert.equal(second.service.runningContainers, 1);
      assert.equal(second.service.containerStatus({ containerId, verbose: false }).status?.state, "CONTAINER_RUNNING");
      await second.close();
      assert.ok(!alive(pid), "close() stops the containers");
      assert.equal(record(root, containerId).pid, 0);
      const third = await startEmbeddedRuntime({ root });
      await third.service.removePodSandbox({ podSandboxId });
      await third.close();
    } finally {
      rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
    }
  });
});
