// An HA control plane of `orch server`s (issue 20): the first server runs with
// --cluster-init, the others with --join URL --control-plane --token T.
//
// What a joining server needs to run an API server is the cluster's key
// material: the CA (to issue its serving, etcd and node certificates), the
// service-account signing key (so tokens one server issues verify on all)
// and the admin token (so one admin kubeconfig works against any server).
// As k3s shares it through the datastore, every control-plane server keeps it
// in the Secret <system namespace>/orch-control-plane, sealed with AES-256-GCM
// under a key derived (HKDF-SHA256) from the admin token: the etcd data and
// its backups alone never reveal the CA key. The control-plane token
// DATA_DIR/server.token (`orch1.<CA digest>.<admin token>`, mode 0600) pins
// the CA as the node join token does and is the admin credential that may
// read the Secret and the key that opens it. The Secret also names the etcd
// members' client URLs, where the joining server asks for its member add.

import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RestClient } from "../client/index.js";
import { SECRETS } from "../api/resource-refs.js";
import { PKI_FILES } from "../component/pki.js";
import { isApiError } from "../machinery/index.js";
import type { Naming } from "../machinery/naming.js";
import { EtcdCluster } from "../storage/etcd/index.js";
import { DEFAULT_SIGNING_KEY_FILE } from "../apiserver/authentication/service-account-keys.js";
import { fetchPinnedCa, formatJoinToken, parseJoinToken } from "./join-token.js";
import {
  LocalEtcd, etcdClientTls, etcdPaths, ensureEtcdCertificates, hasMemberData, loadMemberConfig, pickPort, saveMemberConfig,
  type MemberConfig,
} from "./etcd-member.js";

/** The control-plane token's file in the data folder. */
export const SERVER_TOKEN_FILE = "server.token";
/** The Secret holding the sealed key material and the etcd endpoints. */
export const CONTROL_PLANE_SECRET = "orch-control-plane";

/** The data-folder files every control-plane server shares. */
const SHARED_FILES = [PKI_FILES.caCert, PKI_FILES.caKey, DEFAULT_SIGNING_KEY_FILE, PKI_FILES.adminToken] as const;

const INFO = Buffer.from("orch control-plane bundle v1");

/** Seals `files` (name → content) under the admin token. */
export function sealBundle(files: Record<string, string>, adminToken: string): string {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const key = Buffer.from(hkdfSync("sha256", adminToken, salt, INFO, 32));
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const data = Buffer.concat([cipher.update(JSON.stringify(files), "utf8"), cipher.final()]);
  return JSON.stringify({ v: 1, salt: salt.toString("base64"), iv: iv.toString("base64"), tag: cipher.getAuthTag().toString("base64"), data: data.toString("base64") });
}

/** Opens a sealed bundle; throws when the token is not the one it was sealed under or the text is malformed. */
export function openBundle(sealed: string, adminToken: string): Record<string, string> {
  let parts: { v?: number; salt?: string; iv?: string; tag?: string; data?: string };
  try {
    parts = JSON.parse(sealed) as typeof parts;
  } catch {
    throw new Error("the control-plane bundle is not JSON");
  }
  if (parts.v !== 1 || !parts.salt || !parts.iv || !parts.tag || !parts.data) throw new Error("the control-plane bundle is malformed (version 1 expected)");
  const key = Buffer.from(hkdfSync("sha256", adminToken, Buffer.from(parts.salt, "base64"), INFO, 32));
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(parts.iv, "base64"));
  decipher.setAuthTag(Buffer.from(parts.tag, "base64"));
  try {
    const text = Buffer.concat([decipher.update(Buffer.from(parts.data, "base64")), decipher.final()]).toString("utf8");
    return JSON.parse(text) as Record<string, string>;
  } catch {
    throw new Error("the control-plane bundle does not open with this token (not the cluster's control-plane token?)");
  }
}

export interface EtcdStorageChoice {
  backend: "etcd";
  etcdServers: string[];
  etcdTls: { ca: string; cert: string; key: string };
}

export interface LocalMember {
  etcd: LocalEtcd;
  member: MemberConfig;
  storage: EtcdStorageChoice;
}

