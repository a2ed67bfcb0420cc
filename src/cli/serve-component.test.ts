// serveComponent from a real command line (orch cloud-controller-manager's
// flags): the port, --client-ca-file, --disabled-metrics and
// --show-hidden-metrics-for-version reach the server and its registry.

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { ensureCredentials, issueClientCert } from "../component/pki.js";
import { FlagSet, parseFeatureGates, type FlagDecls } from "../component/index.js";
import { httpsGet } from "../component/testing/https-get.js";
import { command } from "./cloud-controller-manager.js";
import type { RunContext } from "./command.js";
import { serveComponent } from "./serve-component.js";

test("serveComponent takes its port, client CA and metrics flags from the command line", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orch-serve-component-"));
  const controller = new AbortController();
  try {
    const credentials = await ensureCredentials(dir);
    const clientCert = await issueClientCert({ cert: credentials.caCertPem, key: readFileSync(join(dir, "ca.key"), "utf8") }, "scraper");
    const set = new FlagSet({ command: "orch cloud-controller-manager", flags: command.flags as FlagDecls });
    const outcome = set.parse([
      "--secure-port=0", `--client-ca-file=${join(dir, "ca.crt")}`, "--disabled-metrics=orch_build_info",
      "--show-hidden-metrics-for-version=1.35", "--feature-gates=ComponentFlagz=false",
    ]);
    assert.ok(!outcome.help);
    const context: RunContext = {
      command: "orch cloud-controller-manager", stdout: { write: () => true }, stderr: { write: () => true },
      featureGates: parseFeatureGates({ ComponentFlagz: "false" }), signal: controller.signal,
    };
    const server = await serveComponent({ name: "cloud-controller-manager", flags: outcome.flags, context });
    try {
      const metrics = await httpsGet(`${server.url}/metrics`, { clientCert });
      assert.equal(metrics.status, 200, metrics.text);
      assert.ok(!metrics.text.includes("orch_build_info{"), "disabled");
      assert.match(metrics.text, /^disabled_metrics_total 1$/m);
      assert.equal((await httpsGet(`${server.url}/flagz`, { clientCert })).status, 404, "gate off");
      const statusz = await httpsGet(`${server.url}/statusz`, { clientCert });
      assert.equal(statusz.text.split("\n")[0], "cloud-controller-manager statusz");
      assert.equal((await httpsGet(`${server.url}/metrics`)).status, 401, "no certificate, no token");
    } finally {
      await server.close();
    }
    assert.throws(() => set.parse(["--show-hidden-metrics-for-version=1.2"]), /Only the previous minor version is allowed/);
  } finally {
    controller.abort();
    rmSync(dir, { recursive: true, force: true });
  }
});
