// certificatesigningrequests (certificates.<suffix>/v1, cluster-scoped):
// upstream's strategies. The requester's identity (username, uid, groups,
// extra) is set by the server from the authenticated user on create, never
// taken from the body (a mutating admission step of the kind's own); the
// main resource changes only metadata; `approval` adds Approved/Denied
// conditions; `status` sets the certificate (once) and other conditions.
// `kubectl get csr` shows NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION.

import type { Naming } from "../../machinery/naming.js";
import type { MutatingPlugin } from "../admission.js";
import { defineResource, type ResourceDefinition, type Subresource } from "../resource.js";
import { formatAge, humanDuration, NAME_COLUMN, AGE_COLUMN } from "../table-format.js";
import { CERTIFICATES_V1 } from "./schemas.js";
import { CONDITION } from "./signers.js";
import type { CertificateSigningRequest, CertificateSigningRequestCondition } from "./types.js";
import { validateCsr, validateCsrUpdate } from "./validation.js";

/** Upstream's extractCSRStatus: Denied, Approved or Pending, then ",Failed" and ",Issued". */
export function csrCondition(csr: CertificateSigningRequest): string {
  const types = new Set((csr.status?.conditions ?? []).map((c) => c.type));
  let out = types.has(CONDITION.denied) ? "Denied" : types.has(CONDITION.approved) ? "Approved" : "Pending";
  if (types.has(CONDITION.failed)) out += ",Failed";
  if (csr.status?.certificate) out += ",Issued";
  return out;
}

/** The requester's identity from the authenticated user, whatever the body said (upstream's PrepareForCreate). */
const requester: MutatingPlugin = {
  name: "CertificateSigningRequestRequester",
  handles: (attrs) => attrs.operation === "CREATE" && attrs.subresource === undefined,
  admit(attrs) {
    const csr = attrs.object as CertificateSigningRequest;
    const spec = (csr.spec ??= {});
    delete spec.username;
    delete spec.uid;
    delete spec.groups;
    delete spec.extra;
    const user = attrs.request?.user;
    if (user === undefined) return;
    spec.username = user.name;
    if (user.uid) spec.uid = user.uid;
    if (user.groups.length > 0) spec.groups = [...user.groups];
    const extra = Object.entries(user.extra ?? {});
    if (extra.length > 0) spec.extra = Object.fromEntries(extra.map(([k, v]) => [k, [...v]]));
  },
};

/** Upstream's populateConditionTimestamps: unset times become now, or the old transition time of the same type and status. */
function stampConditions(next: CertificateSigningRequest, old: CertificateSigningRequest, now: string): void {
  for (const c of next.status?.conditions ?? []) {
    if (!c.lastUpdateTime) c.lastUpdateTime = now;
    if (!c.lastTransitionTime) {
      const before = (old.status?.conditions ?? []).find((o) => o.type === c.type && o.status === c.status && o.lastTransitionTime);
      c.lastTransitionTime = before?.lastTransitionTime ?? now;
    }
  }
}

function nowStamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

function conditionsOf(obj: CertificateSigningRequest): CertificateSigningRequestCondition[] {
  return structuredClone(obj.status?.conditions ?? []);
}

function csrSubresources(naming: Naming): Subresource<CertificateSigningRequest>[] {
  return [
    {
      name: "status",
      verbs: ["get", "patch", "update"],
      recordsManager: true,
      resetFields: { here: ["spec"], main: ["status"] },
      // The signer's path: spec as stored, Approved and Denied as stored, the certificate and other conditions from the input.
      prepareUpdate(input, current) {
        const next = structuredClone(current);
        next.metadata = input.metadata ?? next.metadata;
        next.status = structuredClone(input.status ?? {});
        for (const type of [CONDITION.approved, CONDITION.denied]) {
          const had = (current.status?.conditions ?? []).filter((c) => c.type === type);
          const at = (next.status.conditions ?? []).flatMap((c, i) => (c.type === type ? [i] : []));
          if (had.length === at.length) at.forEach((i, j) => (next.status!.conditions![i] = structuredClone(had[j]!)));
        }
        stampConditions(next, current, nowStamp());
        return next;
      },
      // The main resource changes metadata only (upstream's csrStrategy.PrepareForUpdate).
      prepareMainUpdate(next, current) {
        if (current.spec !== undefined) next.spec = structuredClone(current.spec);
        else delete next.spec;
        if (current.status !== undefined) next.status = structuredClone(current.status);
        else delete next.status;
      },
      validate: (obj, old) => validateCsrUpdate(obj, old, naming, { certificate: true }),
    },
    {
      name: "approval",
      verbs: ["get", "patch", "update"],
      recordsManager: true,
      resetFields: { here: ["spec"], main: [] },
      // kubectl certificate approve|deny: only the conditions move.
      prepareUpdate(input, current) {
        const next = structuredClone(current);
        next.metadata = input.metadata ?? next.metadata;
        next.status = { ...(next.status ?? {}), conditions: conditionsOf(input) };
        stampConditions(next, current, nowStamp());
        return next;
      },
      validate: (obj, old) => validateCsrUpdate(obj, old, naming, { approval: true }),
    },
  ];
}

export function certificateSigningRequests(naming: Naming): ResourceDefinition {
  return defineResource<CertificateSigningRequest>({
    group: naming.certificatesGroup,
    versions: ["v1"],
    resource: "certificatesigningrequests",
    singular: "certificatesigningrequest",
    kind: "CertificateSigningRequest",
    namespaced: false,
    shortNames: ["csr"],
    schema: `${CERTIFICATES_V1}.CertificateSigningRequest`,
    subresources: csrSubresources(naming),
    admission: { mutating: [requester] },
    prepareForCreate(obj) {
      obj.status = { conditions: [] };
    },
    validate: (obj, ctx) => validateCsr(obj, ctx.naming),
    validateUpdate: (obj, old, ctx) => validateCsrUpdate(obj, old, ctx.naming, {}),
    fieldSelectors: { "spec.signerName": (obj) => obj.spec?.signerName ?? "" },
    table: {
      columns: [
        NAME_COLUMN,
        AGE_COLUMN,
        { name: "SignerName", type: "string", description: "Requested signer name.", priority: 0 },
        { name: "Requestor", type: "string", description: "Request requestor.", priority: 0 },
        { name: "RequestedDuration", type: "string", description: "Requested certificate duration.", priority: 0 },
        { name: "Condition", type: "string", description: "Request status.", priority: 0 },
      ],
      cells: (obj, now) => [
        obj.metadata.name ?? "",
        formatAge(obj.metadata.creationTimestamp, now),
        obj.spec?.signerName || "<none>",
        obj.spec?.username ?? "",
        obj.spec?.expirationSeconds != null ? humanDuration(obj.spec.expirationSeconds * 1000) : "<none>",
        csrCondition(obj),
      ],
    },
  });
}
