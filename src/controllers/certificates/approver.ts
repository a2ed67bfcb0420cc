// The CSR approver (upstream's csrapproving controller): a node agent's
// client certificate request (CN system:node:NAME, O system:nodes, client
// usages) is approved when its requester may create
// `certificatesigningrequests/selfnodeclient` and asks for its own name (a
// renewal), or may create `certificatesigningrequests/nodeclient` (a
// bootstrap token). The check is upstream's SubjectAccessReview, evaluated
// here against the cluster's ClusterRoles and ClusterRoleBindings (the same
// rule matching as the RBAC authorizer). Anything else is left for a person
// (`kubectl certificate approve`).

import { WorkQueue, keyOf } from "../../client/index.js";
import { CONDITION, parseCsr, signerNames, type CertificateSigningRequest } from "../../api/certificates/index.js";
import { appliesTo, ruleAllows, type ClusterRole, type RoleBinding, type RuleUser } from "../../api/rbac/index.js";
import { formatTimestamp } from "../../machinery/index.js";
import { nowMs, type ControllerContext, type ControllerDescriptor } from "../controller.js";
import { runQueue } from "../run-queue.js";
import { awaitsApproval, csrResource, nodeClientProblem } from "./common.js";

export const csrApprovingController: ControllerDescriptor = {
  name: "csrapproving-controller",
  aliases: ["csrapproving"],
  enabledByDefault: true,
  run: (context) => new CsrApprover(context).run(),
};

const SYSTEM_MASTERS = "system:masters";

export class CsrApprover {
  readonly #ctx: ControllerContext;
  readonly #queue = new WorkQueue({ name: "csrapproving", baseDelayMs: 200, maxDelayMs: 60_000 });

  constructor(context: ControllerContext) {
    this.#ctx = context;
  }

  #rbac(resource: string) {
    return this.#ctx.informers.informerFor<ClusterRole | RoleBinding>({ resource: { group: this.#ctx.naming.rbacGroup, version: "v1", resource, namespaced: false } });
  }

  async run(): Promise<void> {
    const csrs = this.#ctx.informers.informerFor<CertificateSigningRequest>({ resource: csrResource(this.#ctx.naming) });
    this.#rbac("clusterroles");
    this.#rbac("clusterrolebindings");
    const add = (csr: CertificateSigningRequest) => {
      if (awaitsApproval(csr)) this.#queue.add(keyOf(csr));
    };
    csrs.addEventHandler({ onAdd: add, onUpdate: (_old, csr) => add(csr) });
    await runQueue(this.#ctx, { name: "csrapproving-controller", queue: this.#queue, workers: 1, describe: (k) => `certificatesigningrequest ${k}`, process: (key) => this.sync(key) });
  }

  /** Approves one request when the rules allow it; exported for tests. */
  async sync(name: string): Promise<void> {
    const { client, informers, naming } = this.#ctx;
    const csr = informers.informerFor<CertificateSigningRequest>({ resource: csrResource(naming) }).get(name);
    if (csr === undefined || !awaitsApproval(csr) || csr.spec?.signerName !== signerNames(naming).agentClient) return;
    let request;
    try {
      request = parseCsr(Buffer.from(csr.spec.request ?? "", "base64"));
    } catch {
      return; // validation let it in: nothing this controller reads
    }
    if (nodeClientProblem(request, csr.spec.usages ?? []) !== undefined) return;
    const user: RuleUser = { name: csr.spec.username ?? "", groups: csr.spec.groups ?? [] };
    let message: string | undefined;
    if (user.name === request.commonName && this.#allowed(user, "selfnodeclient")) message = "Auto approving self kubelet client certificate after SubjectAccessReview.";
    else if (this.#allowed(user, "nodeclient")) message = "Auto approving kubelet client certificate after SubjectAccessReview.";
    if (message === undefined) return;
    const now = formatTimestamp(new Date(nowMs(this.#ctx)));
    const updated = structuredClone(csr);
    (updated.status ??= {}).conditions = [...(updated.status.conditions ?? []), { type: CONDITION.approved, status: "True", reason: "AutoApproved", message, lastUpdateTime: now }];
    await client.update(csrResource(naming), updated, { subresource: "approval" });
    this.#ctx.log(`csrapproving-controller: approved certificatesigningrequest ${name} of ${user.name} for ${request.commonName}`);
  }

  /** May `user` create certificatesigningrequests/<subresource> (a cluster-wide SubjectAccessReview)? */
  #allowed(user: RuleUser, subresource: string): boolean {
    if (user.groups.includes(SYSTEM_MASTERS)) return true;
    const request = { resourceRequest: true, verb: "create", apiGroup: this.#ctx.naming.certificatesGroup, resource: "certificatesigningrequests", subresource, name: "", path: "" };
    const roles = this.#rbac("clusterroles");
    return (this.#rbac("clusterrolebindings").list() as RoleBinding[]).some((b) => {
      if (b.roleRef?.kind !== "ClusterRole" || !(b.subjects ?? []).some((s) => appliesTo(s, user, ""))) return false;
      const role = roles.get(b.roleRef.name ?? "") as ClusterRole | undefined;
      return (role?.rules ?? []).some((r) => ruleAllows(r, request));
    });
  }
}
