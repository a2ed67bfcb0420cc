// The ClusterRole aggregation controller (upstream's
// clusterrole-aggregation-controller): a ClusterRole with an aggregationRule
// gets, as its rules, the union of the rules of the ClusterRoles its
// clusterRoleSelectors match (api/rbac/aggregation.ts computes it). Any
// ClusterRole change may change any union, so every change queues every
// aggregated role; a pass writes only when the union differs. Roles that
// aggregate each other (view → edit → admin) settle in as many passes.

import type { ClusterRole } from "../../api/rbac/types.js";
import { aggregateRules, sameRules } from "../../api/rbac/aggregation.js";
import { clusterRoleResource } from "../../api/resource-refs.js";
import { WorkQueue, type Informer } from "../../client/index.js";
import { selectorFromLabelSelector, type LabelSelector } from "../../machinery/index.js";
import type { ControllerContext, ControllerDescriptor } from "../controller.js";
import { runQueue } from "../run-queue.js";

export const clusterRoleAggregationController: ControllerDescriptor = {
  name: "clusterrole-aggregation-controller",
  aliases: ["clusterrole-aggregation"],
  enabledByDefault: true,
  run: (context) => new ClusterRoleAggregationController(context).run(),
};

export class ClusterRoleAggregationController {
  readonly #ctx: ControllerContext;
  readonly #queue = new WorkQueue({ name: "ClusterRoleAggregator", baseDelayMs: 5, maxDelayMs: 60_000 });
  readonly #roles: Informer<ClusterRole>;

  constructor(context: ControllerContext) {
    this.#ctx = context;
    this.#roles = context.informers.informerFor<ClusterRole>({ resource: clusterRoleResource(context.naming) });
  }

  async run(): Promise<void> {
    const enqueueAll = () => {
      for (const role of this.#roles.list()) if (role.aggregationRule != null) this.#queue.add(role.metadata.name!);
    };
    this.#roles.addEventHandler({ onAdd: enqueueAll, onUpdate: enqueueAll, onDelete: enqueueAll });
    await runQueue(this.#ctx, { name: "clusterrole-aggregation-controller", queue: this.#queue, workers: 1, informers: [this.#roles], process: (name) => this.sync(name) });
  }

  /** Writes the union of the selected roles' rules into the aggregated role `name` when it differs; exported for tests. */
  async sync(name: string): Promise<void> {
    const role = this.#roles.get(name);
    if (role === undefined || role.aggregationRule == null) return;
    const all = this.#roles.list();
    const sources: ClusterRole[] = [];
    for (const raw of role.aggregationRule.clusterRoleSelectors ?? []) {
      // An invalid selector is a 400 from the parser: thrown, logged and retried, as upstream's.
      const selector = selectorFromLabelSelector(raw as LabelSelector);
      const matching = all.filter((r) => r.metadata.name !== name && selector.matches(r.metadata.labels));
      sources.push(...matching.sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1)));
    }
    const rules = aggregateRules(sources);
    if (sameRules(rules, role.rules)) return;
    // The cached object's resourceVersion guards the write: a Conflict is retried from the newer cache.
    await this.#ctx.client.update<ClusterRole>(clusterRoleResource(this.#ctx.naming), { ...role, rules });
  }
}