export interface MemberOptions {
  dataDir: string;
  name: string;
  /** The address other members and servers reach this one at. */
  advertise: string;
  clientPort: { port: number; given: boolean };
  peerPort: { port: number; given: boolean };
  /** For a joining server: the first server's URL and the control-plane token. */
  join?: { server: string; token: string };
  log: (line: string) => void;
  /** Stops the member (and a start still waiting) when it fires. */
  signal?: AbortSignal;
  /** Makes the CA (and the rest of the API server's credentials) for a new cluster. */
  ensureCa: () => Promise<void>;
}

/**
 * Starts this server's etcd member: the one its data folder holds (a restart,
 * whatever flags formed it), else a new single-member cluster (--cluster-init)
 * or a new member of the cluster `join` names. Resolves once it serves.
 */
export async function startLocalMember(o: MemberOptions): Promise<LocalMember> {
  const paths = etcdPaths(o.dataDir);
  let member = loadMemberConfig(paths);
  let initial: { cluster: string; state: "new" | "existing" };
  if (member !== undefined) {
    initial = { cluster: member.initialCluster, state: member.initialClusterState };
    if (hasMemberData(paths)) o.log(`etcd: restarting member ${member.name} from ${paths.data}`);
  } else {
    if (o.join !== undefined) await fetchSharedFiles(o.dataDir, o.join, o.log);
    else await o.ensureCa();
    const clientPort = await pickPort(o.clientPort.port, o.clientPort.given, "client", o.log);
    const peerPort = await pickPort(o.peerPort.port, o.peerPort.given, "peer", o.log);
    const host = o.advertise.includes(":") ? `[${o.advertise}]` : o.advertise;
    const base = { name: o.name, clientPort, peerPort, clientUrl: `https://${host}:${clientPort}`, peerUrl: `https://${host}:${peerPort}` };
    await ensureEtcdCertificates(paths, join(o.dataDir, PKI_FILES.caKey), { dns: [], ips: /^[\d.]+$|:/.test(o.advertise) ? [o.advertise] : [] });
    initial = o.join === undefined ? { cluster: `${o.name}=${base.peerUrl}`, state: "new" } : { cluster: await addMember(o.dataDir, base, o.log), state: "existing" };
    member = { ...base, initialCluster: initial.cluster, initialClusterState: initial.state };
    saveMemberConfig(paths, member);
  }
  await ensureEtcdCertificates(paths, join(o.dataDir, PKI_FILES.caKey), { dns: [], ips: [] });
  const etcd = new LocalEtcd({ paths, member, initialCluster: initial.cluster, initialClusterState: initial.state, log: o.log });
  // Ctrl-C while the member waits for its quorum ends the wait.
  o.signal?.addEventListener("abort", () => void etcd.stop(), { once: true });
  await etcd.start();
  const tls = etcdClientTls(paths);
  // The API server talks to the local member first and fails over to the others.
  const others = await withCluster([member.clientUrl], tls, (c) => c.members()).then(
    (members) => members.flatMap((m) => m.clientURLs).filter((u) => u !== member!.clientUrl),
    () => [] as string[],
  );
  return { etcd, member, storage: { backend: "etcd", etcdServers: [member.clientUrl, ...others], etcdTls: tls } };
}

/** Runs `fn` with a cluster client, closing it after. */
async function withCluster<T>(endpoints: string[], tls: { ca: string; cert: string; key: string }, fn: (c: EtcdCluster) => Promise<T>): Promise<T> {
  const cluster = new EtcdCluster({ endpoints, tls });
  try {
    return await fn(cluster);
  } finally {
    cluster.close();
  }
}

/** The pending join, remembered while the new member's start is under way (a retried start must not add it twice). */
interface PendingJoin {
  endpoints: string[];
}

/**
 * Adds this member to the cluster (or finds it added by an earlier attempt
 * that did not get to start it); answers the --initial-cluster value.
 */
