// The component base over real HTTPS: every endpoint and negotiation case,
// the gates on and off, and scraper authentication against a real API server
// (in-process harness, lmdb) with its admin token and client certificates of
// its CA.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { issueClientCert } from "./pki.js";
import { sampleApi } from "../apiserver/testing/sample-api.js";
import { startTestServer, type TestServer } from "../apiserver/testing/harness.js";
import { loadKubeconfig } from "../client/kubeconfig.js";
import { apiServerCheck } from "../client/api-server-check.js";
import { flag } from "./flags.js";
import { FlagSet } from "./flags.js";
import { parseFeatureGates } from "./feature-gates.js";
import { startComponentServer, type RunningComponentServer } from "./component-server.js";
import { assertExposesMetric, decodeMetricFamilies } from "./metrics/testing.js";
import { httpsGet } from "./testing/https-get.js";

const STATUSZ_JSON = "application/json;v=v1beta1;g=config.orch.io;as=Statusz";
const FLAGZ_JSON = "application/json;v=v1beta1;g=config.orch.io;as=Flagz";
const PROTOBUF = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited";

function parsedFlags() {
  const set = new FlagSet({
    command: "orch test-component",
    description: "test",
    flags: {
      kubeconfig: flag.string({ description: "k" }),
      "secret-token": flag.string({ description: "s", sensitive: true }),
      "secure-port": flag.int({ description: "p", default: 10259 }),
    },
  });
  const outcome = set.parse(["--secret-token=hunter2", "--kubeconfig=/x"]);
  assert.ok(!outcome.help);
  return outcome.flags;
}

