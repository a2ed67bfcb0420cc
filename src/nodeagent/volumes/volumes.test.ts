import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, statSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Pod } from "../../api/core/types.js";
import { VolumeError, containerMounts, setupVolumes, teardownPodDir } from "./volumes.js";

const rootDir = mkdtempSync(join(tmpdir(), "nodeagent-volumes-"));
const ctx = {
  rootDir,
  keyDomain: "orch.io",
  objects: {
    configMap: async (_ns: string, name: string) => (name === "cm" ? { data: { "app.conf": "x=1" }, binaryData: { bin: Buffer.from([1, 2]).toString("base64") } } : undefined),
    secret: async (_ns: string, name: string) => (name === "s" ? { token: "abc" } : undefined),
  },
  hostIP: "10.0.0.1",
  podIP: "10.1.0.2",
  nodeAllocatable: { cpu: 2, memory: 1024 },
};

test("volumes: every supported kind lands under <root>/pods/<uid>/volumes and mounts as upstream", async () => {
  const hostDir = join(rootDir, "host", "data");
  const pod: Pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p", namespace: "ns", uid: "uid-1", labels: { a: "1" } },
    spec: {
      volumes: [
        { name: "scratch", emptyDir: {} },
        { name: "conf", configMap: { name: "cm", items: [{ key: "app.conf", path: "etc/app.conf", mode: 0o600 }] } },
        { name: "creds", secret: { secretName: "s", defaultMode: 0o400 } },
        { name: "host", hostPath: { path: hostDir, type: "DirectoryOrCreate" } },
        { name: "info", downwardAPI: { items: [{ path: "name", fieldRef: { fieldPath: "metadata.name" } }, { path: "labels", fieldRef: { fieldPath: "metadata.labels" } }] } },
        { name: "all", projected: { sources: [{ configMap: { name: "cm" } }, { secret: { name: "s" } }, { downwardAPI: { items: [{ path: "ns", fieldRef: { fieldPath: "metadata.namespace" } }] } }] } },
      ],
      containers: [{ name: "c", volumeMounts: [{ name: "scratch", mountPath: "/tmp/s", subPath: "sub" }, { name: "conf", mountPath: "/etc/conf" }, { name: "host", mountPath: "/data" }] }],
    },
  };
  const paths = await setupVolumes(pod, ctx);
  const base = join(rootDir, "pods", "uid-1", "volumes");
  assert.equal(paths.get("scratch"), join(base, "orch.io~empty-dir", "scratch"));
  assert.equal(statSync(paths.get("scratch")!).mode & 0o777, 0o777);
  assert.equal(readFileSync(join(paths.get("conf")!, "etc/app.conf"), "utf8"), "x=1");
  assert.equal(statSync(join(paths.get("conf")!, "etc/app.conf")).mode & 0o777, 0o600);
  assert.equal(readFileSync(join(paths.get("creds")!, "token"), "utf8"), "abc");
  assert.equal(statSync(join(paths.get("creds")!, "token")).mode & 0o777, 0o400);
  assert.ok(statSync(hostDir).isDirectory());
  assert.equal(readFileSync(join(paths.get("info")!, "name"), "utf8"), "p");
  assert.equal(readFileSync(join(paths.get("info")!, "labels"), "utf8"), 'a="1"');
  assert.deepEqual(["app.conf", "bin", "token", "ns"].map((f) => existsSync(join(paths.get("all")!, f))), [true, true, true, true]);
  const mounts = containerMounts(pod, pod.spec!.containers![0]!, paths);
  assert.deepEqual(mounts.map((m) => [m.containerPath, m.hostPath, m.readonly]), [
    ["/tmp/s", join(paths.get("scratch")!, "sub"), false],
    ["/etc/conf", paths.get("conf"), true],
    ["/data", hostDir, false],
  ]);
  teardownPodDir(rootDir, "uid-1");
  assert.equal(existsSync(join(rootDir, "pods", "uid-1")), false);
});