async function addMember(dataDir: string, self: Omit<MemberConfig, "initialCluster" | "initialClusterState">, log: (line: string) => void): Promise<string> {
  const paths = etcdPaths(dataDir);
  const pending = JSON.parse(readFileSync(join(paths.dir, "join.json"), "utf8")) as PendingJoin;
  const tls = etcdClientTls(paths);
  return withCluster(pending.endpoints, tls, async (cluster) => {
    let members = await cluster.members();
    const clash = members.find((m) => m.name === self.name && !m.peerURLs.includes(self.peerUrl));
    if (clash !== undefined) throw new Error(`etcd: the cluster already has a member named ${self.name} (${clash.peerURLs.join(",")}): give this server another --node-name, or remove that member (orch etcd remove ${self.name})`);
    if (!members.some((m) => m.peerURLs.includes(self.peerUrl))) {
      log(`etcd: adding member ${self.name} (${self.peerUrl}) to the cluster at ${pending.endpoints.join(",")}`);
      members = (await cluster.add([self.peerUrl])).members;
    }
    return members.map((m) => `${m.peerURLs.includes(self.peerUrl) ? self.name : m.name}=${m.peerURLs[0]}`).join(",");
  });
}

/**
 * A joining server's first step: fetch the CA (pinned by the token), read the
 * control-plane Secret as admin, open the bundle and write the shared files
 * (0600 for keys and the token), and remember the etcd endpoints it names.
 */
async function fetchSharedFiles(dataDir: string, joinTo: { server: string; token: string }, log: (line: string) => void): Promise<void> {
  const pinned = parseJoinToken(joinTo.token);
  if (pinned === undefined) throw new Error("--control-plane needs the control-plane token (the first server's DATA_DIR/server.token), which pins the CA");
  const ca = await fetchPinnedCa(joinTo.server, pinned.caSha256);
  const client = new RestClient({ server: joinTo.server, ca, token: pinned.token });
  let secret: { data?: Record<string, string> };
  try {
    secret = await findSecret(client);
  } finally {
    client.close();
  }
  const field = (key: string) => (secret.data?.[key] === undefined ? undefined : Buffer.from(secret.data[key]!, "base64").toString("utf8"));
  const files = openBundle(field("bundle") ?? "", pinned.token);
  for (const name of SHARED_FILES) {
    const content = files[name];
    if (content === undefined) throw new Error(`the control-plane bundle lacks ${name}`);
    const path = join(dataDir, name);
    if (existsSync(path) && readFileSync(path, "utf8") !== content) throw new Error(`${path} exists and differs from the cluster's: join with an empty --data-dir`);
    writeFileSync(path, content, { mode: name === PKI_FILES.caCert ? 0o644 : 0o600 });
  }
  const endpoints = (field("etcd-endpoints") ?? "").split(",").filter((e) => e !== "");
  if (endpoints.length === 0) throw new Error(`the Secret ${CONTROL_PLANE_SECRET} names no etcd endpoint: is the first server running with --cluster-init?`);
  const paths = etcdPaths(dataDir);
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(paths.dir, "join.json"), JSON.stringify({ endpoints } satisfies PendingJoin) + "\n", { mode: 0o600 });
  log(`control plane: key material of ${joinTo.server} fetched (CA pinned by the token); etcd at ${endpoints.join(",")}`);
}

/** The control-plane Secret, in the system namespace of either naming profile. */
async function findSecret(client: RestClient): Promise<{ data?: Record<string, string> }> {
  let last: unknown;
  for (const namespace of ["orch-system", "kube-system"]) {
    try {
      return (await client.get(SECRETS, { namespace, name: CONTROL_PLANE_SECRET })) as { data?: Record<string, string> };
    } catch (err) {
      last = err;
      if (isApiError(err, "Forbidden") || isApiError(err, "Unauthorized")) {
        throw new Error(`the server refuses the token (${(err as Error).message}): --control-plane takes the control-plane token DATA_DIR/server.token, not the node join token`, { cause: err });
      }
      if (!isApiError(err, "NotFound")) throw err;
    }
  }
  throw new Error(`no Secret ${CONTROL_PLANE_SECRET} on the server (${(last as Error).message}): is it running with --cluster-init?`);
}

/** The ConfigMap (public namespace) naming every API server, for joined agents' load balancers. */
export const SERVERS_CONFIGMAP = "orch-control-plane";

type Ref = { group: string; version: string; resource: string; namespaced: boolean };
const rbac = (group: string, resource: string): Ref => ({ group, version: "v1", resource, namespaced: true });
const CONFIGMAPS: Ref = { group: "", version: "v1", resource: "configmaps", namespaced: true };

