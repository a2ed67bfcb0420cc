// The filter chain on its own (fake requests, no server), then the real
// server's chain as a client meets it: requests and HTTP/1.1 Upgrades alike.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { request as httpsRequest } from "node:https";
import { isApiError } from "../../machinery/index.js";
import type { Incoming, Outgoing } from "../http/respond.js";
import { sampleApi } from "../testing/sample-api.js";
import { startTestServer, type TestServer } from "../testing/harness.js";
import { ADMIN, ANONYMOUS, authenticationFilter, TokenAuthenticator, type Authenticator } from "./authentication.js";
import { alwaysAllow, authorizationFilter, type Authorizer } from "./authorization.js";
import { compose, requestContext, type Filter, type RequestContext, type UserInfo } from "./context.js";

const TOKEN = "s3cret";
const alice: UserInfo = { name: "alice", groups: ["team-b", "system:authenticated"] };

function contextFor(method: string, target: string, headers: Record<string, string> = {}): RequestContext {
  const req = { method, url: target, headers } as unknown as Incoming;
  return requestContext({ kind: "response", req, res: {} as Outgoing });
}

/** Runs `filters` around a handler that records it ran; resolves with the context and what ran, or rejects with the filter's error. */
async function run(filters: Filter[], ctx: RequestContext): Promise<{ ctx: RequestContext; handled: boolean }> {
  let handled = false;
  await compose(filters, async () => {
    handled = true;
  })(ctx);
  return { ctx, handled };
}

test("compose runs the filters in order around the handler; one that throws stops the ones after it", async () => {
  const trace: string[] = [];
  const step = (name: string): Filter => async (_ctx, next) => {
    trace.push(`${name} in`);
    await next();
    trace.push(`${name} out`);
  };
  const handler = async () => void trace.push("handler");
  await compose([step("a"), step("b")], handler)(contextFor("GET", "/api"));
  assert.deepEqual(trace, ["a in", "b in", "handler", "b out", "a out"]);

  trace.length = 0;
  const boom: Filter = () => {
    trace.push("boom");
    throw new Error("refused");
  };
  await assert.rejects(compose([step("a"), boom, step("c")], handler)(contextFor("GET", "/api")), /refused/);
  assert.deepEqual(trace, ["a in", "boom"], "neither c nor the handler ran, and a saw the error (no 'a out')");

  trace.length = 0;
  const stop: Filter = async () => void trace.push("answered");
  await compose([stop, step("c")], handler)(contextFor("GET", "/api"));
  assert.deepEqual(trace, ["answered"], "a filter that does not call next ends the request there");
});

test("token authenticator: no header, another scheme, a wrong token, the right one", () => {
  const tokens = new TokenAuthenticator(new Map([[TOKEN, ADMIN]]));
  const req = (authorization?: string) => ({ headers: authorization === undefined ? {} : { authorization } }) as unknown as Incoming;
  assert.equal(tokens.authenticate(req()), undefined);
  assert.equal(tokens.authenticate(req(`Basic ${TOKEN}`)), undefined);
  assert.equal(tokens.authenticate(req("Bearer wrong")), undefined);
  assert.equal(tokens.authenticate(req("Bearer ")), undefined);
  assert.equal(tokens.authenticate(req(TOKEN)), undefined);
  assert.equal(tokens.authenticate(req(`Bearer ${TOKEN}`)), ADMIN);
});

describe("authentication filter", () => {
  const filter = authenticationFilter({ authenticators: [new TokenAuthenticator(new Map([[TOKEN, ADMIN]]))] });
  const W = "/apis/samples.orch.io/v1/namespaces/default/widgets";

  test("no token or a wrong one: 401 Unauthorized, and nothing after it runs", async () => {
    for (const headers of [{}, { authorization: "Bearer wrong" }] as Record<string, string>[]) {
      let handled = false;
      await assert.rejects(
        compose([filter], async () => void (handled = true))(contextFor("GET", W, headers)),
        (err: unknown) => isApiError(err, "Unauthorized") && err.status.code === 401 && err.status.message === "Unauthorized",
      );
      assert.equal(handled, false);
    }
  });

  test("the right token: the request is the admin's", async () => {
    const { ctx, handled } = await run([filter], contextFor("GET", W, { authorization: `Bearer ${TOKEN}` }));
    assert.equal(handled, true);
    assert.equal(ctx.user, ADMIN);
  });

  test("public paths pass without credentials (or with wrong ones) as system:anonymous; with the token they are the admin's", async () => {
    for (const path of ["/healthz", "/livez", "/readyz/etcd", "/version"]) {
      for (const headers of [{}, { authorization: "Bearer wrong" }] as Record<string, string>[]) {
        const { ctx, handled } = await run([filter], contextFor("GET", path, headers));
        assert.equal(handled, true, path);
        assert.deepEqual(ctx.user, ANONYMOUS, path);
      }
      assert.equal((await run([filter], contextFor("GET", path, { authorization: `Bearer ${TOKEN}` }))).ctx.user, ADMIN);
    }
    await assert.rejects(run([filter], contextFor("GET", "/metrics")), (err: unknown) => isApiError(err, "Unauthorized"));
  });

  test("authenticators are tried in order; the first user found wins", async () => {
    const calls: string[] = [];
    const named = (name: string, user: UserInfo | undefined): Authenticator => ({
      authenticate: async () => {
        calls.push(name);
        return user;
      },
    });
    const chain = authenticationFilter({ authenticators: [named("certificates", undefined), named("tokens", alice), named("never", ADMIN)] });
    const { ctx } = await run([chain], contextFor("GET", W));
    assert.equal(ctx.user, alice);
    assert.deepEqual(calls, ["certificates", "tokens"]);
  });
});

