// The metrics API's scrape loop against a node agent stand-in: a real HTTPS
// server on loopback that serves /metrics/resource or fails as told. What is
// checked here is the loop's logging: a failing node is logged when it starts
// failing or its error changes, and its recovery once, not every round; many
// nodes failing alike make one line.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { Node } from "../../api/core/types.js";
import { selfSignedServingCert } from "../../component/pki.js";
import { NodeAgentClient } from "../node-agents.js";
import { ResourceScraper } from "./scrape.js";

const EXPOSITION = [
  "node_cpu_usage_seconds_total 12.5 1700000000000",
  "node_memory_working_set_bytes 1048576 1700000000000",
  "",
].join("\n");

test("a node that keeps failing is logged when it starts and when its error changes; its recovery once", async () => {
  const serving = await selfSignedServingCert(["127.0.0.1"]);
  let answer: { status: number; body: string } = { status: 500, body: "no metrics here" };
  const server = createServer({ cert: serving.cert, key: serving.key }, (_req, res) => res.writeHead(answer.status).end(answer.body));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const node = agentNode("n1", port);
  const agents = new NodeAgentClient({ cert: serving.cert, key: serving.key });
  const lines: string[] = [];
  const scraper = new ResourceScraper({ agents, nodes: async () => [node], resolutionMs: 1000, log: (l) => lines.push(l) });
  try {
    for (let i = 0; i < 3; i++) await scraper.scrapeOnce();
    assert.equal(lines.length, 1, lines.join("\n"));
    assert.match(lines[0]!, /^metrics: scraping node n1: request failed, status: 500 no metrics here/);
    assert.equal(scraper.get("n1"), undefined);

    answer = { status: 404, body: "not found" };
    await scraper.scrapeOnce();
    await scraper.scrapeOnce();
    assert.equal(lines.length, 2, "a new error is logged once");
    assert.match(lines[1]!, /status: 404 not found/);

    answer = { status: 200, body: EXPOSITION };
    await scraper.scrapeOnce();
    await scraper.scrapeOnce();
    assert.deepEqual(lines.slice(2), ["metrics: scraping node n1: answers again"]);
    assert.equal(scraper.get("n1")?.node?.last.memory, 1048576);

    answer = { status: 500, body: "no metrics here" };
    await scraper.scrapeOnce();
    assert.equal(lines.length, 4, "failing again after a recovery is logged again");
  } finally {
    agents.close();
    server.close();
  }
});

test("nodes failing with the same error in one round make one line, as do their recoveries", async () => {
  const serving = await selfSignedServingCert(["127.0.0.1"]);
  let status = 404;
  const server = createServer({ cert: serving.cert, key: serving.key }, (_req, res) => res.writeHead(status).end(status === 200 ? EXPOSITION : "not found"));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const nodes = Array.from({ length: 7 }, (_, i) => agentNode(`n${i}`, port));
  const agents = new NodeAgentClient({ cert: serving.cert, key: serving.key });
  const lines: string[] = [];
  const scraper = new ResourceScraper({ agents, nodes: async () => nodes, resolutionMs: 1000, log: (l) => lines.push(l) });
  try {
    await scraper.scrapeOnce();
    await scraper.scrapeOnce();
    assert.deepEqual(lines, ["metrics: scraping 7 nodes (n0, n1, n2, n3, n4 and 2 more): request failed, status: 404 not found (logged again when the error changes)"]);
    status = 200;
    await scraper.scrapeOnce();
    assert.deepEqual(lines.slice(1), ["metrics: scraping 7 nodes (n0, n1, n2, n3, n4 and 2 more): answers again"]);
    assert.equal(scraper.all().size, 7);
  } finally {
    agents.close();
    server.close();
  }
});

function agentNode(name: string, port: number): Node {
  return {
    apiVersion: "v1", kind: "Node", metadata: { name },
    status: { addresses: [{ type: "InternalIP", address: "127.0.0.1" }], daemonEndpoints: { kubeletEndpoint: { Port: port } }, conditions: [{ type: "Ready", status: "True" }] },
  };
}