test("volumes: a missing ConfigMap fails unless optional; a hostPath of the wrong type fails", async () => {
  const pod = (volumes: object[]): Pod => ({ apiVersion: "v1", kind: "Pod", metadata: { name: "p", uid: "uid-2" }, spec: { volumes: volumes as never, containers: [] } });
  await assert.rejects(setupVolumes(pod([{ name: "v", configMap: { name: "absent" } }]), ctx), (e: unknown) => e instanceof VolumeError && /configmap "absent" not found/.test((e as Error).message));
  await setupVolumes(pod([{ name: "v", configMap: { name: "absent", optional: true } }]), ctx);
  await assert.rejects(setupVolumes(pod([{ name: "v", hostPath: { path: "/proc/self/status", type: "Directory" } }]), ctx), /is not a directory/);
});

test("volumes: a key removed from a ConfigMap, or an optional Secret deleted, leaves the volume on the next sync", async () => {
  let data: Record<string, string> | undefined = { a: "1", "sub/b": "2" };
  let secret: Record<string, string> | undefined = { token: "abc" };
  const live = { ...ctx, objects: { configMap: async () => (data ? { data } : undefined), secret: async () => secret } };
  const pod: Pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p", namespace: "ns", uid: "uid-removed" },
    spec: {
      volumes: [
        { name: "cm", configMap: { name: "cm", items: undefined, optional: true } as never },
        { name: "s", secret: { secretName: "s", optional: true } },
        { name: "proj", projected: { sources: [{ configMap: { name: "cm", optional: true } }, { secret: { name: "s", optional: true } }] } as never },
      ],
      containers: [],
    },
  };
  const paths = await setupVolumes(pod, live);
  assert.equal(readFileSync(join(paths.get("cm")!, "sub/b"), "utf8"), "2");
  assert.equal(readFileSync(join(paths.get("proj")!, "token"), "utf8"), "abc");
  data = { a: "1" };
  secret = undefined;
  await setupVolumes(pod, live);
  assert.equal(readFileSync(join(paths.get("cm")!, "a"), "utf8"), "1", "a kept key stays");
  assert.equal(existsSync(join(paths.get("cm")!, "sub")), false, "a removed key goes, with its folder");
  assert.equal(existsSync(join(paths.get("s")!, "token")), false, "a deleted optional secret's files go");
  assert.equal(existsSync(join(paths.get("proj")!, "token")), false);
  assert.equal(existsSync(join(paths.get("proj")!, "a")), true);
  teardownPodDir(rootDir, "uid-removed");
});

test("volumes: a persistentVolumeClaim mounts its bound volume's directory; a missing or unbound claim waits with upstream's message", async () => {
  const pvDir = join(rootDir, "volumes", "pvc-1");
  const claims: Record<string, object> = {
    data: { metadata: { name: "data" }, spec: { volumeName: "pvc-1" }, status: { phase: "Bound" } },
    pending: { metadata: { name: "pending" }, spec: {}, status: { phase: "Pending" } },
    nfs: { metadata: { name: "nfs" }, spec: { volumeName: "nfs-pv" }, status: { phase: "Bound" } },
  };
  const volumes: Record<string, object> = {
    "pvc-1": { metadata: { name: "pvc-1" }, spec: { hostPath: { path: pvDir, type: "DirectoryOrCreate" } } },
    "nfs-pv": { metadata: { name: "nfs-pv" }, spec: { nfs: { server: "s", path: "/x" } } },
  };
  const withClaims = {
    ...ctx,
    objects: { ...ctx.objects, persistentVolumeClaim: async (_ns: string, name: string) => claims[name] as never, persistentVolume: async (name: string) => volumes[name] as never },
  };
  const pod = (claimName: string, readOnly = false): Pod => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p", namespace: "ns", uid: `uid-${claimName}` },
    spec: { volumes: [{ name: "d", persistentVolumeClaim: { claimName, readOnly } }], containers: [{ name: "c", volumeMounts: [{ name: "d", mountPath: "/data" }] }] },
  });
  const paths = await setupVolumes(pod("data"), withClaims);
  assert.equal(paths.get("d"), pvDir);
  assert.ok(statSync(pvDir).isDirectory());
  const [mount] = containerMounts(pod("data", true), pod("data").spec!.containers![0]!, paths);
  assert.deepEqual([mount!.hostPath, mount!.containerPath, mount!.readonly], [pvDir, "/data", true]);
  await assert.rejects(setupVolumes(pod("gone"), withClaims), new VolumeError('persistentvolumeclaim "gone" not found'));
  await assert.rejects(setupVolumes(pod("pending"), withClaims), new VolumeError('PVC ns/pending has non-bound phase ("Pending") or empty pvc.Spec.VolumeName ("")'));
  await assert.rejects(setupVolumes(pod("nfs"), withClaims), /persistent volume "nfs-pv" has an unsupported source/);
  // Without an API server (a standalone agent), such volumes are refused.
  await assert.rejects(setupVolumes(pod("data"), ctx), /persistentVolumeClaim volumes need the API server/);
});

