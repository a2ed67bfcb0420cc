// `orch etcd`: the etcd cluster of an HA control plane (docs/ha.md).
//   orch etcd members                  list the members
//   orch etcd remove NAME              remove a member (a server taken out for good)
//   orch etcd snapshot save FILE       stream a snapshot of the keyspace (Maintenance.Snapshot) into FILE
//   orch etcd snapshot restore FILE    make DATA_DIR's member a new one-member cluster from FILE (etcdctl snapshot restore)
// It reaches the members with the client certificate and CA of --data-dir (a
// server's data folder), at that server's member unless --endpoints names others.

import { execFile } from "node:child_process";
import { existsSync, readFileSync, renameSync, statSync } from "node:fs";
import { flag } from "../component/index.js";
import { EtcdCluster, type EtcdMemberInfo } from "../storage/etcd/index.js";
import { defineCommand, type Output } from "./command.js";
import { etcdClientTls, etcdPaths, loadMemberConfig, saveMemberConfig } from "./etcd-member.js";

const USAGE = "members | remove NAME | snapshot save FILE | snapshot restore FILE";

export const command = defineCommand({
  name: "etcd",
  summary: "the etcd members of an HA control plane (members | remove NAME | snapshot save|restore FILE)",
  description:
    "Administers the etcd cluster of orch servers started with --cluster-init and --control-plane, with the client " +
    "certificate of --data-dir. 'members' lists the members; 'remove NAME' removes one (run it before or after taking " +
    "that server down for good; its data folder's member is set aside when it is this --data-dir's); 'snapshot save FILE' " +
    "streams a consistent snapshot into FILE; 'snapshot restore FILE' turns this --data-dir's member into a new one-member " +
    "cluster holding the snapshot (stop the server first; see docs/ha.md for bringing the others back).",
  flags: {
    "data-dir": flag.string({ default: "./.orch", description: "A control-plane server's state directory: its etcd client certificate and member." }),
    endpoints: flag.strings({ description: "etcd client URLs to use instead of this data folder's member (https://host:port, comma separated)." }),
  },
  positionals: { name: "ACTION [ARGS]", description: USAGE },
  validate(flags) {
    const [action, a, b, ...rest] = flags.args;
    if (action === "members") return a === undefined ? undefined : `"members" takes no arguments`;
    if (action === "remove") return a === undefined || a === "" || b !== undefined ? `"remove" takes one member NAME` : undefined;
    if (action === "snapshot") {
      if (a !== "save" && a !== "restore") return `"snapshot" takes save FILE or restore FILE`;
      return b === undefined || b === "" || rest.length > 0 ? `"snapshot ${a}" takes one FILE` : undefined;
    }
    return `unknown action "${action ?? ""}": use ${USAGE}`;
  },
  async run(flags, context) {
    const [action, a, b] = flags.args as [string, string?, string?];
    const dataDir = flags.get("data-dir");
    const paths = etcdPaths(dataDir);
    const fail = (message: string) => {
      context.stderr.write(`${context.command}: ${message}\n`);
      return 1;
    };
    const member = loadMemberConfig(paths);
    if (member === undefined) return fail(`${dataDir} holds no etcd member (${paths.config}): give the data folder of a server started with --cluster-init or --control-plane`);
    if (action === "snapshot" && a === "restore") return restore(b!, dataDir, context.stdout, fail);
    const endpoints = flags.get("endpoints").length > 0 ? [...flags.get("endpoints")] : [member.clientUrl];
    const cluster = new EtcdCluster({ endpoints, tls: etcdClientTls(paths) });
    try {
      if (action === "members") {
        printMembers(context.stdout, await cluster.members());
        return 0;
      }
      if (action === "remove") {
        const members = await cluster.members();
        const target = members.find((m) => m.name === a || m.ID === a);
        if (target === undefined) return fail(`no member named ${a} (members: ${members.map((m) => m.name || m.ID).join(", ")})`);
        if (members.length === 1) return fail(`${a} is the only member: removing it would leave no cluster`);
        const left = await cluster.remove(target.ID);
        context.stdout.write(`member ${target.name || target.ID} (${target.ID}) removed; ${left.length} left\n`);
        if (target.name === member.name) {
          // This data folder's own member: set it aside so a server started here does not run a removed member.
          const aside = `${paths.dir}.removed-${Date.now()}`;
          renameSync(paths.dir, aside);
          context.stdout.write(`its data folder was this one: ${paths.dir} moved to ${aside} (a server started here now needs --cluster-init or --join ... --control-plane with an empty --data-dir)\n`);
        }
        return 0;
      }
      if (existsSync(b!)) return fail(`${b} exists; refusing to overwrite it`);
      const bytes = await cluster.snapshot(b!);
      context.stdout.write(`snapshot of ${endpoints[0]} saved to ${b} (${bytes} bytes)\n`);
      return 0;
    } catch (err) {
      return fail((err as Error).message);
    } finally {
      cluster.close();
    }
  },
});

