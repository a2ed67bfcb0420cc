// The embedded runtime's running containers: each is launched (launcher.ts)
// under a shim that outlives the runtime, watched until it ends, and its end
// recorded with the status its shim wrote. A restarted runtime re-adopts the
// containers still running (recover) and polls them, since their shims are no
// longer its children. Stopping is SIGTERM, then SIGKILL after the timeout.

import { containerCapabilities } from "./capabilities.js";
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { status as Code } from "@grpc/grpc-js";
import type { ImageStore, StoredImage } from "../images/store.js";
import type { Cgroups } from "./cgroups.js";
import { RuntimeError } from "./errors.js";
import { missingExecutable, procStart } from "./host.js";
import { commandStarted, launch, type Isolation } from "./launcher.js";
import { containerCgroup, type RuntimeLayout } from "./layout.js";
import { nowNs, type ContainerRecord, type RecordStore, type SandboxRecord } from "./records.js";
import { recordedExit } from "./shim.js";
import type { StartLimit } from "./start-limit.js";
import { sysctlRefusal } from "./sysctls.js";

/** How often the runtime looks whether a container it did not start (re-adopted) has ended. */
const ADOPTED_POLL_MS = 250;

interface Running {
  /** Resolves once the container's exit is recorded. */
  exited: Promise<void>;
  oomBefore: number;
}

type ExitStatus = { code: number; at: number } | undefined;

export interface ContainerSupervisorOptions {
  containers: RecordStore<ContainerRecord>;
  sandboxes: RecordStore<SandboxRecord>;
  images: ImageStore;
  cgroups: Cgroups;
  isolation: Isolation;
  layout: RuntimeLayout;
  /** The installed shim (shim.ts). */
  shim: string;
  /** Shared with sandboxes' network setup: pod starts at once, two per core. */
  startLimit: StartLimit;
  log: (message: string) => void;
  /** Host paths hidden from host-root containers. */
  hostRootMasks?: string[];
}


export class ContainerSupervisor {
  readonly #o: ContainerSupervisorOptions;
  readonly #running = new Map<string, Running>();
  /** Launches under way, so close() can wait for them: a launch finishing after close would leave a container behind. */
  readonly #starting = new Map<string, Promise<void>>();
  #closed = false;
  /** Containers whose shim is not our child (re-adopted, or their shim died first), polled for their end. */
  readonly #polled = new Map<string, () => void>();
  #pollTimer: NodeJS.Timeout | undefined;

  constructor(options: ContainerSupervisorOptions) {
    this.#o = options;
  }

  /** How many containers run now. */
  get count(): number {
    return this.#running.size;
  }

  isRunning(id: string): boolean {
    return this.#running.has(id);
  }

