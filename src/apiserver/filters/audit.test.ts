// The audit filter in a chain of its own, for what the real server cannot
// show yet: an impersonation filter after it (issue 14's, being written)
// swaps ctx.user, and the event records the impersonated user beside the
// authenticated one; an internal error is the Panic stage.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";
import { parsePolicy } from "../audit/policy.js";
import { auditFilter } from "./audit.js";
import { compose, requestContext, type Filter, type UserInfo } from "./context.js";
import type { Encoding } from "../http/respond.js";

const POLICY = parsePolicy("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n", ["audit.k8s.io"]);
const ALICE: UserInfo = { name: "alice", uid: "u-1", groups: ["dev", "system:authenticated"] };
const BOB: UserInfo = { name: "bob", groups: ["system:authenticated"] };

function exchange(path: string) {
  const socket = new Socket();
  const req = new IncomingMessage(socket);
  req.method = "GET";
  req.url = path;
  req.headers = { "user-agent": "test/1.0", "x-forwarded-for": "10.0.0.7, 10.0.0.8" };
  const res = new ServerResponse(req);
  res.assignSocket(new PassThrough() as unknown as Socket);
  return requestContext({ kind: "response", req, res });
}

async function run(path: string, chain: Filter[], handler: (ctx: ReturnType<typeof exchange>) => Promise<void>) {
  const lines: string[] = [];
  const ctx = exchange(path);
  ctx.user = ALICE;
  const filter = auditFilter({ policy: POLICY, sink: { write: (l) => void lines.push(l), close: () => {} }, apiVersion: "audit.k8s.io/v1", encoding: {} as Encoding });
  let thrown: unknown;
  try {
    await compose([filter, ...chain], handler)(ctx);
  } catch (err) {
    thrown = err;
  }
  return { events: lines.map((l) => JSON.parse(l)), thrown, header: ctx.exchange.kind === "response" ? ctx.exchange.res.getHeader("audit-id") : undefined };
}

const impersonate: Filter = (ctx, next) => {
  ctx.user = BOB;
  return next();
};
const ok = async (ctx: ReturnType<typeof exchange>) => {
  if (ctx.exchange.kind === "response") ctx.exchange.res.writeHead(200).end("{}");
};

describe("audit filter", () => {
  test("impersonated: user is the authenticated one, impersonatedUser the one the request ran as", async () => {
    const { events, header } = await run("/api/v1/namespaces/default/configmaps/x", [impersonate], ok);
    assert.deepEqual(events.map((e) => e.stage), ["RequestReceived", "ResponseComplete"]);
    const done = events[1];
    assert.equal(done.auditID, header);
    assert.deepEqual(done.user, { username: "alice", uid: "u-1", groups: ["dev", "system:authenticated"] });
    assert.deepEqual(done.impersonatedUser, { username: "bob", groups: ["system:authenticated"] });
    // The request is received before impersonation runs, as upstream.
    assert.equal(events[0].impersonatedUser, undefined);
    assert.deepEqual(done.sourceIPs, ["10.0.0.7", "10.0.0.8"]);
    assert.equal(done.userAgent, "test/1.0");
    assert.deepEqual(done.objectRef, { resource: "configmaps", namespace: "default", name: "x", apiVersion: "v1" });
  });

  test("not impersonated: no impersonatedUser", async () => {
    const { events } = await run("/api/v1/namespaces/default/configmaps/x", [], ok);
    assert.equal(events[1].impersonatedUser, undefined);
    assert.deepEqual(events[1].responseStatus, { metadata: {}, code: 200 });
  });

  test("an internal error is the Panic stage with a 500, and still thrown for the errors filter", async () => {
    const { events, thrown } = await run("/api/v1/namespaces/default/configmaps/x", [], async () => {
      throw new Error("boom");
    });
    assert.equal((thrown as Error).message, "boom");
    assert.deepEqual(events.map((e) => e.stage), ["RequestReceived", "Panic"]);
    assert.deepEqual(events[1].responseStatus, { metadata: {}, code: 500, status: "Failure", reason: "InternalError", message: "APIServer panic'd: boom" });
  });

  test("a non-resource request has no objectRef and its method as verb", async () => {
    const { events } = await run("/version", [], ok);
    assert.equal(events[1].objectRef, undefined);
    assert.equal(events[1].verb, "get");
    assert.equal(events[1].requestURI, "/version");
  });
});