describe("component server", () => {
  let api: TestServer;
  let token: string;
  let c: RunningComponentServer;
  let off: RunningComponentServer;
  let ready = false;

  before(async () => {
    api = await startTestServer({ modules: [sampleApi] });
    token = api.server.credentials.adminToken;
    const apiServer = loadKubeconfig(api.server.kubeconfigPath);
    c = await startComponentServer({
      name: "orch-test", bindAddress: "127.0.0.1", port: 0, log: () => {},
      featureGates: parseFeatureGates({ NativeHistograms: "true" }),
      flags: parsedFlags(), apiServer: apiServerCheck(apiServer),
      extra: { "/tree/": (_req, res, url) => void res.end(`under ${url.pathname}`) },
      readyChecks: [{ name: "informer-sync", check() { if (!ready) throw new Error("informers have not synced"); } }],
    });
    off = await startComponentServer({
      name: "orch-off", bindAddress: "127.0.0.1", port: 0, log: () => {}, apiServer: apiServerCheck(apiServer),
      featureGates: parseFeatureGates({ ComponentStatusz: "false", ComponentFlagz: "false" }),
    });
  });
  after(async () => {
    await c?.close();
    await off?.close();
    await api?.close();
  });

  test("health endpoints: named checks, ?verbose, ?exclude, /readyz/NAME; public without credentials", async () => {
    assert.deepEqual(await text(`${c.url}/livez`), [200, "ok"]);
    assert.deepEqual(await text(`${c.url}/livez?verbose`), [200, "[+]ping ok\n[+]log ok\nlivez check passed\n"]);
    const [code, body] = await text(`${c.url}/readyz`);
    assert.equal(code, 500);
    assert.equal(body, "[+]ping ok\n[+]log ok\n[-]informer-sync failed: reason withheld\nreadyz check failed\n");
    assert.deepEqual(await text(`${c.url}/readyz/informer-sync`), [500, "internal server error: informers have not synced\n"]);
    assert.deepEqual(await text(`${c.url}/readyz?exclude=informer-sync&verbose`),
      [200, "[+]ping ok\n[+]log ok\n[+]informer-sync excluded: ok\nreadyz check passed\n"]);
    assert.deepEqual(await text(`${c.url}/healthz?exclude=nope`), [500,
      "[+]ping ok\n[+]log ok\n[-]informer-sync failed: reason withheld\nwarn: some health checks cannot be excluded: no matches for \"nope\"\nhealthz check failed\n"]);
    ready = true;
    assert.deepEqual(await text(`${c.url}/readyz`), [200, "ok"]);
    assert.deepEqual(await text(`${c.url}/healthz/ping`), [200, "ok"]);
    assert.equal((await httpsGet(`${c.url}/healthz/nope`)).status, 404);
    assert.equal((await httpsGet(`${c.url}/livez/informer-sync`)).status, 404, "readiness checks are not liveness checks");
  });

  test("/version is public JSON with upstream's fields", async () => {
    const res = await httpsGet(`${c.url}/version`);
    assert.equal(res.status, 200);
    const v = JSON.parse(res.text);
    for (const k of ["major", "minor", "gitVersion", "gitCommit", "buildDate", "goVersion", "platform"]) assert.ok(k in v, k);
    assert.match(v.goVersion, /^node\d+/);
    // The API release orch is compatible with, orch's own version as build metadata (as k3s does).
    assert.deepEqual([v.major, v.minor], ["1", "33"]);
    assert.match(v.gitVersion, /^v1\.33\.0\+orch\.\d+\.\d+\.\d+$/);
  });

  test("metrics need credentials: 401 without, 401 for a bad token, 200 with the admin token or a client certificate of the cluster CA", async () => {
    assert.equal((await httpsGet(`${c.url}/metrics`)).status, 401);
    assert.equal((await httpsGet(`${c.url}/metrics`, { token: "not-a-token" })).status, 401);
    assert.equal((await httpsGet(`${c.url}/metrics`, { token })).status, 200);
    const ca = { cert: readFileSync(join(api.dataDir, "ca.crt"), "utf8"), key: readFileSync(join(api.dataDir, "ca.key"), "utf8") };
    const clientCert = await issueClientCert(ca, "prometheus");
    assert.equal((await httpsGet(`${c.url}/metrics`, { clientCert })).status, 200);
    const { selfSignedServingCert } = await import("./pki.js");
    const stranger = await selfSignedServingCert();
    // Signed with a key that is not the cluster CA's: presented, but not trusted.
    const foreign = await issueClientCert({ cert: stranger.ca, key: stranger.key }, "mallory");
    assert.equal((await httpsGet(`${c.url}/metrics`, { clientCert: foreign })).status, 401);
    // The serving certificate is self-signed but verifiable with the chain it presents.
    assert.equal((await httpsGet(`${c.url}/livez`, { ca: c.servingCert })).status, 200);
  });

  test("an extra path ending in / serves every path below it, behind the same auth; /statusz lists it", async () => {
    assert.equal((await httpsGet(`${c.url}/tree/a/b`)).status, 401);
    assert.equal((await httpsGet(`${c.url}/tree/a/b`, { token })).text, "under /tree/a/b");
    assert.equal((await httpsGet(`${c.url}/treetop`, { token })).status, 404);
    assert.ok(c.endpoints.paths().includes("/tree/"));
  });

  test("/metrics: text 0.0.4 by default, OpenMetrics and protobuf when asked; build info and gates", async () => {
    c.metrics.histogram({ name: "test_seconds", help: "T.", buckets: [0.1, 1] }).observe({}, 0.3);
    const plain = await httpsGet(`${c.url}/metrics`, { token });
    assert.equal(plain.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
    assertExposesMetric(plain.text, { name: "orch_build_info", kind: "gauge", labels: ["build_date", "compiler", "git_commit", "git_tree_state", "git_version", "go_version", "major", "minor", "platform"] });
    assertExposesMetric(plain.text, { name: "orch_feature_enabled", kind: "gauge", labels: ["name", "stage"] });
    assert.match(plain.text, /^orch_feature_enabled\{name="NativeHistograms",stage="ALPHA"\} 1$/m);
    assert.match(plain.text, /^orch_feature_enabled\{name="ComponentSLIs",stage=""\} 1$/m);
    assertExposesMetric(plain.text, { name: "registered_metrics_total", kind: "counter", labels: ["deprecated_version", "stability_level"] });
    assert.ok(!plain.text.includes("schema"), "text carries classic buckets only");

    const om = await httpsGet(`${c.url}/metrics`, { token, headers: { accept: "application/openmetrics-text;version=1.0.0,text/plain;q=0.5" } });
    assert.match(String(om.headers["content-type"]), /^application\/openmetrics-text; version=1.0.0/);
    assert.ok(om.text.endsWith("# EOF\n"));

    const pb = await httpsGet(`${c.url}/metrics`, { token, headers: { accept: `${PROTOBUF},text/plain;q=0.5` } });
    assert.match(String(pb.headers["content-type"]), /^application\/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited/);
    const h = decodeMetricFamilies(pb.body).find((f) => f.name === "test_seconds")!.metric[0]!.histogram!;
    assert.equal(h.sampleCount, 1);
    assert.deepEqual(h.positiveBuckets.map(([, n]) => n), [1], "native buckets with the gate on");
    assert.equal(h.bucket.length, 2, "classic buckets too");
  });

  test("NativeHistograms off: protobuf keeps classic buckets only; orch_feature_enabled says 0", async () => {
    off.metrics.histogram({ name: "test_seconds", help: "T.", buckets: [1] }).observe({}, 0.3);
    const pb = await httpsGet(`${off.url}/metrics`, { token, headers: { accept: PROTOBUF } });
    const h = decodeMetricFamilies(pb.body).find((f) => f.name === "test_seconds")!.metric[0]!.histogram!;
    assert.equal(h.positiveBuckets.length, 0);
    assert.equal(h.zeroThreshold, 0);
    const plain = await httpsGet(`${off.url}/metrics`, { token });
    assert.match(plain.text, /^orch_feature_enabled\{name="NativeHistograms",stage="ALPHA"\} 0$/m);
  });

  test("/metrics/slis: orch_healthcheck and orch_healthchecks_total counted as checks run", async () => {
    await httpsGet(`${c.url}/readyz`);
    await httpsGet(`${c.url}/healthz`);
    const res = await httpsGet(`${c.url}/metrics/slis`, { token });
    assert.equal(res.status, 200);
    assertExposesMetric(res.text, { name: "orch_healthcheck", kind: "gauge", labels: ["name", "type"] });
    assertExposesMetric(res.text, { name: "orch_healthchecks_total", kind: "counter", labels: ["name", "status", "type"] });
    assert.match(res.text, /^orch_healthcheck\{name="informer-sync",type="readyz"\} 1$/m);
    assert.match(res.text, /^orch_healthchecks_total\{name="informer-sync",status="error",type="readyz"\} [1-9]/m);
    assert.match(res.text, /^orch_healthchecks_total\{name="ping",status="success",type="healthz"\} [1-9]/m);
    assert.ok(!res.text.includes("registered_metrics_total"), "only the health indicators");
  });

  test("/statusz: text with title and warning; structured JSON; 406 without g, v and as", async () => {
    const t = await httpsGet(`${c.url}/statusz`, { token });
    assert.equal(t.status, 200);
    const lines = t.text.split("\n");
    assert.equal(lines[0], "orch-test statusz");
    assert.match(lines[1]!, /^Warning: This endpoint is not meant to be machine parseable/);
    assert.match(t.text, /^Paths: \/flagz \/healthz \/livez \/metrics \/metrics\/slis \/readyz \/statusz \/tree\/ \/version$/m);

    const j = await httpsGet(`${c.url}/statusz`, { token, headers: { accept: STATUSZ_JSON } });
    assert.equal(j.status, 200);
    const body = JSON.parse(j.text);
    assert.equal(body.kind, "Statusz");
    assert.equal(body.apiVersion, "config.orch.io/v1beta1");
    assert.equal(body.metadata.name, "orch-test");
    assert.match(body.startTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(typeof body.uptimeSeconds, "number");
    assert.equal(typeof body.binaryVersion, "string");
    assert.match(body.emulationVersion, /^\d+\.\d+$/);
    assert.match(body.minimumCompatibilityVersion, /^\d+\.\d+$/);
    assert.ok(body.paths.includes("/metrics"));
    assert.ok(typeof body.goVersion === "string");

    for (const accept of ["application/json", "application/json;v=v1beta1;as=Statusz", "application/json;g=config.orch.io;as=Statusz", "application/json;v=v1beta1;g=config.orch.io", "application/json;v=v1beta1;g=config.orch.io;as=Flagz"]) {
      assert.equal((await httpsGet(`${c.url}/statusz`, { token, headers: { accept } })).status, 406, accept);
    }
    assert.equal((await httpsGet(`${c.url}/statusz`, { token, headers: { accept: "application/json;v=v1beta1;g=config.k8s.io;as=Statusz" } })).status, 200, "upstream's group spelling");
    assert.equal((await httpsGet(`${c.url}/statusz`)).status, 401, "not public");
  });

  test("/flagz: text and structured, confidential values redacted", async () => {
    const t = await httpsGet(`${c.url}/flagz`, { token });
    assert.equal(t.text.split("\n")[0], "orch-test flagz");
    assert.match(t.text, /^kubeconfig=\/x$/m);
    assert.match(t.text, /^secret-token=CLASSIFIED$/m);
    assert.ok(!t.text.includes("hunter2"));
    const j = await httpsGet(`${c.url}/flagz`, { token, headers: { accept: FLAGZ_JSON } });
    const body = JSON.parse(j.text);
    assert.equal(body.kind, "Flagz");
    assert.equal(body.apiVersion, "config.orch.io/v1beta1");
    assert.deepEqual(body.flags, { kubeconfig: "/x", "secret-token": "CLASSIFIED", "secure-port": "10259" });
    assert.equal((await httpsGet(`${c.url}/flagz`, { token, headers: { accept: "application/json" } })).status, 406);
  });

  test("gates ComponentStatusz and ComponentFlagz off: 404, and /statusz is not listed", async () => {
    assert.equal((await httpsGet(`${off.url}/statusz`, { token })).status, 404);
    assert.equal((await httpsGet(`${off.url}/flagz`, { token })).status, 404);
    assert.equal((await httpsGet(`${off.url}/metrics`, { token })).status, 200);
  });
});

async function text(url: string): Promise<[number, string]> {
  const res = await httpsGet(url);
  return [res.status, res.text];
}
