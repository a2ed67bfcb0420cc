// Pod volumes on the node: emptyDir, configMap, secret, hostPath, downwardAPI
// and projected, materialized under <root>/pods/<uid>/volumes/<plugin>/<name>
// and handed to the runtime as bind mounts. A persistentVolumeClaim volume
// mounts the directory of its bound volume (hostPath or local source); a
// claim that is missing or not yet bound keeps the pod waiting. Files are
// rewritten only when their content changes, so a resync is cheap, and
// atomically (a new file renamed over the old), so a container never reads
// half a token or CA; a projected serviceAccountToken is the pod's bound token
// from the token manager (./token-manager.ts), renewed on the resync after 80 %
// of its life. An emptyDir with `medium: Memory` is a tmpfs mounted on its
// directory (size: its sizeLimit), unmounted when the pod's directory goes.

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, chmodSync, closeSync, openSync } from "node:fs";
import { basename, dirname, join, normalize } from "node:path";
import type { Container, Pod, Volume } from "../../api/core/types.js";
import type { Mount } from "../cri/index.js";
import { DEFAULT_TOKEN_SECONDS } from "../../api/authentication/token-request.js";
import { podField, resourceField, type ObjectSource } from "../env/env.js";
import { parseQuantity } from "../../api/core/quantity.js";

export class VolumeError extends Error {}

export interface VolumeContext {
  rootDir: string;
  /** "orch.io" → plugin folders "orch.io~empty-dir". */
  keyDomain: string;
  objects: ObjectSource;
  hostIP: string;
  podIP: string;
  nodeAllocatable: { cpu: number; memory: number };
}

interface KeyToPath {
  key?: string;
  path?: string;
  mode?: number;
}

interface FileItem {
  path?: string;
  mode?: number;
  fieldRef?: { fieldPath?: string };
  resourceFieldRef?: { containerName?: string; resource?: string; divisor?: string };
}

export function podDir(rootDir: string, uid: string): string {
  return join(rootDir, "pods", uid);
}

const PLUGINS: Record<string, string> = {
  emptyDir: "empty-dir",
  configMap: "configmap",
  secret: "secret",
  downwardAPI: "downward-api",
  projected: "projected",
};

/** Sets up every volume of the pod; returns volume name → host path. */
export async function setupVolumes(pod: Pod, ctx: VolumeContext): Promise<Map<string, string>> {
  const paths = new Map<string, string>();
  for (const v of pod.spec?.volumes ?? []) {
    if (!v.name) continue;
    paths.set(v.name, await setupVolume(pod, v, ctx));
  }
  return paths;
}

async function setupVolume(pod: Pod, v: Volume, ctx: VolumeContext): Promise<string> {
  const hostPath = v["hostPath"] as { path?: string; type?: string } | undefined;
  if (hostPath) return setupHostPath(hostPath, v.name!);
  const claim = v["persistentVolumeClaim"] as { claimName?: string } | undefined;
  if (claim) return setupClaim(pod.metadata.namespace ?? "default", claim.claimName ?? "", v.name!, ctx);
  const kind = Object.keys(PLUGINS).find((k) => v[k] !== undefined && v[k] !== null);
  if (kind === undefined) throw new VolumeError(`volume "${v.name}": unsupported volume type (supported: emptyDir, configMap, secret, hostPath, downwardAPI, projected, persistentVolumeClaim)`);
  const dir = join(podDir(ctx.rootDir, pod.metadata.uid!), "volumes", `${ctx.keyDomain}~${PLUGINS[kind]}`, v.name!);
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  const ns = pod.metadata.namespace ?? "default";
  const files = new Map<string, { data: Buffer; mode: number }>();
  const src = v[kind] as Record<string, unknown>;
  switch (kind) {
    case "emptyDir":
      if (src["medium"] === "Memory") mountTmpfs(dir, v.name!, src["sizeLimit"]);
      chmodSync(dir, 0o777); // any container user may write, as upstream
      return dir;
    case "configMap":
      await configMapFiles(ns, src, ctx, files, (src["defaultMode"] as number | undefined) ?? 0o644);
      break;
    case "secret":
      await secretFiles(ns, { ...src, name: src["secretName"] }, ctx, files, (src["defaultMode"] as number | undefined) ?? 0o644);
      break;
    case "downwardAPI":
      downwardFiles(pod, src, ctx, files, (src["defaultMode"] as number | undefined) ?? 0o644);
      break;
    case "projected": {
      const mode = (src["defaultMode"] as number | undefined) ?? 0o644;
      for (const s of (src["sources"] as Record<string, Record<string, unknown>>[] | undefined) ?? []) {
        if (s["configMap"]) await configMapFiles(ns, s["configMap"], ctx, files, mode);
        else if (s["secret"]) await secretFiles(ns, s["secret"], ctx, files, mode);
        else if (s["downwardAPI"]) downwardFiles(pod, s["downwardAPI"], ctx, files, mode);
        else if (s["serviceAccountToken"]) await tokenFile(pod, s["serviceAccountToken"], ctx, files, mode);
      }
      break;
    }
  }
  const wanted = new Set<string>();
  for (const [path, f] of files) {
    const file = join(dir, safePath(path, v.name!));
    wanted.add(file);
    writeIfChanged(file, f.data, f.mode);
  }
  // A key removed from its source, or an optional source deleted, leaves the volume on the next sync, as upstream's atomic writer.
  removeUnwanted(dir, wanted);
  return dir;
}