function printMembers(out: Output, members: EtcdMemberInfo[]): void {
  const rows = [["NAME", "ID", "PEER URLS", "CLIENT URLS"], ...members.map((m) => [m.name || "(not started)", m.ID, m.peerURLs.join(","), m.clientURLs.join(",")])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) out.write(r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]! + 3))).join("") + "\n");
}

/**
 * Restores FILE as the data of this folder's member, as a new one-member
 * cluster (same name and peer URL), with `etcdctl snapshot restore` (etcd 3.4
 * has no etcdutl). The server must be stopped and the member's data moved away
 * by this command: it refuses while a server runs (the pid file's process).
 */
async function restore(file: string, dataDir: string, out: Output, fail: (m: string) => number): Promise<number> {
  const paths = etcdPaths(dataDir);
  const member = loadMemberConfig(paths)!;
  if (!existsSync(file) || !statSync(file).isFile()) return fail(`${file}: no such snapshot file`);
  if (existsSync(paths.pidFile)) {
    const pid = Number(readFileSync(paths.pidFile, "utf8").trim());
    if (pid > 0 && existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"))) {
      return fail(`the etcd member of ${dataDir} is running (pid ${pid}): stop the orch server first`);
    }
  }
  const etcdctl = ["/usr/bin/etcdctl", "/usr/local/bin/etcdctl"].find((p) => existsSync(p));
  if (etcdctl === undefined) return fail("etcdctl not found (apt-get install etcd-client)");
  const aside = `${paths.data}.before-restore-${Date.now()}`;
  if (existsSync(paths.data)) renameSync(paths.data, aside);
  const args = [
    "snapshot", "restore", file,
    `--data-dir=${paths.data}`,
    `--name=${member.name}`,
    `--initial-cluster=${member.name}=${member.peerUrl}`,
    `--initial-advertise-peer-urls=${member.peerUrl}`,
    "--initial-cluster-token=orch-etcd-cluster",
  ];
  const result = await new Promise<{ code: number; output: string }>((resolve) => {
    execFile(etcdctl, args, { env: { ...process.env, ETCDCTL_API: "3" } }, (err, stdout, stderr) => resolve({ code: err === null ? 0 : 1, output: `${stdout}${stderr}` }));
  });
  if (result.code !== 0) {
    if (existsSync(aside)) renameSync(aside, paths.data);
    return fail(`etcdctl snapshot restore failed:\n${result.output.trim()}`);
  }
  saveMemberConfig(paths, { ...member, initialCluster: `${member.name}=${member.peerUrl}`, initialClusterState: "new" });
  out.write(
    `restored ${file} into ${paths.data} as a one-member cluster (member ${member.name}); the previous data is in ${existsSync(aside) ? aside : "(none)"}\n` +
      `start the server again with the same --data-dir; other servers join it anew with an empty --data-dir (docs/ha.md)\n`,
  );
  return 0;
}
