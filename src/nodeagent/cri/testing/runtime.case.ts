// The CRI conformance suite every runtime we support runs (the embedded
// runtime always, containerd where installed): sandboxes, containers, exit
// codes, CRI-format logs, stop with grace, ExecSync, list filters, stats and
// images, all through CriClient as the node agent uses them.

import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, renameSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "node:net";
import { after, before, describe, test, type TestContext } from "node:test";
import { GrpcStatus, isCriError, type CriClient, type DeepPartial, type PodSandboxConfig, type ContainerConfig, type ContainerStatus } from "../index.js";
import { parseLogRecord } from "../log-format.js";
import { waitFor } from "./wait.js";

export interface RuntimeUnderTest {
  client: CriClient;
  /** A busybox image the runtime holds. */
  busybox: string;
  /** Imports an image archive (docker save) into the runtime. */
  importImage(file: string): Promise<void>;
  /** Writes a busybox image archive with an extra file, tagged `tag`. */
  buildImage(file: string, tag: string, files: Record<string, string>): Promise<string>;
  /** A scratch folder (logs, archives). */
  dir: string;
  /** Run sandboxes on the host network (empty hostname): containerd without CNI, the embedded runtime without CNI plugins. */
  hostNetwork: boolean;
  /** PullImage of an imported image answers without a registry (containerd always asks the registry). */
  pullsLocalImages: boolean;
  /** Containers get their own PID namespace (false for the embedded runtime without root). */
  pidNamespace: boolean;
  teardown(): Promise<void>;
}