/** Removes the files under `dir` not in `wanted` (and folders left empty); returns whether `dir` is now empty. */
function removeUnwanted(dir: string, wanted: ReadonlySet<string>): boolean {
  let empty = true;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    try {
      if (entry.isDirectory()) {
        if (removeUnwanted(path, wanted)) rmSync(path, { recursive: true, force: true });
        else empty = false;
      } else if (!wanted.has(path)) rmSync(path, { force: true });
      else empty = false;
    } catch {
      empty = false; // in use (a subPath mount point): left for the pod's teardown
    }
  }
  return empty;
}

function safePath(path: string, volume: string): string {
  const p = normalize(path);
  if (p.startsWith("..") || p.startsWith("/")) throw new VolumeError(`volume "${volume}": path ${JSON.stringify(path)} must stay inside the volume`);
  return p;
}

function writeIfChanged(file: string, data: Buffer, mode: number): void {
  mkdirSync(dirname(file), { recursive: true });
  if (existsSync(file) && readFileSync(file).equals(data)) return;
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  writeFileSync(temp, data, { mode });
  chmodSync(temp, mode);
  renameSync(temp, file);
}

function pickItems(data: Record<string, Buffer>, items: KeyToPath[] | undefined, mode: number, out: Map<string, { data: Buffer; mode: number }>, what: string): void {
  if (!items || items.length === 0) {
    for (const [k, d] of Object.entries(data)) out.set(k, { data: d, mode });
    return;
  }
  for (const item of items) {
    const d = data[item.key ?? ""];
    if (d === undefined) throw new VolumeError(`configmap references non-existent config key: ${item.key} (${what})`);
    out.set(item.path ?? item.key!, { data: d, mode: item.mode ?? mode });
  }
}

async function configMapFiles(ns: string, src: Record<string, unknown>, ctx: VolumeContext, out: Map<string, { data: Buffer; mode: number }>, mode: number): Promise<void> {
  const name = String(src["name"] ?? "");
  const cm = await ctx.objects.configMap(ns, name);
  if (!cm) {
    if (src["optional"]) return;
    throw new VolumeError(`configmap "${name}" not found`);
  }
  const data: Record<string, Buffer> = {};
  for (const [k, v] of Object.entries(cm.data ?? {})) data[k] = Buffer.from(v);
  for (const [k, v] of Object.entries(cm.binaryData ?? {})) data[k] = Buffer.from(v, "base64");
  pickItems(data, src["items"] as KeyToPath[] | undefined, mode, out, `configmap ${ns}/${name}`);
}

async function secretFiles(ns: string, src: Record<string, unknown>, ctx: VolumeContext, out: Map<string, { data: Buffer; mode: number }>, mode: number): Promise<void> {
  const name = String(src["name"] ?? "");
  const secret = await ctx.objects.secret(ns, name);
  if (!secret) {
    if (src["optional"]) return;
    throw new VolumeError(`secret "${name}" not found`);
  }
  const data = Object.fromEntries(Object.entries(secret).map(([k, v]) => [k, Buffer.from(v)]));
  pickItems(data, src["items"] as KeyToPath[] | undefined, mode, out, `secret ${ns}/${name}`);
}