  /** Kills every running container (their exit is recorded) and waits for them, or leaves them running; stops polling. */
  async close(stopContainers: boolean): Promise<void> {
    this.#closed = true;
    await Promise.allSettled(this.#starting.values());
    if (stopContainers) await Promise.all([...this.#running.keys()].map((id) => this.kill(id, 0)));
    clearInterval(this.#pollTimer);
    this.#pollTimer = undefined;
  }

  /** Launches a created container in its ready sandbox; a failed launch records it exited (StartError) and throws. */
  async start(c: ContainerRecord, sandbox: SandboxRecord, image: StoredImage | undefined): Promise<void> {
    if (this.#closed) throw new RuntimeError(Code.UNAVAILABLE, "the runtime is closing");
    if (this.#starting.has(c.id)) throw new RuntimeError(Code.FAILED_PRECONDITION, `container ${c.id} is already being started`);
    const launch = this.#start(c, sandbox, image);
    this.#starting.set(c.id, launch);
    try {
      await launch;
    } finally {
      this.#starting.delete(c.id);
    }
  }

  /** SIGTERM, then SIGKILL after `timeoutSeconds` (at once for 0); resolves when the container has exited. */
  async kill(id: string, timeoutSeconds: number): Promise<void> {
    const running = this.#running.get(id);
    const c = this.#o.containers.get(id);
    if (running === undefined || c === undefined || c.state !== "CONTAINER_RUNNING") return;
    const signal = (sig: NodeJS.Signals): void => {
      try {
        // Namespaced: the PID namespace's init (killing it ends the namespace); otherwise the process group.
        process.kill(this.#o.isolation.namespaces ? c.pid : -c.pid, sig);
      } catch {
        // already gone
      }
    };
    if (timeoutSeconds > 0) {
      signal("SIGTERM");
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([running.exited.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeoutSeconds * 1000)))]);
      clearTimeout(timer);
      if (!timedOut) return;
    }
    signal("SIGKILL");
    // Shims are unref'd children (or not children at all, once re-adopted): hold the process up until the exit is seen.
    const hold = setInterval(() => {}, 60_000);
    await running.exited;
    clearInterval(hold);
  }

  /**
   * After a restart: containers whose shim or command still runs (PID and
   * start time as recorded, so a recycled PID is never taken for them) are
   * re-adopted, running on with their IDs, logs and cgroups; the others ended
   * while no runtime ran and are recorded exited with the status their shim
   * wrote (or Unknown). Nothing is killed: sandboxes and their networks stay.
   */
  recover(): void {
    const { containers, sandboxes, cgroups, layout } = this.#o;
    let adopted = 0;
    let ended = 0;
    for (const c of containers.values()) {
      if (c.state !== "CONTAINER_RUNNING") continue;
      const sandbox = sandboxes.get(c.podSandboxId);
      const cgroup = sandbox === undefined ? "" : containerCgroup(sandbox, c);
      // OOM kills counted before now (a child of the container killed while it ran on) are not its end's.
      const running: Running = { exited: Promise.resolve(), oomBefore: cgroup === "" ? 0 : cgroups.usage(cgroup).oomKills ?? 0 };
      if (this.#alive(c) && recordedExit(layout.containerDir(c.id)) === undefined) {
        running.exited = this.#poll(c).then((status) => this.#exited(c.id, status, cgroup, running));
        this.#running.set(c.id, running);
        adopted++;
      } else {
        this.#exited(c.id, recordedExit(layout.containerDir(c.id)), cgroup, running);
        ended++;
      }
    }
    if (adopted + ended > 0) this.#o.log(`embedded runtime: re-adopted ${adopted} running containers; ${ended} ended while no runtime ran`);
  }

  async #start(c: ContainerRecord, sandbox: SandboxRecord, image: StoredImage | undefined): Promise<void> {
    const { cgroups, layout, images } = this.#o;
    const cgroup = containerCgroup(sandbox, c);
    const notes = [...c.notes];
    if (cgroups.version !== undefined) {
      for (const n of cgroups.create(cgroup, c.resources)) notes.push(`limit not set: ${n}`);
    } else if (c.resources !== null && (c.resources.memoryLimitInBytes > 0 || c.resources.cpuQuota > 0)) {
      notes.push(`limits not applied: ${cgroups.unavailable}`);
    }
    if (c.logPath !== "") {
      // The file exists once StartContainer returns, as with containerd; the shim appends to it.
      mkdirSync(dirname(c.logPath), { recursive: true });
      appendFileSync(c.logPath, "");
    }
    const sandboxDir = layout.sandboxDir(sandbox.id);
    const containerDir = layout.containerDir(c.id);
    // Fail the start, as runc does, when the command is nowhere to be found (a volume may bring it: not checked then).
    const argv0 = c.process.argv[0]!;
    const fromVolume = (c.config.mounts ?? []).some((m) => argv0.startsWith(`${m.containerPath.replace(/\/+$/, "")}/`));
    const missing = fromVolume ? undefined : missingExecutable(image === undefined ? "/" : images.rootfs(image.id), argv0, c.process.env.find((e) => e.startsWith("PATH="))?.slice(5) ?? "");
    let launched;
    try {
      if (missing !== undefined) throw new Error(missing);
      const sysctls = sandbox.config.linux?.sysctls ?? {};
      const refused = Object.keys(sysctls).length === 0 ? undefined
        : !this.#o.isolation.namespaces ? "sysctls need namespaces, which this runtime runs without" : sysctlRefusal(sysctls, sandbox.netns === "");
      if (refused !== undefined) throw new Error(refused);
      const pidTarget = this.#pidTarget(c);
      // A container of a pod already under way goes before sandboxes of pods not yet begun.
      launched = await this.#o.startLimit.run(() => launch({
        dir: containerDir,
        shim: this.#o.shim,
        logPath: c.logPath,
        ...(c.seccomp ? { seccomp: { filterFile: join(containerDir, "seccomp.bpf") } } : {}),
        noNewPrivs: c.config.linux?.securityContext?.noNewPrivs ?? false,
        imageRoot: image === undefined ? undefined : images.rootfs(image.id),
        argv: c.process.argv,
        env: c.process.env,
        workingDir: c.process.cwd,
        ...(c.process.uid !== undefined ? { uid: c.process.uid, gid: c.process.gid ?? 0 } : {}),
        hostname: sandbox.hostname,
        mounts: (c.config.mounts ?? []).filter((m) => m.hostPath !== "").map((m) => ({ hostPath: m.hostPath, containerPath: m.containerPath, readonly: m.readonly })),
        etcFiles: { hosts: join(sandboxDir, "hosts"), "resolv.conf": join(sandboxDir, "resolv.conf"), hostname: join(sandboxDir, "hostname") },
        cgroupProcs: cgroups.procsFiles(cgroup),
        privileged: c.config.linux?.securityContext?.privileged ?? false,
        // Unprivileged: containerd's default set changed by securityContext.capabilities; privileged keeps all.
        ...(c.config.linux?.securityContext?.privileged ? {} : { capabilities: containerCapabilities(c.config.linux?.securityContext?.capabilities) }),
        devices: (c.config.devices ?? []).map((d) => ({ hostPath: d.hostPath, containerPath: d.containerPath })),
        readonlyRoot: c.config.linux?.securityContext?.readonlyRootfs ?? false,
        netns: sandbox.netns,
        sysctls,
        ...(pidTarget !== undefined ? { pidTarget } : {}),
        isolation: this.#o.isolation,
        stdio: { stdin: c.config.stdin, stdinOnce: c.config.stdinOnce, tty: c.config.tty },
        ...(image === undefined ? { hostRootMasks: this.#o.hostRootMasks ?? [] } : {}),
      }), { first: true });
    } catch (err) {
      cgroups.remove(cgroup);
      const message = `failed to start container ${c.id}: ${(err as Error).message}`;
      this.#o.containers.save({ ...c, state: "CONTAINER_EXITED", finishedAt: nowNs(), exitCode: 128, reason: "StartError", message });
      throw new RuntimeError(Code.UNKNOWN, message);
    }
    const { exited, pid, shimPid } = launched;
    const running: Running = { exited: Promise.resolve(), oomBefore: cgroups.usage(cgroup).oomKills ?? 0 };
    const record = { ...c, state: "CONTAINER_RUNNING" as const, startedAt: nowNs(), pid, pidStart: procStart(pid), shimPid, shimStart: procStart(shimPid), message: notes.join("; "), notes };
    running.exited = exited.then(async ({ code }) => {
      // The shim's status is the container's; a shim killed before recording one leaves the container to be polled.
      const recorded = recordedExit(containerDir);
      const status = recorded ?? (code !== null ? { code, at: nowNs() } : await this.#poll(record));
      this.#exited(c.id, status, cgroup, running);
    });
    this.#running.set(c.id, running);
    this.#o.containers.save(record);
    await commandStarted(pid);
  }

  /** The host PID whose PID namespace `c` joins (TARGET mode): its target must be running then. */
  #pidTarget(c: ContainerRecord): number | undefined {
    const options = c.config.linux?.securityContext?.namespaceOptions;
    if (options?.pid !== "TARGET" || !this.#o.isolation.namespaces) return undefined;
    const target = this.#o.containers.get(options.targetId);
    if (target?.state !== "CONTAINER_RUNNING" || target.pid === 0) throw new Error(`target container ${options.targetId} is not running`);
    return target.pid;
  }

  /** Records a container's end: its status as the shim recorded it, or unknown (exit code 255, reason Unknown) when it left none. */
  #exited(id: string, status: ExitStatus, cgroup: string, running: Pick<Running, "oomBefore">): void {
    const { containers, cgroups } = this.#o;
    this.#running.delete(id);
    const c = containers.get(id);
    // "": a container whose sandbox record is gone has no cgroup path to read.
    const oom = cgroup !== "" && (cgroups.usage(cgroup).oomKills ?? 0) > running.oomBefore;
    if (cgroup !== "") cgroups.remove(cgroup);
    if (c === undefined) return;
    const exitCode = status?.code ?? 255;
    const reason = status === undefined ? "Unknown" : oom ? "OOMKilled" : exitCode === 0 ? "Completed" : "Error";
    const message = status === undefined ? "the container ended without its shim recording an exit status" : c.message;
    containers.save({ ...c, state: "CONTAINER_EXITED", finishedAt: status?.at ?? nowNs(), exitCode, reason, message, pid: 0, pidStart: "", shimPid: 0, shimStart: "" });
    this.#o.log(`container ${id} (${c.config.metadata?.name}) exited with ${exitCode} (${reason})`);
  }

  /** Whether the container's shim or its command still runs (the same processes: PID and start time both match). */
  #alive(c: ContainerRecord): boolean {
    return ((c.shimPid ?? 0) > 0 && procStart(c.shimPid!) === c.shimStart) || (c.pid > 0 && procStart(c.pid) === c.pidStart);
  }

  /** Resolves with the container's recorded status once neither its shim nor its command runs (undefined: none recorded). */
  #poll(c: ContainerRecord): Promise<ExitStatus> {
    const dir = this.#o.layout.containerDir(c.id);
    return new Promise((resolve) => {
      this.#polled.set(c.id, () => {
        const recorded = recordedExit(dir);
        if (recorded === undefined && this.#alive(c)) return;
        this.#polled.delete(c.id);
        resolve(recorded);
      });
      this.#pollTimer ??= setInterval(() => {
        for (const check of [...this.#polled.values()]) check();
        if (this.#polled.size === 0) {
          clearInterval(this.#pollTimer);
          this.#pollTimer = undefined;
        }
      }, ADOPTED_POLL_MS).unref();
    });
  }
}
