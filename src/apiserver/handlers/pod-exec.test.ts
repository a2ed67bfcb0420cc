import { test } from "node:test";
import assert from "node:assert/strict";
import { agentStreamQuery } from "./pod-exec.js";

test("PodExecOptions become the agent's parameters (stdin → input, stdout → output, stderr → error)", () => {
  const q = agentStreamQuery("exec", new URLSearchParams("command=sh&command=-c&command=echo+hi&stdin=true&stdout=true&tty=true&container=c"));
  assert.equal(q.toString(), "command=sh&command=-c&command=echo+hi&input=1&output=1&tty=1");
});

test("a command and at least one stream are required, with upstream's messages", () => {
  assert.throws(() => agentStreamQuery("exec", new URLSearchParams("stdout=true")), /you must specify at least one command for the container/);
  assert.throws(() => agentStreamQuery("exec", new URLSearchParams("command=ls")), /you must specify at least 1 of stdin, stdout, stderr/);
});

test("attach takes no command", () => {
  assert.equal(agentStreamQuery("attach", new URLSearchParams("stdout=true&stderr=true&command=ignored")).toString(), "output=1&error=1");
});