/** The pod's bound token for a serviceAccountToken projection (audience: the API server's when empty; lifetime default 1 h). */
async function tokenFile(pod: Pod, src: Record<string, unknown>, ctx: VolumeContext, out: Map<string, { data: Buffer; mode: number }>, mode: number): Promise<void> {
  const path = String(src["path"] ?? "");
  if (path === "") throw new VolumeError("serviceAccountToken projection: path is required");
  if (ctx.objects.serviceAccountToken === undefined) throw new VolumeError("cannot project a service account token: the agent has no API server");
  const audience = typeof src["audience"] === "string" ? src["audience"] : "";
  const token = await ctx.objects.serviceAccountToken(pod.metadata.namespace ?? "default", pod.spec?.serviceAccountName || "default", {
    audiences: audience === "" ? [] : [audience],
    expirationSeconds: typeof src["expirationSeconds"] === "number" ? src["expirationSeconds"] : DEFAULT_TOKEN_SECONDS,
    boundPod: { name: pod.metadata.name ?? "", uid: pod.metadata.uid ?? "" },
  });
  out.set(path, { data: Buffer.from(token), mode });
}

function downwardFiles(pod: Pod, src: Record<string, unknown>, ctx: VolumeContext, out: Map<string, { data: Buffer; mode: number }>, mode: number): void {
  for (const item of (src["items"] as FileItem[] | undefined) ?? []) {
    if (!item.path) continue;
    let text: string;
    if (item.fieldRef) text = podField(pod, item.fieldRef.fieldPath ?? "", ctx);
    else if (item.resourceFieldRef) {
      const c = (pod.spec?.containers ?? []).find((x) => x.name === item.resourceFieldRef!.containerName) ?? {};
      text = resourceField(c as Container, item.resourceFieldRef, ctx.nodeAllocatable);
    } else continue;
    out.set(item.path, { data: Buffer.from(text), mode: item.mode ?? mode });
  }
}

/** The host directory of a claim's bound volume (upstream's messages for a claim that is missing or unbound). */
async function setupClaim(ns: string, claimName: string, name: string, ctx: VolumeContext): Promise<string> {
  const { persistentVolumeClaim, persistentVolume } = ctx.objects;
  if (!persistentVolumeClaim || !persistentVolume) throw new VolumeError(`volume "${name}": persistentVolumeClaim volumes need the API server`);
  const pvc = await persistentVolumeClaim(ns, claimName);
  if (!pvc) throw new VolumeError(`persistentvolumeclaim "${claimName}" not found`);
  if (pvc.metadata.deletionTimestamp) throw new VolumeError(`error processing PVC ${ns}/${claimName}: PVC is being deleted`);
  const volumeName = pvc.spec?.volumeName ?? "";
  const phase = pvc.status?.phase ?? "";
  if (phase !== "Bound" || !volumeName) throw new VolumeError(`PVC ${ns}/${claimName} has non-bound phase (${JSON.stringify(phase)}) or empty pvc.Spec.VolumeName (${JSON.stringify(volumeName)})`);
  const pv = await persistentVolume(volumeName);
  if (!pv) throw new VolumeError(`persistentvolume "${volumeName}" not found`);
  if (pv.spec?.hostPath) return setupHostPath(pv.spec.hostPath, name);
  if (pv.spec?.local?.path) return setupHostPath({ path: pv.spec.local.path, type: "Directory" }, name);
  throw new VolumeError(`volume "${name}": persistent volume "${volumeName}" has an unsupported source (supported on this node: hostPath, local)`);
}

function setupHostPath(src: { path?: string; type?: string }, name: string): string {
  const path = src.path ?? "";
  const type = src.type ?? "";
  const stat = existsSync(path) ? statSync(path) : undefined;
  const fail = (why: string): never => {
    throw new VolumeError(`hostPath volume "${name}": ${path} ${why}`);
  };
  switch (type) {
    case "DirectoryOrCreate":
      if (!stat) mkdirSync(path, { recursive: true, mode: 0o755 });
      else if (!stat.isDirectory()) fail("is not a directory");
      break;
    case "FileOrCreate":
      if (!stat) {
        mkdirSync(dirname(path), { recursive: true });
        closeSync(openSync(path, "a", 0o644));
      } else if (!stat.isFile()) fail("is not a file");
      break;
    case "Directory":
      if (!stat?.isDirectory()) fail("is not a directory");
      break;
    case "File":
      if (!stat?.isFile()) fail("is not a file");
      break;
    case "Socket":
      if (!stat?.isSocket()) fail("is not a socket");
      break;
    case "CharDevice":
      if (!stat?.isCharacterDevice()) fail("is not a character device");
      break;
    case "BlockDevice":
      if (!stat?.isBlockDevice()) fail("is not a block device");
      break;
  }
  return path;
}

/**
 * A volumeMount's subPath, or its subPathExpr expanded with the container's
 * environment (every $(VAR) must have a non-empty value), as upstream's
 * kubelet: never absolute, never `..`. A failure keeps the container waiting
 * (CreateContainerConfigError) until the pod changes.
 */
