// Upstream's CertificateSigningRequest validation
// (pkg/apis/certificates/validation): the request, usages, signer name,
// expirationSeconds, conditions and the certificate, and the update rules of
// the main resource, /status (may set the certificate once) and /approval
// (may add Approved/Denied/Failed conditions).

import { X509Certificate } from "node:crypto";
import { field, isDNS1123Label, isDNS1123Subdomain, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { parseCsr } from "./csr.js";
import { CONDITION, KEY_USAGES, signerNames } from "./signers.js";
import type { CertificateSigningRequest, CertificateSigningRequestCondition } from "./types.js";

const TRUE_ONLY = new Set<string>([CONDITION.approved, CONDITION.denied, CONDITION.failed]);
const ALL_STATUSES = ["False", "True", "Unknown"];

export interface UpdateRules {
  /** /approval: Approved and Denied conditions may be added. */
  approval?: boolean;
  /** /status: the certificate may be set (once). */
  certificate?: boolean;
}

export function validateCsr(csr: CertificateSigningRequest, naming: Naming, old?: CertificateSigningRequest): FieldError[] {
  const errs: FieldError[] = [];
  const spec = csr.spec ?? {};
  try {
    parseCsr(Buffer.from(spec.request ?? "", "base64"));
  } catch (err) {
    errs.push(field.invalid("spec.request", spec.request ?? "", (err as Error).message));
  }
  const usages = spec.usages ?? [];
  const oldUsages = old?.spec?.usages ?? [];
  if (usages.length === 0) errs.push(field.required("spec.usages", "usages must be provided"));
  if (!oldUsages.some((u) => !KEY_USAGES.includes(u))) {
    usages.forEach((u, i) => {
      if (!KEY_USAGES.includes(u)) errs.push(field.notSupported(`spec.usages[${i}]`, u, KEY_USAGES));
    });
  }
  if (new Set(oldUsages).size === oldUsages.length) {
    const seen = new Set<string>();
    usages.forEach((u, i) => {
      if (seen.has(u)) errs.push(field.duplicate(`spec.usages[${i}]`, u));
      seen.add(u);
    });
  }
  const legacy = signerNames(naming).legacyUnknown;
  if (spec.signerName === legacy && old?.spec?.signerName !== legacy) {
    errs.push(field.invalid("spec.signerName", spec.signerName, "the legacy signerName is not allowed via this API version"));
  } else {
    errs.push(...validateSignerName("spec.signerName", spec.signerName ?? ""));
  }
  if (spec.expirationSeconds != null && spec.expirationSeconds < 600) {
    errs.push(field.invalid("spec.expirationSeconds", spec.expirationSeconds, "may not specify a duration less than 600 seconds (10 minutes)"));
  }
  errs.push(...validateConditions(csr.status?.conditions ?? [], old));
  const cert = csr.status?.certificate ?? "";
  const arbitrary = old !== undefined && ((old.status?.certificate ?? "") === cert || certificateProblem(old.status?.certificate ?? "") !== undefined);
  if (!arbitrary) {
    const problem = certificateProblem(cert);
    if (problem !== undefined) errs.push(field.invalid("status.certificate", "<certificate data>", problem));
  }
  return errs;
}

/** Upstream's ValidateCertificateSigningRequestSignerName. */
export function validateSignerName(path: string, signerName: string): FieldError[] {
  if (signerName === "") return [field.required(path, "signerName must be provided")];
  const segments = signerName.split("/");
  if (segments.length !== 2) return [field.invalid(path, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  const errs: FieldError[] = [];
  const [domain, rest] = segments as [string, string];
  if (domain.length > 253) errs.push(field.tooLong(path, 253));
  const labels = domain.split(".");
  for (const label of labels) {
    const problems = isDNS1123Label(label);
    if (problems.length > 0) {
      for (const p of problems) errs.push(field.invalid(path, domain, `validating label ${JSON.stringify(label)}: ${p}`));
      break;
    }
  }
  if (labels.length < 2) errs.push(field.invalid(path, domain, "should be a domain with at least two segments separated by dots"));
  for (const label of rest.split(".")) {
    const problems = isDNS1123Subdomain(label);
    if (problems.length > 0) {
      for (const p of problems) errs.push(field.invalid(path, rest, `validating label ${JSON.stringify(label)}: ${p}`));
      break;
    }
  }
  const max = 253 + (253 + 63 + 1) + 1;
  if (signerName.length > max) errs.push(field.tooLong(path, max));
  return errs;
}

function validateConditions(conditions: readonly CertificateSigningRequestCondition[], old: CertificateSigningRequest | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const oldConditions = old?.status?.conditions ?? [];
  const oldTypes = oldConditions.map((c) => c.type ?? "");
  const allowBoth = oldTypes.includes(CONDITION.approved) && oldTypes.includes(CONDITION.denied);
  const allowDuplicates = new Set(oldTypes).size !== oldTypes.length;
  const allowEmpty = oldTypes.includes("");
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  conditions.forEach((c, i) => {
    const path = `status.conditions[${i}]`;
    const type = c.type ?? "";
    if (!allowEmpty && type === "") errs.push(field.required(`${path}.type`, ""));
    const allowed = TRUE_ONLY.has(type) ? ["True"] : ALL_STATUSES;
    if (!c.status) errs.push(field.required(`${path}.status`, ""));
    else if (!allowed.includes(c.status)) errs.push(field.notSupported(`${path}.status`, c.status, allowed));
    if (!allowBoth) {
      if (type === CONDITION.approved) {
        approved = true;
        if (denied) errs.push(field.invalid(`${path}.type`, type, "Approved and Denied conditions are mutually exclusive"));
      } else if (type === CONDITION.denied) {
        denied = true;
        if (approved) errs.push(field.invalid(`${path}.type`, type, "Approved and Denied conditions are mutually exclusive"));
      }
    }
    if (!allowDuplicates && seen.has(type)) errs.push(field.duplicate(`${path}.type`, type));
    seen.add(type);
  });
  return errs;
}

/** Upstream's validateCertificate over base64 of PEM; undefined when fine (or empty). */
function certificateProblem(base64: string): string | undefined {
  if (base64 === "") return undefined;
  let pem = Buffer.from(base64, "base64").toString("latin1");
  let blocks = 0;
  for (;;) {
    const m = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----\r?\n?/.exec(pem);
    if (m === null) break;
    if (m[1] !== "CERTIFICATE") return `only CERTIFICATE PEM blocks are allowed, found ${JSON.stringify(m[1])}`;
    if (/^[A-Za-z-]+:/m.test(m[2]!)) return "no PEM block headers are permitted";
    try {
      new X509Certificate(Buffer.from(m[2]!.replace(/\s+/g, ""), "base64"));
    } catch (err) {
      return `x509: malformed certificate: ${(err as Error).message}`;
    }
    blocks++;
    pem = pem.slice(m.index + m[0].length);
  }
  return blocks === 0 ? "must contain at least one CERTIFICATE PEM block" : undefined;
}

/** Upstream's validateCertificateSigningRequestUpdate with the rules of the path written through. */
export function validateCsrUpdate(csr: CertificateSigningRequest, old: CertificateSigningRequest, naming: Naming, rules: UpdateRules): FieldError[] {
  const errs = validateCsr(csr, naming, old);
  const of = (obj: CertificateSigningRequest, type: string) => (obj.status?.conditions ?? []).filter((c) => c.type === type);
  for (const type of [CONDITION.approved, CONDITION.denied, CONDITION.failed]) {
    if (of(csr, type).length < of(old, type).length) errs.push(field.forbidden("status.conditions", `updates may not remove a condition of type ${JSON.stringify(type)}`));
  }
  if (!rules.approval) {
    for (const type of [CONDITION.approved, CONDITION.denied]) {
      const now = of(csr, type);
      const before = of(old, type);
      if (now.length > before.length) errs.push(field.forbidden("status.conditions", `updates may not add a condition of type ${JSON.stringify(type)}`));
      else if (now.length === before.length && JSON.stringify(now) !== JSON.stringify(before)) {
        errs.push(field.forbidden("status.conditions", `updates may not modify a condition of type ${JSON.stringify(type)}`));
      }
    }
  }
  if ((csr.status?.certificate ?? "") !== (old.status?.certificate ?? "")) {
    if (!rules.certificate) errs.push(field.forbidden("status.certificate", "updates may not set certificate content"));
    else if ((old.status?.certificate ?? "") !== "") errs.push(field.forbidden("status.certificate", "updates may not modify existing certificate content"));
  }
  return errs;
}
