// `orch server` defaults to --data-dir ./.orch: a relative runtime root must work
// (a `unix://.orch/...` URI would read ".orch" as its authority and bind elsewhere).

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CriClient } from "../../cri/index.js";
import { startEmbeddedRuntime } from "./index.js";

test("a relative root: the socket is bound under it, as an absolute path a client can dial", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-relative-root-"));
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    const runtime = await startEmbeddedRuntime({ root: ".orch/nodeagent/runtime", network: false });
    try {
      assert.equal(runtime.endpoint, `unix://${join(dir, ".orch/nodeagent/runtime/embedded.sock")}`);
      const client = new CriClient({ endpoint: runtime.endpoint });
      try {
        assert.equal((await client.version({ version: "v1" })).runtimeName, "orch-embedded");
      } finally {
        client.close();
      }
    } finally {
      await runtime.close();
    }
  } finally {
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true, maxRetries: 10 });
  }
});