function subPathOf(m: { name?: string | null; subPath?: string | null; subPathExpr?: string | null }, container: string, env: ReadonlyMap<string, string>): string {
  let subPath = m.subPath ?? "";
  if (m.subPathExpr) {
    const missing = new Set<string>();
    subPath = m.subPathExpr.replace(/\$\$|\$\(([^)]*)\)/g, (whole, name: string | undefined) => {
      if (whole === "$$") return "$";
      const value = env.get(name!);
      if (!value) missing.add(name!);
      return value ?? "";
    });
    if (missing.size > 0) throw new VolumeError(`failed to prepare subPath for volumeMount "${m.name}" of container "${container}": missing value for ${[...missing].sort().join(", ")}`);
  }
  if (subPath === "") return "";
  if (subPath.startsWith("/")) throw new VolumeError(`failed to prepare subPath for volumeMount "${m.name}" of container "${container}": error SubPath \`${subPath}\` must not be an absolute path`);
  if (subPath.split(/[\\/]/).includes("..")) throw new VolumeError(`failed to prepare subPath for volumeMount "${m.name}" of container "${container}": must not contain '..'`);
  return subPath;
}

/** The container's bind mounts from its volumeMounts (configMap, secret, downwardAPI and projected are read-only); `env` expands subPathExpr. */
export function containerMounts(pod: Pod, container: Container, volumePaths: ReadonlyMap<string, string>, env: ReadonlyMap<string, string> = new Map()): Mount[] {
  const readOnlyKinds = ["configMap", "secret", "downwardAPI", "projected"];
  return (container.volumeMounts ?? []).map((m) => {
    const base = volumePaths.get(m.name ?? "");
    if (base === undefined) throw new VolumeError(`volumeMount "${m.name}": no such volume`);
    const volume = (pod.spec?.volumes ?? []).find((v) => v.name === m.name)!;
    let hostPath = base;
    const subPath = subPathOf(m, container.name ?? "", env);
    if (subPath) {
      hostPath = join(base, safePath(subPath, m.name!));
      if (!existsSync(hostPath)) mkdirSync(hostPath, { recursive: true, mode: 0o755 });
    }
    const claimReadOnly = (volume["persistentVolumeClaim"] as { readOnly?: boolean } | undefined)?.readOnly === true;
    const readonly = m.readOnly === true || claimReadOnly || readOnlyKinds.some((k) => volume[k] != null);
    return { containerPath: m.mountPath ?? "", hostPath, readonly, selinuxRelabel: false, propagation: "PROPAGATION_PRIVATE", uidMappings: [], gidMappings: [], recursiveReadOnly: false, image: null };
  });
}

/** Whether `dir` is a mount point (another device than its parent's): a resync finds its tmpfs in place. */
function isMountPoint(dir: string): boolean {
  return statSync(dir).dev !== statSync(dirname(dir)).dev;
}

/** A memory-backed emptyDir: a tmpfs on its directory, limited to sizeLimit when given (else the node's memory bounds it). */
function mountTmpfs(dir: string, volume: string, sizeLimit: unknown): void {
  if (isMountPoint(dir)) return;
  const bytes = sizeLimit === undefined || sizeLimit === null ? undefined : parseQuantity(sizeLimit as string | number);
  const options = ["mode=0777", ...(bytes !== undefined && bytes > 0 ? [`size=${Math.ceil(bytes)}`] : [])].join(",");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", options, "tmpfs", dir], { stdio: ["ignore", "ignore", "pipe"] });
  } catch (err) {
    const stderr = String((err as { stderr?: unknown }).stderr ?? "").trim();
    throw new VolumeError(`volume "${volume}": mounting a tmpfs for medium Memory failed: ${stderr || (err as Error).message}`);
  }
}

/** The mount points under `dir` (from /proc/self/mountinfo), deepest first. */
function mountsUnder(dir: string): string[] {
  let info = "";
  try {
    info = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return [];
  }
  const unescape = (p: string) => p.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
  return info.split("\n").map((line) => unescape(line.split(" ")[4] ?? "")).filter((p) => p.startsWith(`${dir}/`)).sort((a, b) => b.length - a.length);
}

/** Removes the pod's directory once its containers are gone (its tmpfs volumes unmounted first). */
export function teardownPodDir(rootDir: string, uid: string): void {
  const dir = podDir(rootDir, uid);
  for (const mount of mountsUnder(dir)) {
    try {
      execFileSync("umount", [mount], { stdio: "ignore" });
    } catch {
      execFileSync("umount", ["-l", mount], { stdio: "ignore" }); // busy: detach now, freed when the last user goes
    }
  }
  rmSync(dir, { recursive: true, force: true });
}
