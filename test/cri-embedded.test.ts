// The CRI conformance suite against the embedded runtime, with busybox images
// built from the host's /bin/busybox and imported into its image store: over
// its socket, and called in process as the node agent calls it.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CriClient } from "../src/nodeagent/cri/index.js";
import { runtimeConformance } from "../src/nodeagent/cri/testing/runtime.case.js";
import { startEmbeddedRuntime } from "../src/nodeagent/runtime/embedded/index.js";
import { importArchive } from "../src/nodeagent/runtime/images/archive.js";
import { buildBusyboxImage, busyboxSkipReason } from "./support/busybox-image.js";

for (const via of ["socket", "in process"] as const) runtimeConformance(`embedded runtime (${via})`, async () => {
  const skip = busyboxSkipReason();
  if (skip !== undefined) return skip;
  const dir = mkdtempSync(join(tmpdir(), "orch-cri-embedded-"));
  const runtime = await startEmbeddedRuntime({ root: join(dir, "runtime") });
  const client = new CriClient({ endpoint: runtime.endpoint, timeoutMs: 20_000, ...(via === "in process" ? { inProcess: runtime.inProcess } : {}) });
  const importImage = async (file: string): Promise<void> => {
    await importArchive(runtime.service.images, file);
  };
  await buildBusyboxImage({ file: join(dir, "busybox.tar") });
  await importImage(join(dir, "busybox.tar"));
  return {
    client,
    busybox: "busybox",
    importImage,
    buildImage: (file, tag, files) => buildBusyboxImage({ file, tags: [tag], files }),
    dir,
    pullsLocalImages: true,
    hostNetwork: !(await client.status({})).status!.conditions.some((c) => c.type === "NetworkReady" && c.reason !== "HostNetwork"),
    pidNamespace: runtime.service.isolation.namespaces,
    async teardown() {
      client.close();
      await runtime.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
    },
  };
});