test("volumes: an emptyDir with medium Memory is a tmpfs (sizeLimit its size), unmounted at teardown", { skip: process.getuid?.() === 0 ? false : "mounting a tmpfs needs root" }, async () => {
  const pod: Pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "mem", namespace: "ns", uid: "uid-tmpfs" },
    spec: { volumes: [{ name: "mem", emptyDir: { medium: "Memory", sizeLimit: "8Mi" } }, { name: "disk", emptyDir: {} }], containers: [{ name: "c", image: "busybox" }] },
  };
  const paths = await setupVolumes(pod, ctx);
  const mem = paths.get("mem")!;
  const mountOf = (dir: string) => readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((l) => l.split(" ")).find((f) => f[4] === dir);
  const mount = mountOf(mem);
  assert.ok(mount !== undefined, "a mount on the volume's directory");
  assert.equal(mount[mount.indexOf("-") + 1], "tmpfs");
  assert.match(mount.at(-1)!, /size=8192k/);
  assert.equal(statSync(mem).mode & 0o777, 0o777);
  assert.equal(mountOf(paths.get("disk")!), undefined, "a plain emptyDir is a directory");
  await setupVolumes(pod, ctx); // a resync keeps the one mount
  assert.equal(readFileSync("/proc/self/mountinfo", "utf8").split("\n").filter((l) => l.split(" ")[4] === mem).length, 1);
  teardownPodDir(rootDir, "uid-tmpfs");
  assert.equal(mountOf(mem), undefined, "unmounted");
  assert.equal(existsSync(mem), false);
});

test("volumes: subPathExpr expands the container's environment; a missing value, an absolute path or .. refuses the mount", async () => {
  const pod: Pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p", namespace: "ns", uid: "uid-expr" },
    spec: { volumes: [{ name: "workdir1", emptyDir: {} }], containers: [] },
  };
  const paths = await setupVolumes(pod, ctx);
  const container = (expr: string) => ({ name: "dapi-container", volumeMounts: [{ name: "workdir1", mountPath: "/subpath_mount", subPathExpr: expr }] }) as never;
  const env = new Map([["ANNOTATION", "mypath"], ["POD_NAME", "foo"], ["ABS", "/tmp"], ["UP", ".."], ["EMPTY", ""]]);
  const [mount] = containerMounts(pod, container("$(ANNOTATION)/$(POD_NAME)"), paths, env);
  assert.equal(mount!.hostPath, join(paths.get("workdir1")!, "mypath", "foo"));
  assert.equal(existsSync(mount!.hostPath), true, "the sub-path is created");
  assert.throws(() => containerMounts(pod, container("$(MISSING)/$(EMPTY)"), paths, env), (e: Error) => e instanceof VolumeError && /missing value for EMPTY, MISSING/.test(e.message));
  assert.throws(() => containerMounts(pod, container("$(ABS)"), paths, env), /must not be an absolute path/);
  assert.throws(() => containerMounts(pod, container("$(UP)"), paths, env), /must not contain '\.\.'/);
  teardownPodDir(rootDir, "uid-expr");
});