/** Registers the suite; `setup` starts the runtime (or returns a skip reason). */
export function runtimeConformance(name: string, setup: () => Promise<RuntimeUnderTest | string>): void {
  describe(`CRI conformance: ${name}`, () => {
    let rt: RuntimeUnderTest | undefined;
    let skip: string | undefined;
    let seq = 0;

    before(async () => {
      const r = await setup();
      if (typeof r === "string") skip = r;
      else rt = r;
    });
    after(async () => {
      await rt?.teardown();
    });

    const it = (title: string, body: (rt: RuntimeUnderTest, t: TestContext) => Promise<void>): void => {
      test(title, async (t) => {
        if (rt === undefined) return t.skip(skip ?? "runtime did not start");
        await body(rt, t);
      });
    };

    const sandboxConfig = (rt: RuntimeUnderTest, labels: Record<string, string> = {}, cgroupParent = ""): DeepPartial<PodSandboxConfig> => {
      const n = ++seq;
      return {
        metadata: { name: `pod-${n}`, uid: `uid-${process.pid}-${n}`, namespace: "conformance", attempt: 0 },
        hostname: rt.hostNetwork ? "" : `pod-${n}`,
        logDirectory: join(rt.dir, "logs", `pod-${n}`),
        labels,
        // As the agent sends them: a PID namespace per container (CONTAINER), the pod's network unless on the host's.
        linux: { cgroupParent, securityContext: { namespaceOptions: { network: rt.hostNetwork ? "NODE" : "POD", pid: "CONTAINER", ipc: "POD" } } },
      };
    };

    const runSandbox = async (rt: RuntimeUnderTest, labels: Record<string, string> = {}, cgroupParent = ""): Promise<{ id: string; config: DeepPartial<PodSandboxConfig> }> => {
      const config = sandboxConfig(rt, labels, cgroupParent);
      const { podSandboxId } = await rt.client.runPodSandbox({ config });
      return { id: podSandboxId, config };
    };

    const startContainer = async (rt: RuntimeUnderTest, sandbox: { id: string; config: DeepPartial<PodSandboxConfig> }, name: string, script: string, extra: DeepPartial<ContainerConfig> = {}): Promise<string> => {
      const { containerId } = await rt.client.createContainer({
        podSandboxId: sandbox.id,
        config: {
          metadata: { name },
          image: { image: rt.busybox },
          command: ["sh", "-c", script],
          logPath: `${name}.log`,
          linux: { securityContext: { namespaceOptions: { network: rt.hostNetwork ? "NODE" : "POD", pid: "CONTAINER", ipc: "POD" } } },
          ...extra,
        },
        sandboxConfig: sandbox.config,
      });
      await rt.client.startContainer({ containerId });
      return containerId;
    };

    const exited = (rt: RuntimeUnderTest, id: string, timeoutMs = 10_000): Promise<ContainerStatus> =>
      waitFor(`container ${id} to exit`, async () => {
        const { status } = await rt.client.containerStatus({ containerId: id });
        return status?.state === "CONTAINER_EXITED" ? status : undefined;
      }, timeoutMs);

    /** The command line of PID 1 as the container `id` sees it. */
    const initCommand = async (rt: RuntimeUnderTest, id: string): Promise<string> =>
      (await rt.client.execSync({ containerId: id, cmd: ["cat", "/proc/1/cmdline"], timeout: 10 })).stdout.toString().split("\0").filter(Boolean).join(" ");

    const cleanup = async (rt: RuntimeUnderTest, sandboxId: string): Promise<void> => {
      await rt.client.stopPodSandbox({ podSandboxId: sandboxId });
      await rt.client.removePodSandbox({ podSandboxId: sandboxId });
    };

    it("Version and Status: the runtime is ready", async (rt) => {
      const v = await rt.client.version({ version: "v1" });
      assert.equal(v.runtimeApiVersion, "v1");
      assert.ok(v.runtimeName !== "");
      const s = await rt.client.status({});
      const ready = s.status?.conditions.find((c) => c.type === "RuntimeReady");
      assert.equal(ready?.status, true);
      await rt.client.updateRuntimeConfig({ runtimeConfig: { networkConfig: { podCidr: "10.244.0.0/24" } } });
    });

    it("sandbox lifecycle: run, status, list, stop, remove (stop and remove are idempotent)", async (rt) => {
      const sb = await runSandbox(rt, { suite: "lifecycle" });
      const { status } = await rt.client.podSandboxStatus({ podSandboxId: sb.id });
      assert.equal(status?.state, "SANDBOX_READY");
      assert.equal(status?.metadata?.name, sb.config.metadata?.name);
      assert.deepEqual(status?.labels, { suite: "lifecycle" });
      assert.ok((status?.createdAt ?? 0) > 0);
      const listed = await rt.client.listPodSandbox({ filter: { labelSelector: { suite: "lifecycle" } } });
      assert.deepEqual(listed.items.map((i) => i.id), [sb.id]);
      await rt.client.stopPodSandbox({ podSandboxId: sb.id });
      assert.equal((await rt.client.podSandboxStatus({ podSandboxId: sb.id })).status?.state, "SANDBOX_NOTREADY");
      const notReady = await rt.client.listPodSandbox({ filter: { state: { state: "SANDBOX_NOTREADY" }, labelSelector: { suite: "lifecycle" } } });
      assert.deepEqual(notReady.items.map((i) => i.id), [sb.id]);
      await rt.client.stopPodSandbox({ podSandboxId: sb.id });
      await rt.client.removePodSandbox({ podSandboxId: sb.id });
      await rt.client.removePodSandbox({ podSandboxId: sb.id });
      await assert.rejects(rt.client.podSandboxStatus({ podSandboxId: sb.id }), (err: unknown) => isCriError(err, GrpcStatus.NOT_FOUND));
    });

    it("container lifecycle: create, start, exit code, finished time, remove", async (rt) => {
      const sb = await runSandbox(rt);
      try {
        const id = await startContainer(rt, sb, "exits", "sleep 0.2; exit 3");
        const status = await exited(rt, id);
        assert.equal(status.exitCode, 3);
        assert.equal(status.reason, "Error");
        assert.ok(status.createdAt > 0 && status.startedAt >= status.createdAt && status.finishedAt > status.startedAt, "created, started, finished in order");
        const ok = await startContainer(rt, sb, "succeeds", "true");
        const okStatus = await exited(rt, ok);
        assert.equal(okStatus.exitCode, 0);
        assert.equal(okStatus.reason, "Completed");
        await rt.client.removeContainer({ containerId: id });
        await rt.client.removeContainer({ containerId: id });
        await assert.rejects(rt.client.containerStatus({ containerId: id }), (err: unknown) => isCriError(err, GrpcStatus.NOT_FOUND));
      } finally {
        await cleanup(rt, sb.id);
      }
    });

    it("a command that is not in the image fails StartContainer; the container is exited with StartError", async (rt) => {
      const sb = await runSandbox(rt);
      try {
        const { containerId } = await rt.client.createContainer({
          podSandboxId: sb.id,
          sandboxConfig: sb.config,
          config: { metadata: { name: "missing" }, image: { image: rt.busybox }, command: ["no-such-command-anywhere"], logPath: "missing.log" },
        });
        await assert.rejects(rt.client.startContainer({ containerId }), (err: unknown) => isCriError(err) && /executable file not found in \$PATH/.test((err as Error).message));
        const { status } = await rt.client.containerStatus({ containerId });
        assert.equal(status?.state, "CONTAINER_EXITED");
        assert.equal(status?.reason, "StartError");
        assert.equal(status?.exitCode, 128);
        assert.match(status!.message, /executable file not found in \$PATH/);
      } finally {
        await cleanup(rt, sb.id);
      }
    });

    it("logs are written in the CRI format: timestamp, stream, F/P tag, content", async (rt) => {
      const sb = await runSandbox(rt);
      try {
        const id = await startContainer(rt, sb, "logger", "echo out; echo err >&2; printf 'no newline'");
        const status = await exited(rt, id);
        const file = join(sb.config.logDirectory!, "logger.log");
        assert.equal(status.logPath, file);
        const text = await waitFor("the log to hold three records", async () => {
          const t = existsSync(file) ? readFileSync(file, "utf8") : "";
          return t.split("\n").filter(Boolean).length >= 3 ? t : undefined;
        });
        const records = text.split("\n").filter(Boolean).map((l) => parseLogRecord(l));
        for (const r of records) {
          assert.ok(r !== undefined);
          assert.match(r.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{1,9}(Z|[+-]\d\d:\d\d)$/);
        }
        const byStream = (s: string) => records.filter((r) => r!.stream === s).map((r) => `${r!.partial ? "P" : "F"} ${r!.content}`);
        assert.deepEqual(byStream("stderr"), ["F err"]);
        // Output that ends without a newline stays a partial record (containerd does the same).
        assert.deepEqual(byStream("stdout"), ["F out", "P no newline"]);
      } finally {
        await cleanup(rt, sb.id);
      }
    });

    it("StopContainer: SIGTERM is honoured within the grace period", async (rt) => {
      const sb = await runSandbox(rt);
      try {
        const id = await startContainer(rt, sb, "graceful", "trap 'echo got-term; exit 0' TERM; echo ready; while :; do sleep 0.1; done");
        await waitFor("the trap to be set", async () => (readFileSync(join(sb.config.logDirectory!, "graceful.log"), "utf8").includes("ready") ? true : undefined));
        const started = Date.now();
        await rt.client.stopContainer({ containerId: id, timeout: 20 });
        assert.ok(Date.now() - started < 5000, "stopped well before the grace period ended");
        const status = await exited(rt, id);
        assert.equal(status.exitCode, 0);
        await waitFor("the trap's output", async () => (readFileSync(join(sb.config.logDirectory!, "graceful.log"), "utf8").includes("got-term") ? true : undefined));
      } finally {
        await cleanup(rt, sb.id);
      }
    });

    it("StopContainer: SIGKILL after the timeout when SIGTERM is ignored", async (rt) => {
      const sb = await runSandbox(rt);
      try {
        const id = await startContainer(rt, sb, "stubborn", "trap '' TERM; echo ready; while :; do sleep 0.1; done");
        await waitFor("the trap to be set", async () => (readFileSync(join(sb.config.logDirectory!, "stubborn.log"), "utf8").includes("ready") ? true : undefined));
        const started = Date.now();
        await rt.client.stopContainer({ containerId: id, timeout: 1 });
        const took = Date.now() - started;
        assert.ok(took >= 900 && took < 6000, `stop took ${took} ms, expected about the 1 s timeout`);
        const status = await exited(rt, id);
        assert.equal(status.exitCode, 137);
        await rt.client.stopContainer({ containerId: id, timeout: 1 }); // idempotent
      } finally {
        await cleanup(rt, sb.id);
      }
    });

    it("ExecSync: output, stderr and exit code of a command in a running container", async (rt) => {
      const sb = await runSandbox(rt);
      try {
        const id = await startContainer(rt, sb, "execd", "sleep 30");
        const r = await rt.client.execSync({ containerId: id, cmd: ["sh", "-c", "echo hi; echo oops >&2; exit 4"], timeout: 10 });
        assert.equal(r.stdout.toString(), "hi\n");
        assert.equal(r.stderr.toString(), "oops\n");
        assert.equal(r.exitCode, 4);
        // The command sees the container's PID namespace: its init is the container's command.
        if (rt.pidNamespace) {
          // `sh -c "sleep 30"` becomes sleep by an exec of its own, which a loaded machine may not have run yet.
          await waitFor("PID 1 to be the container's sleep", async () => ((await initCommand(rt, id)) === "sleep 30" ? true : undefined));
        }
        await rt.client.stopContainer({ containerId: id, timeout: 0 });
        await exited(rt, id);
        await assert.rejects(rt.client.execSync({ containerId: id, cmd: ["true"], timeout: 5 }), (err: unknown) => isCriError(err));
      } finally {
        await cleanup(rt, sb.id);
      }
    });

    it("TARGET PID mode (ephemeral containers' targetContainerName): the container sees its target's processes; an unknown target fails", async (rt) => {
      const sb = await runSandbox(rt);
      try {
        const target = await startContainer(rt, sb, "target", "sleep 31");
        const ns = (targetId: string) => ({ linux: { securityContext: { namespaceOptions: { network: rt.hostNetwork ? "NODE" : "POD", pid: "TARGET", ipc: "POD", targetId } } } }) as const;
        const id = await startContainer(rt, sb, "debug", "sleep 32", ns(target));
        if (rt.pidNamespace) {
          // PID 1 of the shared namespace is the target's command; the debug container's own runs beside it.
          await waitFor("PID 1 to be the target's sleep", async () => ((await initCommand(rt, id)) === "sleep 31" ? true : undefined));
          const own = await rt.client.execSync({ containerId: id, cmd: ["sh", "-c", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '"], timeout: 10 });
          assert.match(own.stdout.toString(), /sleep 32/);
        }
        await rt.client.stopContainer({ containerId: id, timeout: 0 });
        assert.ok((await exited(rt, id)).state === "CONTAINER_EXITED");
        await assert.rejects(
          rt.client.createContainer({ podSandboxId: sb.id, sandboxConfig: sb.config, config: { metadata: { name: "orphan" }, image: { image: rt.busybox }, command: ["true"], ...ns("no-such-container") } }),
          (err: unknown) => isCriError(err),
        );
      } finally {
        await cleanup(rt, sb.id);
      }
    });

    it("ListContainers filters by id, sandbox, state and labels", async (rt) => {
      const a = await runSandbox(rt);
      const b = await runSandbox(rt);
      try {
        const running = await startContainer(rt, a, "runs", "sleep 30", { labels: { tier: "web", pod: "a" } });
        const done = await startContainer(rt, a, "done", "true", { labels: { tier: "batch", pod: "a" } });
        const other = await startContainer(rt, b, "other", "sleep 30", { labels: { tier: "web", pod: "b" } });
        await exited(rt, done);
        const ids = async (filter: Parameters<CriClient["listContainers"]>[0]): Promise<string[]> => (await rt.client.listContainers(filter)).containers.map((c) => c.id).sort();
        assert.deepEqual(await ids({ filter: { podSandboxId: a.id } }), [running, done].sort());
        assert.deepEqual(await ids({ filter: { podSandboxId: a.id, state: { state: "CONTAINER_RUNNING" } } }), [running]);
        assert.deepEqual(await ids({ filter: { podSandboxId: a.id, state: { state: "CONTAINER_EXITED" } } }), [done]);
        assert.deepEqual(await ids({ filter: { labelSelector: { tier: "web" } } }), [running, other].sort());
        assert.deepEqual(await ids({ filter: { labelSelector: { tier: "web", pod: "b" } } }), [other]);
        assert.deepEqual(await ids({ filter: { id: other } }), [other]);
        const listed = (await rt.client.listContainers({ filter: { id: running } })).containers[0]!;
        assert.equal(listed.podSandboxId, a.id);
        assert.equal(listed.metadata?.name, "runs");
        assert.equal(listed.state, "CONTAINER_RUNNING");
      } finally {
        await cleanup(rt, a.id);
        await cleanup(rt, b.id);
      }
    });

    it("ContainerStats and PodSandboxStats: CPU and memory of a running container and its pod", async (rt) => {
      const parent = `orch-conformance-${process.pid}`;
      const sb = await runSandbox(rt, {}, `/${parent}`);
      try {
        const id = await startContainer(rt, sb, "busy", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 30");
        const stats = await waitFor("CPU usage", async () => {
          const { stats } = await rt.client.containerStats({ containerId: id });
          return (stats?.cpu?.usageCoreNanoSeconds?.value ?? 0) > 0 ? stats : undefined;
        });
        assert.equal(stats!.attributes?.id, id);
        assert.ok((stats!.memory?.workingSetBytes?.value ?? 0) > 0, "working set reported");
        const list = await rt.client.listContainerStats({ filter: { podSandboxId: sb.id } });
        assert.deepEqual(list.stats.map((s) => s.attributes?.id), [id]);
        // Pod-level stats (containerd needs the sandbox's cgroup parent for them).
        const pod = await waitFor("pod stats", async () => {
          const { stats } = await rt.client.listPodSandboxStats({ filter: { id: sb.id } });
          return stats[0]?.linux?.containers.length === 1 ? stats[0] : undefined;
        });
        assert.equal(pod.attributes?.id, sb.id);
        assert.equal(pod.linux?.containers[0]?.attributes?.id, id);
        assert.ok((pod.linux?.memory?.workingSetBytes?.value ?? 0) > 0, "pod working set");
        if (!rt.hostNetwork) assert.ok((pod.linux?.network?.defaultInterface?.rxBytes?.value ?? -1) >= 0, "pod network counters");
      } finally {
        await cleanup(rt, sb.id);
        // The pod's cgroup parent is the agent's to remove, as upstream's runtimes leave it.
        for (const dir of existsSync("/sys/fs/cgroup") ? readdirSync("/sys/fs/cgroup") : []) {
          try {
            rmdirSync(join("/sys/fs/cgroup", dir, parent));
          } catch {
            // not there in this hierarchy
          }
        }
      }
    });

    it("ReopenContainerLog: output continues in a fresh file after rotation", async (rt) => {
      const sb = await runSandbox(rt);
      try {
        const id = await startContainer(rt, sb, "ticker", "while :; do echo tick; sleep 0.05; done");
        const file = join(sb.config.logDirectory!, "ticker.log");
        await waitFor("a tick", async () => (existsSync(file) && readFileSync(file, "utf8").includes("tick") ? true : undefined));
        renameSync(file, `${file}.1`);
        await rt.client.reopenContainerLog({ containerId: id });
        await waitFor("a tick in the new file", async () => (existsSync(file) && readFileSync(file, "utf8").includes("tick") ? true : undefined));
      } finally {
        await cleanup(rt, sb.id);
      }
    });

    it("pod network: each sandbox has its own IP, and a server in the pod answers there from the host", async (rt, t) => {
      if (rt.hostNetwork) return t.skip("this runtime runs pods on the host network here");
      const a = await runSandbox(rt);
      const b = await runSandbox(rt);
      try {
        const ipA = (await rt.client.podSandboxStatus({ podSandboxId: a.id })).status?.network?.ip ?? "";
        const ipB = (await rt.client.podSandboxStatus({ podSandboxId: b.id })).status?.network?.ip ?? "";
        assert.match(ipA, /^\d+\.\d+\.\d+\.\d+$/);
        assert.notEqual(ipA, ipB);
        const id = await startContainer(rt, a, "server", "while true; do echo hello-from-pod | nc -l -p 8080; done");
        const answer = await waitFor("the pod's server", () => new Promise<string | undefined>((resolve) => {
          const socket = connect(8080, ipA);
          let got = "";
          socket.on("data", (d: Buffer) => (got += d.toString()));
          socket.on("error", () => resolve(undefined));
          socket.on("close", () => resolve(got === "" ? undefined : got));
          setTimeout(() => socket.destroy(), 1000);
        }));
        assert.equal(answer, "hello-from-pod\n");
        const seen = await rt.client.execSync({ containerId: id, cmd: ["ip", "-4", "-o", "addr", "show", "eth0"], timeout: 5 });
        assert.match(seen.stdout.toString(), new RegExp(` inet ${ipA.replace(/\./g, "\\.")}/`));
      } finally {
        await cleanup(rt, a.id);
        await cleanup(rt, b.id);
      }
    });

    it("seccomp: a missing Localhost profile fails CreateContainer; RuntimeDefault and a valid Localhost profile run; a Localhost profile is enforced", async (rt) => {
      const sb = await runSandbox(rt);
      try {
        const missing = join(rt.dir, "seccomp", "no-such-profile.json");
        await assert.rejects(
          rt.client.createContainer({ podSandboxId: sb.id, sandboxConfig: sb.config, config: { metadata: { name: "sec-missing" }, image: { image: rt.busybox }, command: ["true"], linux: { securityContext: { seccomp: { profileType: "Localhost", localhostRef: missing } } } } }),
          (err: unknown) => isCriError(err) && /cannot load seccomp profile/.test((err as Error).message),
        );
        const profile = join(rt.dir, `allow-${process.pid}.json`);
        writeFileSync(profile, JSON.stringify({ defaultAction: "SCMP_ACT_ALLOW", syscalls: [] }));
        for (const [name, seccomp] of [["sec-default", { profileType: "RuntimeDefault" }], ["sec-local", { profileType: "Localhost", localhostRef: profile }]] as const) {
          const id = await startContainer(rt, sb, name, "exit 0", { linux: { securityContext: { seccomp, namespaceOptions: { network: rt.hostNetwork ? "NODE" : "POD", pid: "CONTAINER", ipc: "POD" } } } });
          assert.equal((await exited(rt, id)).exitCode, 0, name);
        }
        // Enforced: a profile refusing mkdir makes busybox's mkdir fail inside the container.
        const denyMkdir = join(rt.dir, `deny-mkdir-${process.pid}.json`);
        writeFileSync(denyMkdir, JSON.stringify({ defaultAction: "SCMP_ACT_ALLOW", syscalls: [{ names: ["mkdir", "mkdirat"], action: "SCMP_ACT_ERRNO", errnoRet: 1 }] }));
        const denied = await startContainer(rt, sb, "sec-deny", "mkdir /tmp/denied-dir || exit 3", { linux: { securityContext: { seccomp: { profileType: "Localhost", localhostRef: denyMkdir }, namespaceOptions: { network: rt.hostNetwork ? "NODE" : "POD", pid: "CONTAINER", ipc: "POD" } } } });
        assert.equal((await exited(rt, denied)).exitCode, 3, "mkdir refused by the Localhost profile");
      } finally {
        await cleanup(rt, sb.id);
      }
    });

    it("images: import, list, status by name and ID, the image's files in the container, remove", async (rt) => {
      const n = ++seq;
      const tag = `orch.local/conformance:${process.pid}-${n}`;
      const file = join(rt.dir, `conformance-${n}.tar`);
      const id = await rt.buildImage(file, tag, { "orch-marker": `marker-${n}\n` });
      assert.equal((await rt.client.imageStatus({ image: { image: tag } })).image, null, "absent before the import");
      await rt.importImage(file);
      const listed = await rt.client.listImages({});
      const image = listed.images.find((i) => i.repoTags.includes(tag));
      assert.ok(image !== undefined, `${tag} listed`);
      assert.equal(image.id, id);
      assert.ok(image.size > 0);
      const byId = await rt.client.imageStatus({ image: { image: id } });
      assert.deepEqual(byId.image?.repoTags, [tag]);
      if (rt.pullsLocalImages) {
        const pulled = await rt.client.pullImage({ image: { image: tag } });
        assert.equal(pulled.imageRef, id);
      }
      const sb = await runSandbox(rt);
      try {
        const c = await startContainer(rt, sb, "marker", "cat /orch-marker", { image: { image: tag } });
        await exited(rt, c);
        const log = readFileSync(join(sb.config.logDirectory!, "marker.log"), "utf8");
        assert.match(log, new RegExp(` stdout F marker-${n}\\n`));
      } finally {
        await cleanup(rt, sb.id);
      }
      await rt.client.removeImage({ image: { image: id } });
      assert.equal((await rt.client.imageStatus({ image: { image: tag } })).image, null, "absent after removal");
      await rt.client.removeImage({ image: { image: id } }); // idempotent
      const fs = await rt.client.imageFsInfo({});
      assert.ok(fs.imageFilesystems.length >= 1);
    });
  });
}
