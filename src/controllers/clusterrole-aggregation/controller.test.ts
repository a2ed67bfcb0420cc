// The ClusterRole aggregation controller against a real API server and its
// bootstrap policy: a new ClusterRole labelled aggregate-to-view extends
// view, and through view's and edit's labels edit and admin too; removing the
// label takes the rules away again; a custom aggregated role gets the union
// of the roles its selectors match, each rule once, in name order; an invalid
// selector is refused by validation.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { clusterRoleResource } from "../../api/resource-refs.js";
import type { ClusterRole, PolicyRule } from "../../api/rbac/types.js";
import { controllerOnTestServer, eventually } from "../testing.js";
import { ClusterRoleAggregationController } from "./controller.js";

const GROUP = "rbac.authorization.orch.io";
const WIDGETS: PolicyRule = { verbs: ["get", "list", "watch"], apiGroups: ["example.com"], resources: ["widgets"] };

describe("clusterrole aggregation controller", () => {
  const fixture = controllerOnTestServer((ctx) => new ClusterRoleAggregationController(ctx));
  const CLUSTERROLES = clusterRoleResource();
  const get = (name: string) => fixture.ctx.client.get<ClusterRole>(CLUSTERROLES, { name });
  const has = (role: ClusterRole, rule: PolicyRule) => (role.rules ?? []).some((r) => JSON.stringify(r) === JSON.stringify(rule));
  const create = (name: string, labels: Record<string, string>, rules: PolicyRule[], extra: Partial<ClusterRole> = {}) =>
    fixture.ctx.client.create<ClusterRole>(CLUSTERROLES, { apiVersion: `${GROUP}/v1`, kind: "ClusterRole", metadata: { name, labels }, rules, ...extra });

  test("a ClusterRole labelled aggregate-to-view extends view, then edit and admin; without the label it leaves them", async () => {
    const viewBefore = await get("view");
    assert.ok(!has(viewBefore, WIDGETS));
    await create("widget-viewer", { [`${GROUP}/aggregate-to-view`]: "true" }, [WIDGETS]);
    for (const name of ["view", "edit", "admin"]) await eventually(`${name} to get the widget rule`, async () => has(await get(name), WIDGETS));
    const view = await get("view");
    assert.deepEqual(view.rules, [...(viewBefore.rules ?? []), WIDGETS], "the new role's rules after system:aggregate-to-view's (name order)");

    const role = await get("widget-viewer");
    await fixture.ctx.client.update(CLUSTERROLES, { ...role, metadata: { ...role.metadata, labels: {} } });
    for (const name of ["view", "edit", "admin"]) await eventually(`${name} to lose the widget rule`, async () => !has(await get(name), WIDGETS));
    assert.deepEqual((await get("view")).rules, viewBefore.rules);
  });

  test("a custom aggregated role: the union of the matching roles, each rule once, its own rules replaced", async () => {
    const a: PolicyRule = { verbs: ["get"], apiGroups: [""], resources: ["pods"] };
    const b: PolicyRule = { verbs: ["list"], apiGroups: [""], resources: ["secrets"] };
    const c: PolicyRule = { verbs: ["get"], nonResourceURLs: ["/metrics"] };
    await create("part-b", { team: "x" }, [b, a]);
    await create("part-a", { team: "x" }, [a]);
    await create("part-c", { monitoring: "yes" }, [c]);
    await create("part-other", { team: "y" }, [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }]);
    await create("team-x", {}, [{ verbs: ["delete"], apiGroups: [""], resources: ["nodes"] }], {
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { team: "x" } }, { matchExpressions: [{ key: "monitoring", operator: "Exists" }] }] },
    });
    const role = await eventually("team-x to aggregate", async () => {
      const r = await get("team-x");
      return (r.rules ?? []).length === 3 ? r : undefined;
    });
    assert.deepEqual(role.rules, [a, b, c]);
    // A role that matches its own selector is not its own source.
    const self = await create("self", { team: "x" }, [], { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { team: "x" } }] } });
    assert.ok(self);
    await eventually("self to aggregate", async () => ((await get("self")).rules ?? []).length === 2);
    assert.deepEqual((await get("self")).rules, [a, b]);
  });

  test("an invalid selector is refused at the API (upstream's validation), so the controller never meets one", async () => {
    const body = (selectors: object[]) => ({ apiVersion: `${GROUP}/v1`, kind: "ClusterRole", metadata: { name: "bad-selector" }, aggregationRule: { clusterRoleSelectors: selectors } });
    const bogus = await fixture.t.request("POST", `/apis/${GROUP}/v1/clusterroles`, { body: body([{ matchExpressions: [{ key: "k", operator: "Bogus" }] }]) });
    assert.equal(bogus.status, 422, bogus.text);
    assert.match(bogus.json.message, /aggregationRule.clusterRoleSelectors\[0\].matchExpressions\[0\].operator: Invalid value: "Bogus": not a valid selector operator/);
    const none = await fixture.t.request("POST", `/apis/${GROUP}/v1/clusterroles`, { body: body([]) });
    assert.equal(none.status, 422, none.text);
    assert.match(none.json.message, /aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil/);
  });
});
