// Audit end to end: a real server with a policy and a log file; requests
// over HTTPS, then the log's JSON lines read back (levels, stages, objectRef,
// responseStatus, user, Audit-ID, bodies only where the level asks for them,
// secrets at Metadata); rotation by size and age; a malformed policy stops
// the start.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinModules } from "../../api/index.js";
import { startTestServer, type TestServer } from "../testing/harness.js";

const POLICY = `
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
  # The usual first rule: secrets' contents never reach the log.
  - level: Metadata
    resources:
      - group: ""
        resources: [secrets]
  - level: None
    nonResourceURLs: ["/healthz*", "/readyz*", "/livez*"]
  - level: Request
    verbs: [update]
    resources:
      - group: ""
        resources: [configmaps]
  - level: RequestResponse
    omitManagedFields: true
    resources:
      - group: ""
        resources: [configmaps]
  - level: Metadata
`;

const CMS = "/api/v1/namespaces/default/configmaps";
const SECRETS = "/api/v1/namespaces/default/secrets";
const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const SECRET_VALUE = Buffer.from("hunter2-top-secret").toString("base64");

function events(file: string): any[] {
  return readFileSync(file, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

describe("audit log", () => {
  let s: TestServer;
  let dir: string;
  let log: string;
  const ids: Record<string, string> = {};

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "orch-audit-"));
    writeFileSync(join(dir, "policy.yaml"), POLICY);
    log = join(dir, "logs", "audit.log");
    s = await startTestServer({ modules: builtinModules(), audit: { policyFile: join(dir, "policy.yaml"), logPath: log } });
    const step = async (name: string, method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
      const r = await s.request(method, path, { ...(body !== undefined ? { body } : {}), ...(headers ? { headers } : {}) });
      const id = r.headers["audit-id"];
      assert.equal(typeof id, "string", `${name}: Audit-ID header`);
      ids[name] = id as string;
      return r;
    };
    assert.equal((await step("create-cm", "POST", CMS, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm1" }, data: { k: "v" } })).status, 201);
    assert.equal((await step("get-cm", "GET", `${CMS}/cm1`)).status, 200);
    assert.equal((await step("update-cm", "PUT", `${CMS}/cm1`, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm1" }, data: { k: "v2" } })).status, 200);
    assert.equal((await step("list-cm", "GET", CMS)).status, 200);
    assert.equal((await step("delete-cm", "DELETE", `${CMS}/cm1`)).status, 200);
    assert.equal((await step("get-missing", "GET", `${CMS}/nope`)).status, 404);
    assert.equal((await step("create-secret", "POST", SECRETS, { apiVersion: "v1", kind: "Secret", metadata: { name: "s1" }, data: { password: SECRET_VALUE } })).status, 201);
    assert.equal((await step("get-secret", "GET", `${SECRETS}/s1`)).status, 200);
    assert.equal((await step("delete-secret", "DELETE", `${SECRETS}/s1`)).status, 200);
    assert.equal((await step("watch-cm", "GET", `${CMS}?watch=1&timeoutSeconds=1`)).status, 200);
    assert.equal((await step("healthz", "GET", "/healthz")).status, 200);
    assert.equal((await step("bad-token", "GET", CMS, undefined, { authorization: "Bearer wrong" })).status, 401);
    assert.equal((await step("given-id", "GET", `${CMS}/nope`, undefined, { "audit-id": "my-own-audit-id" })).status, 404);
  });
  after(async () => {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const of = (name: string) => events(log).filter((e) => e.auditID === ids[name]);
  const complete = (name: string) => {
    const found = of(name).filter((e) => e.stage === "ResponseComplete");
    assert.equal(found.length, 1, `${name}: one ResponseComplete event in ${JSON.stringify(of(name))}`);
    return found[0];
  };

  test("every event is an audit.orch.io/v1 Event with microsecond timestamps and the admin user", () => {
    const all = events(log);
    assert.ok(all.length >= 20, `${all.length} events`);
    for (const e of all) {
      assert.equal(e.kind, "Event");
      assert.equal(e.apiVersion, "audit.orch.io/v1");
      assert.match(e.requestReceivedTimestamp, MICRO_TIME);
      assert.match(e.stageTimestamp, MICRO_TIME);
      assert.ok(e.stageTimestamp >= e.requestReceivedTimestamp);
      assert.deepEqual(e.sourceIPs, ["127.0.0.1"]);
    }
    const e = complete("get-cm");
    assert.equal(e.user.username, "admin");
    assert.deepEqual(e.user.groups, ["system:masters", "system:authenticated"]);
  });

  test("the Audit-ID header is the events' auditID (a UUID, or the one the request gave)", () => {
    assert.match(ids["create-cm"]!, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.deepEqual(of("create-cm").map((e) => e.stage), ["RequestReceived", "ResponseComplete"]);
    assert.equal(ids["given-id"], "my-own-audit-id");
    assert.equal(complete("given-id").responseStatus.code, 404);
  });

  test("RequestResponse: a configmap create records verb, objectRef, code and both bodies (managedFields omitted)", () => {
    const e = complete("create-cm");
    assert.equal(e.level, "RequestResponse");
    assert.equal(e.verb, "create");
    assert.equal(e.requestURI, CMS);
    assert.deepEqual(e.objectRef, { resource: "configmaps", namespace: "default", name: "cm1", apiVersion: "v1" });
    assert.deepEqual(e.responseStatus, { metadata: {}, code: 201 });
    assert.deepEqual(e.requestObject.data, { k: "v" });
    assert.equal(e.responseObject.metadata.name, "cm1");
    assert.ok(e.responseObject.metadata.uid);
    assert.equal(e.responseObject.metadata.managedFields, undefined);
    // The RequestReceived stage carries no bodies and no status.
    const received = of("create-cm").find((x) => x.stage === "RequestReceived");
    assert.equal(received.responseStatus, undefined);
    assert.equal(received.responseObject, undefined);
  });

  test("get, list and delete of a configmap", () => {
    const get = complete("get-cm");
    assert.equal(get.verb, "get");
    assert.equal(get.responseObject.data.k, "v");
    assert.equal(get.requestObject, undefined);
    const list = complete("list-cm");
    assert.equal(list.verb, "list");
    assert.deepEqual(list.objectRef, { resource: "configmaps", namespace: "default", apiVersion: "v1" });
    assert.equal(list.responseObject.kind, "ConfigMapList");
    const del = complete("delete-cm");
    assert.equal(del.verb, "delete");
    assert.equal(del.objectRef.name, "cm1");
    assert.equal(del.responseStatus.code, 200);
  });

  test("Request: the request body only", () => {
    const e = complete("update-cm");
    assert.equal(e.level, "Request");
    assert.equal(e.verb, "update");
    assert.deepEqual(e.requestObject.data, { k: "v2" });
    assert.equal(e.responseObject, undefined);
  });

  test("an error: responseStatus has code, status, reason and message", () => {
    const e = complete("get-missing");
    assert.equal(e.responseStatus.code, 404);
    assert.equal(e.responseStatus.status, "Failure");
    assert.equal(e.responseStatus.reason, "NotFound");
    assert.equal(e.responseStatus.message, 'configmaps "nope" not found');
    assert.equal(e.responseObject.kind, "Status");
  });

  test("secrets at Metadata per policy: no bodies, the value never in the log", () => {
    for (const name of ["create-secret", "get-secret", "delete-secret"]) {
      const e = complete(name);
      assert.equal(e.level, "Metadata", name);
      assert.equal(e.objectRef.resource, "secrets");
      assert.equal(e.requestObject, undefined);
      assert.equal(e.responseObject, undefined);
    }
    assert.equal(complete("create-secret").responseStatus.code, 201);
    assert.equal(complete("get-secret").objectRef.name, "s1");
    assert.ok(!readFileSync(log, "utf8").includes(SECRET_VALUE), "the secret's value is not in the log");
  });

  test("a watch is long-running: ResponseStarted, then ResponseComplete, no response body", () => {
    const stages = of("watch-cm").map((e) => e.stage);
    assert.deepEqual(stages, ["RequestReceived", "ResponseStarted", "ResponseComplete"]);
    const started = of("watch-cm")[1];
    assert.equal(started.verb, "watch");
    assert.equal(started.responseStatus.code, 200);
    assert.equal(complete("watch-cm").responseObject, undefined);
  });

  test("level None records nothing; a failed authentication is recorded with no user", () => {
    assert.deepEqual(of("healthz"), []);
    const e = of("bad-token");
    assert.equal(e.length, 1);
    assert.equal(e[0].stage, "ResponseStarted");
    assert.equal(e[0].responseStatus.code, 401);
    assert.equal(e[0].user.username, "");
  });
});

describe("audit log rotation and policy errors", () => {
  test("rotation by size (--audit-log-maxsize in MB) into NAME-<timestamp>.EXT; old and surplus backups go", async () => {
    const dir = mkdtempSync(join(tmpdir(), "orch-audit-rotate-"));
    const policy = join(dir, "policy.json");
    writeFileSync(policy, JSON.stringify({ apiVersion: "audit.k8s.io/v1", kind: "Policy", omitStages: ["RequestReceived"], rules: [{ level: "RequestResponse", verbs: ["create"] }] }));
    const log = join(dir, "audit.log");
    const old = join(dir, "audit-2020-01-01T00-00-00.000.log");
    writeFileSync(old, "{}\n");
    const s = await startTestServer({ modules: builtinModules(), audit: { policyFile: policy, logPath: log, maxSizeMB: 1, maxAgeDays: 30, maxBackups: 2 } });
    try {
      const big = "x".repeat(400 * 1024);
      const create = async (name: string) =>
        assert.equal((await s.request("POST", CMS, { body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { big } } })).status, 201);
      const backups = () => readdirSync(dir).filter((f) => f !== "audit.log" && f.endsWith(".log")).sort();
      // Each create is one ~800 KB event (request and response): the second one no longer fits in 1 MB.
      await create("big1");
      assert.deepEqual(backups(), ["audit-2020-01-01T00-00-00.000.log"]);
      await create("big2");
      assert.equal(existsSync(old), false, "the backup older than --audit-log-maxage is gone");
      assert.equal(backups().length, 1);
      assert.match(backups()[0]!, /^audit-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}\.log$/);
      assert.equal(events(join(dir, backups()[0]!))[0].objectRef.name, "big1");
      await create("big3");
      await create("big4");
      assert.equal(backups().length, 2, "--audit-log-maxbackup=2 keeps two");
      assert.deepEqual(backups().map((f) => events(join(dir, f))[0].objectRef.name), ["big2", "big3"]);
      assert.deepEqual(events(log).map((e) => e.objectRef.name), ["big4"]);
      for (const f of [...backups(), "audit.log"]) assert.ok(readFileSync(join(dir, f)).length <= 1024 * 1024, f);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a malformed policy file: the server refuses to start, saying what is wrong", async () => {
    const dir = mkdtempSync(join(tmpdir(), "orch-audit-bad-"));
    try {
      const policy = join(dir, "policy.yaml");
      writeFileSync(policy, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Verbose\n");
      await assert.rejects(
        startTestServer({ modules: builtinModules(), dataDir: join(dir, "data"), audit: { policyFile: policy, logPath: join(dir, "audit.log") } }),
        (err: Error) => err.message === `audit policy file ${policy}: rules[0].level: Unsupported value: "Verbose": supported values: "None", "Metadata", "Request", "RequestResponse"`,
      );
      await assert.rejects(
        startTestServer({ modules: builtinModules(), dataDir: join(dir, "data"), audit: { policyFile: join(dir, "missing.yaml"), logPath: join(dir, "audit.log") } }),
        /audit policy file .*missing\.yaml: ENOENT/,
      );
      assert.equal(existsSync(join(dir, "audit.log")), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
