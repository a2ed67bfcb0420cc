// Starts a real `orch` on a chosen storage backend: lmdb (embedded), or etcd
// (a private etcd started first and stopped with it), so end-to-end tests and
// benchmarks run the same scenario on both without repeating the plumbing.

import { startEtcd, type StartEtcdOptions } from "../../src/storage/etcd/testing/etcd-server.js";
import { startOrch, type OrchProcess } from "./orch-process.js";

export type Backend = "lmdb" | "etcd";

export async function startOrchOn(backend: Backend, subcommand = "apiserver", options: { etcd?: StartEtcdOptions; args?: string[] } = {}): Promise<OrchProcess> {
  if (backend === "lmdb") return startOrch(subcommand, options.args ?? []);
  const etcd = await startEtcd(options.etcd);
  let orch: OrchProcess;
  try {
    orch = await startOrch(subcommand, ["--storage-backend=etcd", `--etcd-servers=${etcd.endpoints.join(",")}`, ...(options.args ?? [])]);
  } catch (err) {
    await etcd.stop();
    throw err;
  }
  return {
    ...orch,
    async stop() {
      await orch.stop();
      await etcd.stop();
    },
  };
}
