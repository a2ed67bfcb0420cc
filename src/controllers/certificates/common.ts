// What the certificate controllers share: the CSR resource reference, the
// conditions a request has, and upstream's checks of what a node agent's
// client certificate request must look like (csr.IsKubeletClientCSR).

import type { GroupVersionResource } from "../../api/resource-refs.js";
import { CONDITION, NODE_USER_PREFIX, NODES_GROUP, type CertificateSigningRequest, type ParsedCsr } from "../../api/certificates/index.js";
import type { Naming } from "../../machinery/naming.js";

export function csrResource(naming: Naming): GroupVersionResource {
  return { group: naming.certificatesGroup, version: "v1", resource: "certificatesigningrequests", namespaced: false };
}

export function hasCondition(csr: CertificateSigningRequest, type: string): boolean {
  return (csr.status?.conditions ?? []).some((c) => c.type === type && c.status === "True");
}

/** Approved, not denied, not failed, not yet issued: the signer's work. */
export function awaitsSigning(csr: CertificateSigningRequest): boolean {
  return hasCondition(csr, CONDITION.approved) && !hasCondition(csr, CONDITION.denied) && !hasCondition(csr, CONDITION.failed) && !csr.status?.certificate;
}

/** Neither approved nor denied: the approver's work. */
export function awaitsApproval(csr: CertificateSigningRequest): boolean {
  return !hasCondition(csr, CONDITION.approved) && !hasCondition(csr, CONDITION.denied);
}

const CLIENT_USAGES = new Set(["key encipherment", "digital signature", "client auth"]);

/**
 * Why a request is not a node agent client request (upstream's
 * ValidateKubeletClientCSR), or undefined when it is: O exactly
 * system:nodes, CN system:node:NAME, no SANs, usages among key
 * encipherment, digital signature and client auth, client auth included.
 */
export function nodeClientProblem(req: ParsedCsr, usages: readonly string[]): string | undefined {
  if (req.organizations.length !== 1 || req.organizations[0] !== NODES_GROUP) return `subject organization is not ${NODES_GROUP}`;
  if (req.dnsNames.length > 0) return "DNS subjectAltNames are not allowed";
  if (req.emailAddresses.length > 0) return "Email subjectAltNames are not allowed";
  if (req.ipAddresses.length > 0) return "IP subjectAltNames are not allowed";
  if (req.uris.length > 0) return "URI subjectAltNames are not allowed";
  if (!req.commonName.startsWith(NODE_USER_PREFIX) || req.commonName.length === NODE_USER_PREFIX.length) return `subject common name does not begin with ${NODE_USER_PREFIX}`;
  const bad = usages.filter((u) => !CLIENT_USAGES.has(u));
  if (bad.length > 0 || !usages.includes("client auth")) return `usages did not match [${[...CLIENT_USAGES].join(" ")}]: got [${usages.join(" ")}]`;
  return undefined;
}
