// apiservices (apiregistration.<suffix>/v1, cluster-scoped, status
// subresource): upstream's ValidateAPIService / ValidateAPIServiceStatus
// messages, the service port's default (443) and the table `kubectl get
// apiservices` shows (NAME SERVICE AVAILABLE AGE). What makes them do
// something lives in the API server (src/apiserver/aggregation/): local
// APIServices kept for every served group version, the availability checks,
// and the proxy to remote ones.

import { field, isDNS1035Label, isDNS1123Subdomain, isValidPathSegmentName, type ApiObject, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { inclusiveRangeError } from "../core/validation.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { status } from "../subresources/index.js";
import { nameAgeTable } from "../table-format.js";
import { APIREGISTRATION_V1 } from "./schemas.js";

export interface ServiceReference {
  namespace?: string;
  name?: string;
  port?: number;
}

export interface APIServiceCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface APIServiceSpec {
  service?: ServiceReference | null;
  group?: string;
  version?: string;
  insecureSkipTLSVerify?: boolean;
  /** Base64 in JSON (bytes). */
  caBundle?: string | null;
  groupPriorityMinimum?: number;
  versionPriority?: number;
}

export interface APIService extends ApiObject {
  spec?: APIServiceSpec;
  status?: { conditions?: APIServiceCondition[] | null };
}

const CONDITION_STATUSES = ["True", "False", "Unknown"];

/** The Available condition, if set. */
export function availableCondition(svc: APIService): APIServiceCondition | undefined {
  return (svc.status?.conditions ?? []).find((c) => c.type === "Available");
}

/** upstream's ValidateAPIService. */
function validate(svc: APIService): FieldError[] {
  const spec = svc.spec ?? {};
  const group = spec.group ?? "";
  const version = spec.version ?? "";
  const errs: FieldError[] = [];
  const name = svc.metadata.name ?? "";
  // The name must be VERSION.GROUP (only checked once it is a valid path segment, which the generic rule reports).
  const required = `${version}.${group}`;
  if (name !== "" && isValidPathSegmentName(name).length === 0 && name !== required) {
    errs.push(field.invalid("metadata.name", name, `must be \`spec.version+"."+spec.group\`: ${JSON.stringify(required)}`));
  }
  if (group === "" && version !== "v1") errs.push(field.required("spec.group", "only v1 may have an empty group and it better be legacy kube"));
  if (group !== "") for (const m of isDNS1123Subdomain(group)) errs.push(field.invalid("spec.group", group, m));
  for (const m of isDNS1035Label(version)) errs.push(field.invalid("spec.version", version, m));
  const gpm = spec.groupPriorityMinimum ?? 0;
  if (gpm <= 0 || gpm > 20000) errs.push(field.invalid("spec.groupPriorityMinimum", gpm, "must be positive and less than 20000"));
  const vp = spec.versionPriority ?? 0;
  if (vp <= 0 || vp > 1000) errs.push(field.invalid("spec.versionPriority", vp, "must be positive and less than 1000"));
  const caBytes = spec.caBundle ? Buffer.from(spec.caBundle, "base64").length : 0;
  if (spec.service == null) {
    if (caBytes > 0) errs.push(field.invalid("spec.caBundle", `${caBytes} bytes`, "local APIServices may not have a caBundle"));
    if (spec.insecureSkipTLSVerify === true) errs.push(field.invalid("spec.insecureSkipTLSVerify", true, "local APIServices may not have insecureSkipTLSVerify"));
    return errs;
  }
  const ref = spec.service;
  if (!ref.namespace) errs.push(field.required("spec.service.namespace", ""));
  if (!ref.name) errs.push(field.required("spec.service.name", ""));
  const port = ref.port ?? 443;
  if (!Number.isInteger(port) || port < 1 || port > 65535) errs.push(field.invalid("spec.service.port", port, `port is not valid: ${inclusiveRangeError(1, 65535)}`));
  if (spec.insecureSkipTLSVerify === true && caBytes > 0) errs.push(field.invalid("spec.insecureSkipTLSVerify", true, "may not be true if caBundle is present"));
  return errs;
}

/** upstream's ValidateAPIServiceStatus. */
function validateStatus(svc: APIService): FieldError[] {
  const errs: FieldError[] = [];
  (svc.status?.conditions ?? []).forEach((c, i) => {
    if (!CONDITION_STATUSES.includes(c?.status ?? "")) errs.push(field.notSupported(`status.conditions[${i}].status`, c?.status ?? "", CONDITION_STATUSES));
  });
  return errs;
}

/** The AVAILABLE column: True, `False (Reason)`, or Unknown while no condition is set. */
function availableCell(svc: APIService): string {
  const c = availableCondition(svc);
  if (c === undefined) return "Unknown";
  return c.status !== "True" && c.reason ? `${c.status} (${c.reason})` : c.status;
}

export function apiServices(naming: Naming): ResourceDefinition {
  return defineResource<APIService>({
    group: naming.apiregistrationGroup,
    versions: ["v1"],
    resource: "apiservices",
    singular: "apiservice",
    kind: "APIService",
    namespaced: false,
    schema: `${APIREGISTRATION_V1}.APIService`,
    nameRule: "path-segment",
    subresources: [status({ validate: validateStatus })],
    prepareForCreate(svc) {
      svc.status = {};
    },
    validate,
    validateUpdate: validate,
    table: nameAgeTable<APIService>({
      columns: [
        { name: "Service", type: "string", description: "The reference to the service that hosts this API endpoint.", priority: 0 },
        { name: "Available", type: "string", description: "Whether this service is available.", priority: 0 },
      ],
      cells: (svc) => [svc.spec?.service ? `${svc.spec.service.namespace ?? ""}/${svc.spec.service.name ?? ""}` : "Local", availableCell(svc)],
    }),
  });
}
