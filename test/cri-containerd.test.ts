// The CRI conformance suite against a real containerd (Debian 1.6) with runc,
// started privately for this file; busybox images are built locally and
// imported with ctr. Skips with a reason where containerd cannot run (fails under CI=true).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runtimeConformance } from "../src/nodeagent/cri/testing/runtime.case.js";
import { buildBusyboxImage } from "./support/busybox-image.js";
import { BUSYBOX_IMAGE, containerdSkipReason, startContainerd } from "./support/containerd.js";

runtimeConformance("containerd", async () => {
  const skip = containerdSkipReason();
  if (skip !== undefined) return skip;
  const containerd = await startContainerd();
  const dir = mkdtempSync(join(tmpdir(), "orch-cri-containerd-"));
  await buildBusyboxImage({ file: join(dir, "busybox.tar") });
  await containerd.importImage(join(dir, "busybox.tar"));
  return {
    client: containerd.client,
    busybox: BUSYBOX_IMAGE,
    importImage: containerd.importImage,
    buildImage: (file, tag, files) => buildBusyboxImage({ file, tags: [tag], files }),
    dir,
    pullsLocalImages: false,
    hostNetwork: !containerd.cni,
    pidNamespace: true,
    async teardown() {
      await containerd.stop();
      rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
    },
  };
});
