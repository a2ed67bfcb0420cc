// --use-service-account-credentials against a real server in RBAC mode: each
// controller gets its own account in the system namespace (made by the
// manager), a token of it, and exactly the bootstrap role
// system:controller:<account>. A controller's identity is refused what its
// role lacks (403); the Deployment, ReplicaSet and Job loops still do their
// work under their roles; a controller without an account keeps the
// manager's credentials.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { builtinModules } from "../api/index.js";
import { DEPLOYMENTS, JOBS, NAMESPACES, PODS, REPLICASETS, SECRETS, SERVICE_ACCOUNTS } from "../api/resource-refs.js";
import { startTestServer, type TestServer } from "../apiserver/testing/harness.js";
import { RestClient, loadKubeconfig } from "../client/index.js";
import { isApiError, type ApiObject } from "../machinery/index.js";
import { namingFor } from "../machinery/naming.js";
import type { ControllerContext, ControllerDescriptor } from "./controller.js";
import { runControllerManager, CONTROLLERS } from "./manager.js";
import { eventually } from "./testing.js";

const naming = namingFor();
const NS = "team";

describe("--use-service-account-credentials", () => {
  let t: TestServer;
  let admin: RestClient;
  const abort = new AbortController();
  const seen = new Map<string, ControllerContext>();
  let manager: Promise<void>;
  const lines: string[] = [];

  /** A controller that keeps the context it was given, to act with its client in the test. */
  const probe = (name: string): ControllerDescriptor => ({
    name, enabledByDefault: true,
    run: async (ctx) => {
      seen.set(name, ctx);
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
    },
  });

  before(async () => {
    t = await startTestServer({ modules: builtinModules(), authorizationModes: ["RBAC"] });
    admin = new RestClient(loadKubeconfig(t.server.kubeconfigPath));
    await admin.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    const real = CONTROLLERS.filter((c) => ["deployment-controller", "replicaset-controller", "job-controller"].includes(c.name));
    manager = runControllerManager({
      client: admin, naming, signal: abort.signal, log: (l) => lines.push(l), leaderElect: false, useServiceAccountCredentials: true,
      available: [...real, probe("endpoints-controller"), probe("token-cleaner-controller"), probe("no-such-account")],
      controllers: ["deployment-controller", "replicaset-controller", "job-controller", "endpoints-controller", "token-cleaner-controller", "no-such-account"],
      config: { jobBackoffBaseMs: 10 },
    });
    await eventually("the probes' contexts", () => seen.size === 3, 20_000);
  });
  after(async () => {
    abort.abort();
    await manager;
    admin.close();
    await t.close();
  });

  const whoami = async (client: RestClient) => {
    const r = await client.create({ group: naming.authenticationGroup, version: "v1", resource: "selfsubjectreviews", namespaced: false } as never,
      { apiVersion: `${naming.authenticationGroup}/v1`, kind: "SelfSubjectReview", metadata: {} } as ApiObject) as unknown as { status: { userInfo: { username: string } } };
    return r.status.userInfo.username;
  };

  test("each controller talks as <system namespace>/<account>, made by the manager; one without an account keeps the manager's identity", async () => {
    assert.equal(await whoami(seen.get("endpoints-controller")!.client), `system:serviceaccount:${naming.systemNamespace}:endpoint-controller`);
    assert.equal(await whoami(seen.get("token-cleaner-controller")!.client), `system:serviceaccount:${naming.systemNamespace}:token-cleaner`);
    assert.equal(await whoami(seen.get("no-such-account")!.client), "admin");
    for (const account of ["endpoint-controller", "token-cleaner", "deployment-controller", "replicaset-controller", "job-controller"]) {
      await admin.get(SERVICE_ACCOUNTS, { namespace: naming.systemNamespace, name: account });
    }
  });

  test("a controller's identity is refused what its role lacks (403), and allowed what it has", async () => {
    const endpoints = seen.get("endpoints-controller")!.client;
    await assert.rejects(endpoints.list(SECRETS, { namespace: NS }), (err: unknown) => {
      assert.ok(isApiError(err) && err.code === 403, String(err));
      assert.match((err as Error).message, new RegExp(`User "system:serviceaccount:${naming.systemNamespace}:endpoint-controller" cannot list resource "secrets" in API group "" in the namespace "${NS}"`));
      return true;
    });
    await assert.rejects(endpoints.create(DEPLOYMENTS, { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "x", namespace: NS }, spec: {} } as ApiObject), (err: unknown) => isApiError(err) && err.code === 403);
    assert.ok(Array.isArray((await endpoints.list(PODS, { namespace: NS })).items), "its role reads pods");
    // The token cleaner's role is a Role in the system namespace only (upstream's).
    const cleaner = seen.get("token-cleaner-controller")!.client;
    await cleaner.list(SECRETS, { namespace: naming.systemNamespace });
    await assert.rejects(cleaner.list(SECRETS, { namespace: NS }), (err: unknown) => isApiError(err) && err.code === 403);
  });

  test("the Deployment and ReplicaSet loops roll out under their roles; the Job loop completes a Job", async () => {
    const labels = { app: "web" };
    const template = { metadata: { labels }, spec: { containers: [{ name: "c", image: "busybox" }] } };
    await admin.create(DEPLOYMENTS, { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: NS }, spec: { replicas: 2, selector: { matchLabels: labels }, template } } as ApiObject);
    await eventually("the ReplicaSet and its 2 pods", async () => {
      const sets = (await admin.list(REPLICASETS, { namespace: NS })).items;
      const pods = (await admin.list(PODS, { namespace: NS, labelSelector: labels })).items;
      return sets.length === 1 && pods.length === 2;
    }, 20_000);
    await admin.create(JOBS, { apiVersion: "batch/v1", kind: "Job", metadata: { name: "once", namespace: NS }, spec: { template: { spec: { ...template.spec, restartPolicy: "Never" } } } } as ApiObject);
    const pod = await eventually("the Job's pod", async () => (await admin.list(PODS, { namespace: NS, labelSelector: { "job-name": "once" } })).items[0], 20_000);
    // No node agent here: the test plays the agent and reports the pod succeeded.
    await admin.update(PODS, { ...pod, status: { phase: "Succeeded", containerStatuses: [] } } as ApiObject, { subresource: "status" });
    await eventually("the Job complete", async () => {
      const job = await admin.get(JOBS, { namespace: NS, name: "once" }) as ApiObject & { status?: { succeeded?: number; conditions?: { type: string; status: string }[] } };
      return job.status?.conditions?.some((c) => c.type === "Complete" && c.status === "True");
    }, 20_000);
    assert.ok(!lines.some((l) => /forbidden/i.test(l)), `no controller was refused anything:\n${lines.filter((l) => /forbidden/i.test(l)).join("\n")}`);
  });
});