describe("authorization filter", () => {
  const as = (user: UserInfo): Filter => async (ctx, next) => {
    ctx.user = user;
    return next();
  };
  const decide = (decision: "Allow" | "Deny" | "NoOpinion", reason?: string): Authorizer => ({ authorize: () => ({ decision, ...(reason ? { reason } : {}) }) });

  test("AlwaysAllow lets an authenticated user do everything", async () => {
    for (const [method, path] of [["DELETE", "/api/v1/namespaces/kube-system/pods"], ["GET", "/metrics"], ["POST", "/api/v1/nodes"]] as const) {
      assert.equal((await run([as(alice), authorizationFilter({ authorizers: [alwaysAllow] })], contextFor(method, path))).handled, true);
    }
  });

  test("the authorizer sees the request attributes; the first decision wins; none allowing is a 403 in upstream's words", async () => {
    let seen: unknown;
    const spy: Authorizer = {
      authorize: (user, a) => {
        seen = [user.name, a.verb, a.resource, a.subresource, a.namespace, a.name];
        return { decision: "NoOpinion" };
      },
    };
    const allowing = await run([as(alice), authorizationFilter({ authorizers: [spy, decide("Allow"), decide("Deny")] })], contextFor("POST", "/api/v1/namespaces/team-b/pods/web/exec"));
    assert.equal(allowing.handled, true);
    assert.deepEqual(seen, ["alice", "create", "pods", "exec", "team-b", "web"]);

    const cases: Array<[method: string, path: string, authorizers: Authorizer[], message: string]> = [
      ["GET", "/api/v1/namespaces/team-b/pods", [decide("NoOpinion")],
        'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"'],
      ["GET", "/apis/apps/v1/deployments/x/scale", [decide("Deny", "denied by policy"), decide("Allow")],
        'deployments.apps "x" is forbidden: User "alice" cannot get resource "deployments/scale" in API group "apps" at the cluster scope: denied by policy'],
      ["GET", "/metrics", [],
        'forbidden: User "alice" cannot get path "/metrics"'],
      ["DELETE", "/api/v1/namespaces/team-b", [decide("NoOpinion", "no node rule"), decide("NoOpinion", "no RBAC rule")],
        'namespaces "team-b" is forbidden: User "alice" cannot delete resource "namespaces" in API group "" in the namespace "team-b": no node rule\nno RBAC rule'],
    ];
    for (const [method, path, authorizers, message] of cases) {
      let handled = false;
      await assert.rejects(
        compose([as(alice), authorizationFilter({ authorizers })], async () => void (handled = true))(contextFor(method, path)),
        (err: unknown) => isApiError(err, "Forbidden") && err.status.code === 403 && err.status.message === message,
        `${method} ${path}`,
      );
      assert.equal(handled, false);
    }
  });
});

describe("the server's chain", () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ modules: [sampleApi] });
  });
  after(async () => t.close());

  /** An HTTP/1.1 Upgrade as kubectl exec sends it (SPDY); resolves with the answer the server wrote on the socket. */
  const upgrade = (path: string, headers: Record<string, string>) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpsRequest({
        host: "127.0.0.1", port: t.server.port, ca: t.server.credentials.caCertPem, method: "POST", path,
        headers: { connection: "Upgrade", upgrade: "SPDY/3.1", ...headers },
      });
      req.on("response", (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("upgrade", () => reject(new Error("upgraded")));
      req.on("error", reject);
      req.end();
    });

  test("an Upgrade passes the same authentication: without the token 401, with it on to routing", async () => {
    const path = "/api/v1/namespaces/default/pods/web/exec?command=ls&stdout=true";
    for (const headers of [{}, { authorization: "Bearer wrong" }] as Record<string, string>[]) {
      const refused = await upgrade(path, headers);
      assert.equal(refused.status, 401);
      assert.deepEqual([JSON.parse(refused.body).kind, JSON.parse(refused.body).reason], ["Status", "Unauthorized"]);
    }
    const routed = await upgrade(path, { authorization: `Bearer ${t.server.credentials.adminToken}` });
    assert.equal(routed.status, 400, "authenticated, then refused by the router: the sample API serves no pods/exec");
    assert.match(JSON.parse(routed.body).message, /served only by connect sub-resources/);
  });

  test("requests: 401 without the token, public paths without it, and the metrics count both", async () => {
    const W = "/apis/samples.orch.io/v1/namespaces/default/widgets";
    assert.equal((await t.request("GET", W, { headers: { authorization: "" } })).status, 401);
    assert.equal((await t.request("GET", "/healthz", { headers: { authorization: "" } })).status, 200);
    assert.equal((await t.request("GET", W)).status, 200);
    const scraped = (await t.request("GET", "/metrics")).text;
    assert.match(scraped, /apiserver_request_total\{code="401",component="apiserver",dry_run="",group="samples.orch.io",resource="widgets",scope="namespace",subresource="",verb="LIST",version="v1"\} 1/);
    assert.match(scraped, /apiserver_request_total\{code="200",component="apiserver",dry_run="",group="samples.orch.io",resource="widgets",scope="namespace",subresource="",verb="LIST",version="v1"\} 1/);
  });
});