/** Creates `body`, or replaces the object of that name keeping what `merge` keeps of it; retried on conflicts. */
async function upsert(client: RestClient, ref: Ref, body: ApiObjectLike, merge: (current: ApiObjectLike) => ApiObjectLike = () => body): Promise<void> {
  const target = { namespace: body.metadata.namespace!, name: body.metadata.name };
  for (let attempt = 0; ; attempt++) {
    try {
      const current = (await client.get(ref, target).catch((err: unknown) => {
        if (isApiError(err, "NotFound")) return undefined;
        throw err;
      })) as ApiObjectLike | undefined;
      if (current === undefined) await client.create(ref, body);
      else {
        const next = merge(current);
        await client.update(ref, { ...next, metadata: { ...next.metadata, resourceVersion: current.metadata.resourceVersion } });
      }
      return;
    } catch (err) {
      if ((!isApiError(err, "Conflict") && !isApiError(err, "AlreadyExists")) || attempt >= 5) throw err;
    }
  }
}

interface ApiObjectLike {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  [key: string]: unknown;
}

/**
 * What every control-plane server does once its API server runs: keep the
 * Secret current (sealed files, every member's client URL), add its own URL
 * to the public ConfigMap every authenticated client may read (joined
 * agents balance over it), and write DATA_DIR/server.token for the next
 * server to join with.
 */
export async function publishControlPlane(client: RestClient, o: { dataDir: string; naming: Naming; serverUrl: string; etcdEndpoints: string[] }): Promise<void> {
  const read = (name: string) => readFileSync(join(o.dataDir, name), "utf8");
  const adminToken = read(PKI_FILES.adminToken).trim();
  const files = Object.fromEntries(SHARED_FILES.map((name) => [name, read(name)]));
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  await upsert(client, SECRETS, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: CONTROL_PLANE_SECRET, namespace: o.naming.systemNamespace },
    type: "Opaque",
    data: { bundle: b64(sealBundle(files, adminToken)), "etcd-endpoints": b64(o.etcdEndpoints.join(",")) },
  });
  const namespace = o.naming.publicNamespace;
  const servers: ApiObjectLike = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: SERVERS_CONFIGMAP, namespace }, data: { servers: o.serverUrl } };
  await upsert(client, CONFIGMAPS, servers, (current) => {
    const listed = String((current.data as Record<string, string> | undefined)?.servers ?? "").split(",").filter((u) => u !== "" && u !== o.serverUrl);
    return { ...current, data: { ...(current.data as object), servers: [...listed, o.serverUrl].join(",") } };
  });
  const apiVersion = `${o.naming.rbacGroup}/v1`;
  await upsert(client, rbac(o.naming.rbacGroup, "roles"), {
    apiVersion, kind: "Role", metadata: { name: SERVERS_CONFIGMAP, namespace },
    rules: [{ apiGroups: [""], resources: ["configmaps"], resourceNames: [SERVERS_CONFIGMAP], verbs: ["get"] }],
  });
  await upsert(client, rbac(o.naming.rbacGroup, "rolebindings"), {
    apiVersion, kind: "RoleBinding", metadata: { name: SERVERS_CONFIGMAP, namespace },
    roleRef: { apiGroup: o.naming.rbacGroup, kind: "Role", name: SERVERS_CONFIGMAP },
    subjects: [{ apiGroup: o.naming.rbacGroup, kind: "Group", name: "system:authenticated" }],
  });
  writeFileSync(join(o.dataDir, SERVER_TOKEN_FILE), formatJoinToken(read(PKI_FILES.caCert), adminToken) + "\n", { mode: 0o600 });
}

/** The API servers the control plane publishes (empty when it publishes none, as a single orch server). */
export async function publishedServers(client: RestClient, naming: Naming): Promise<string[]> {
  const cm = (await client.get(CONFIGMAPS, { namespace: naming.publicNamespace, name: SERVERS_CONFIGMAP }).catch(() => undefined)) as { data?: Record<string, string> } | undefined;
  return (cm?.data?.servers ?? "").split(",").filter((u) => u !== "");
}
