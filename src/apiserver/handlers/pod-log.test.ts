import { test } from "node:test";
import assert from "node:assert/strict";
import type { Node, Pod } from "../../api/core/types.js";
import { agentBaseUrl } from "../node-agents.js";
import { logContainer } from "./pod-log.js";

const pod = (containers: string[], init: string[] = []): Pod => ({
  apiVersion: "v1", kind: "Pod", metadata: { name: "p" },
  spec: { containers: containers.map((name) => ({ name })), initContainers: init.map((name) => ({ name })) },
} as Pod);
const message = (f: () => unknown) => {
  try {
    return f();
  } catch (err) {
    return `${(err as { code: number }).code} ${(err as Error).message}`;
  }
};

test("logContainer: the only container by default; with several, upstream's 400 naming them all", () => {
  assert.equal(logContainer(pod(["a"]), undefined), "a");
  assert.equal(message(() => logContainer(pod(["a", "b"], ["i"]), undefined)), "400 a container name must be specified for pod p, choose one of: [i a b]");
  assert.equal(message(() => logContainer(pod([]), undefined)), "400 a container name must be specified for pod p");
  assert.equal(logContainer(pod(["a", "b"], ["i"]), "i"), "i");
  assert.equal(message(() => logContainer(pod(["a"]), "z")), "400 container z is not valid for pod p");
});

test("agentBaseUrl: InternalIP before ExternalIP before Hostname, the advertised port (10250 when none); 503 with no address", () => {
  const node = (addresses: { type: string; address: string }[], port?: number): Node =>
    ({ apiVersion: "v1", kind: "Node", metadata: { name: "n" }, status: { addresses, ...(port ? { daemonEndpoints: { kubeletEndpoint: { Port: port } } } : {}) } }) as Node;
  assert.equal(agentBaseUrl(node([{ type: "Hostname", address: "h" }, { type: "InternalIP", address: "10.0.0.2" }], 4321)), "https://10.0.0.2:4321");
  assert.equal(agentBaseUrl(node([{ type: "Hostname", address: "h" }])), "https://h:10250");
  assert.equal(agentBaseUrl(node([{ type: "InternalIP", address: "fd00::1" }], 1)), "https://[fd00::1]:1");
  assert.equal(message(() => agentBaseUrl(node([]))), "503 no preferred addresses found; known addresses: []");
});
