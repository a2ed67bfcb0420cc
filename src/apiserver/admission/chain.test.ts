import { test } from "node:test";
import assert from "node:assert/strict";
import { isApiError } from "../../machinery/index.js";
import { AdmissionChain, type AdmissionAttributes } from "./index.js";

const attrs = (over: Partial<AdmissionAttributes> = {}): AdmissionAttributes => ({
  operation: "CREATE",
  resource: { group: "", resource: "configmaps" },
  kind: "ConfigMap",
  subresource: undefined,
  namespace: "default",
  name: "c",
  object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } },
  oldObject: undefined,
  dryRun: false,
  ...over,
});

test("mutating plugins run in order before validating ones, and only on what they handle", async () => {
  const order: string[] = [];
  const chain = new AdmissionChain({
    mutating: [
      { name: "m1", admit: (a) => void order.push(`m1:${a.object!.metadata.name}`) },
      { name: "m2", handles: (a) => a.operation === "DELETE", admit: () => void order.push("m2") },
    ],
    validating: [{ name: "v1", validate: () => void order.push("v1") }],
  }).with({ mutating: [{ name: "m3", admit: async () => void order.push("m3") }] });
  await chain.admit(attrs());
  await chain.validate(attrs());
  assert.deepEqual(order, ["m1:c", "m3", "v1"]);
  assert.equal(new AdmissionChain().empty, true);
});

test("a plugin with side effects refuses dry runs it handles; None and NoneOnDryRun run", async () => {
  let ran = 0;
  const chain = new AdmissionChain({
    mutating: [
      { name: "quiet", sideEffects: "NoneOnDryRun", admit: () => void ran++ },
      { name: "loud", sideEffects: "Some", handles: (a) => a.kind === "ConfigMap", admit: () => void ran++ },
    ],
  });
  await chain.admit(attrs());
  assert.equal(ran, 2);
  await assert.rejects(chain.admit(attrs({ dryRun: true })), (e: unknown) => isApiError(e, "BadRequest") && e.message === 'admission plugin "loud" has side effects and does not support dry run');
  await chain.admit(attrs({ dryRun: true, kind: "Secret" }));
});
