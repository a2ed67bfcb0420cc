// For suites that drive a real in-process API server through the client, as
// our components do: one server with the built-in API and one RestClient on
// it, started before the suite's tests and closed after them (node:test hooks).

import { after, before } from "node:test";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../../apiserver/testing/harness.js";
import { loadKubeconfig } from "../kubeconfig.js";
import { RestClient } from "../rest.js";

/**
 * Registers the hooks in the current suite (or file); `started` receives the
 * client and the server once both are up, before the first test runs.
 */
export function serveBuiltinApi(started: (client: RestClient, server: TestServer) => void): void {
  let server: TestServer | undefined;
  let client: RestClient | undefined;
  before(async () => {
    server = await startTestServer({ modules: builtinModules() });
    client = new RestClient(loadKubeconfig(server.server.kubeconfigPath));
    started(client, server);
  });
  after(async () => {
    client?.close();
    await server?.close();
  });
}
