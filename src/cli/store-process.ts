// Until the API server lands, `orch apiserver` and `orch server` run the
// storage layer alone: open the configured backend, compact it on
// --compaction-interval, log one line when ready, stop on SIGINT/SIGTERM.

import { formatDuration, type ParsedFlags } from "../component/index.js";
import { openStorage, startCompactor } from "../storage/index.js";
import type { apiserverFlags } from "./apiserver.js";
import type { RunContext } from "./command.js";

export async function runStore(flags: ParsedFlags<typeof apiserverFlags>, context: RunContext): Promise<number> {
  const log = (line: string) => context.stderr.write(`${context.command}: ${line}\n`);
  const backend = flags.get("storage-backend");
  const { store } = await openStorage({
    backend,
    dataDir: flags.get("data-dir"),
    etcdServers: [...flags.get("etcd-servers")],
    log,
  });
  const interval = flags.get("compaction-interval");
  const compactor = startCompactor(store, { intervalMs: interval, log });
  const stats = await store.stats();
  log(
    `store ready: backend=${store.backend} ${backend === "lmdb" ? `file=${flags.get("data-dir")}/store.mdb ` : ""}` +
      `revision=${stats.revision} keys=${stats.keyCount} compaction=${interval > 0 ? formatDuration(interval) : "off"}`,
  );
  // Nothing else holds the event loop open yet: keep the process alive until a signal.
  const keepAlive = setInterval(() => {}, 1 << 30);
  await new Promise<void>((resolve) => {
    if (context.signal.aborted) resolve();
    context.signal.addEventListener("abort", () => resolve(), { once: true });
  });
  clearInterval(keepAlive);
  compactor.stop();
  await store.close();
  log("stopped");
  return 0;
}
