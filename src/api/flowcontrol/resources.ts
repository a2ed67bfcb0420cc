// flowschemas and prioritylevelconfigurations (flowcontrol.apiserver.<suffix>,
// v1 and v1beta3, cluster-scoped, status subresources): upstream's v1
// defaults, its ValidateFlowSchema / ValidatePriorityLevelConfiguration
// messages (the mandatory `exempt` and `catch-all` objects pinned to their
// fixed spec) and its tables. Stored only: orch does not classify requests
// (API Priority and Fairness is not enforced; max-in-flight limits are).

import { field, isDNS1123Label, isValidPathSegmentName, type FieldError } from "../../machinery/index.js";
import type { Naming } from "../../machinery/naming.js";
import { semanticEqual } from "../apps/workload.js";
import { inclusiveRangeError } from "../core/validation.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { status } from "../subresources/index.js";
import { nameAgeTable } from "../table-format.js";
import { CATCH_ALL, EXEMPT, MANDATORY_LEVELS, mandatorySchemas } from "./bootstrap.js";
import { FLOWCONTROL_V1 } from "./schemas.js";
import type { FlowSchema, PolicyRulesWithSubjects, PriorityLevelConfiguration, QueuingConfiguration, Subject } from "./types.js";

const MAX_MATCHING_PRECEDENCE = 10000;
const MAX_QUEUES = 512;
const MAX_HASH_BITS = 60;
const DISTINGUISHERS = ["ByNamespace", "ByUser"];
const SUBJECT_KINDS = ["Group", "ServiceAccount", "User"];
const VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"];
const VERSIONS = ["v1", "v1beta3"];

function starAlone(values: readonly string[], path: string, what: string): FieldError[] {
  return values.includes("*") && values.length > 1 ? [field.invalid(path, values, `if '*' is present, must not specify other ${what}`)] : [];
}

function validateVerbs(verbs: readonly string[], path: string): FieldError[] {
  if (verbs.length === 0) return [field.required(path, "verbs must contain at least one value")];
  const errs = starAlone(verbs, path, "verbs");
  if (!verbs.includes("*") && !verbs.every((v) => VERBS.includes(v))) errs.push(field.notSupported(path, verbs, VERBS));
  return errs;
}

function validateSubject(subject: Subject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const kind = subject.kind ?? "";
  const present = { User: subject.user != null, Group: subject.group != null, ServiceAccount: subject.serviceAccount != null };
  const forbidOthers = () => {
    if (kind !== "User" && present.User) errs.push(field.forbidden(`${path}.user`, "user is forbidden when subject kind is not 'User'"));
    if (kind !== "Group" && present.Group) errs.push(field.forbidden(`${path}.group`, "group is forbidden when subject kind is not 'Group'"));
    if (kind !== "ServiceAccount" && present.ServiceAccount) errs.push(field.forbidden(`${path}.serviceAccount`, "serviceAccount is forbidden when subject kind is not 'ServiceAccount'"));
  };
  if (kind === "ServiceAccount") {
    const sa = subject.serviceAccount;
    if (sa == null) errs.push(field.required(`${path}.serviceAccount`, "serviceAccount is required when subject kind is 'ServiceAccount'"));
    else {
      if (!sa.name) errs.push(field.required(`${path}.serviceAccount.name`, ""));
      else if (sa.name !== "*") for (const m of isValidPathSegmentName(sa.name)) errs.push(field.invalid(`${path}.serviceAccount.name`, sa.name, m));
      if (!sa.namespace) errs.push(field.required(`${path}.serviceAccount.namespace`, "must specify namespace for service account"));
      else for (const m of isDNS1123Label(sa.namespace)) errs.push(field.invalid(`${path}.serviceAccount.namespace`, sa.namespace, m));
    }
    forbidOthers();
  } else if (kind === "User" || kind === "Group") {
    const named = kind === "User" ? subject.user : subject.group;
    const child = kind === "User" ? "user" : "group";
    if (named == null) errs.push(field.required(`${path}.${child}`, `${child} is required when subject kind is '${kind}'`));
    else if (!named.name) errs.push(field.required(`${path}.${child}.name`, ""));
    forbidOthers();
  } else {
    errs.push(field.notSupported(`${path}.kind`, kind, SUBJECT_KINDS));
  }
  return errs;
}

function validateRule(rule: PolicyRulesWithSubjects, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const subjects = rule.subjects ?? [];
  if (subjects.length === 0) errs.push(field.required(`${path}.subjects`, "subjects must contain at least one value"));
  subjects.forEach((s, i) => errs.push(...validateSubject(s ?? {}, `${path}.subjects[${i}]`)));
  const resourceRules = rule.resourceRules ?? [];
  const nonResourceRules = rule.nonResourceRules ?? [];
  if (resourceRules.length === 0 && nonResourceRules.length === 0) errs.push(field.required(path, "at least one of resourceRules and nonResourceRules has to be non-empty"));
  resourceRules.forEach((r, i) => {
    const at = `${path}.resourceRules[${i}]`;
    errs.push(...validateVerbs(r.verbs ?? [], `${at}.verbs`));
    const groups = r.apiGroups ?? [];
    if (groups.length === 0) errs.push(field.required(`${at}.apiGroups`, "resource rules must supply at least one api group"));
    else errs.push(...starAlone(groups, `${at}.apiGroups`, "api groups"));
    const resources = r.resources ?? [];
    if (resources.length === 0) errs.push(field.required(`${at}.resources`, "resource rules must supply at least one resource"));
    else errs.push(...starAlone(resources, `${at}.resources`, "resources"));
    const namespaces = r.namespaces ?? [];
    if (namespaces.length === 0 && r.clusterScope !== true) errs.push(field.required(`${at}.namespaces`, "resource rules that are not cluster scoped must supply at least one namespace"));
    else if (namespaces.includes("*")) errs.push(...starAlone(namespaces, `${at}.namespaces`, "namespaces"));
    else {
      namespaces.forEach((ns, j) => {
        for (const m of isDNS1123Label(ns)) errs.push(field.invalid(`${at}.namespaces[${j}]`, ns, `each member of this list must be '*' or a DNS-1123 label; ${m}`));
      });
    }
  });
  nonResourceRules.forEach((r, i) => {
    const at = `${path}.nonResourceRules[${i}]`;
    errs.push(...validateVerbs(r.verbs ?? [], `${at}.verbs`));
    const urls = r.nonResourceURLs ?? [];
    if (urls.length === 0) errs.push(field.required(`${at}.nonResourceURLs`, "nonResourceURLs must contain at least one value"));
    else if (urls.includes("*")) errs.push(...starAlone(urls, `${at}.nonResourceURLs`, "non-resource URLs"));
    else {
      urls.forEach((url, j) => {
        const p = `${at}.nonResourceURLs[${j}]`;
        if (url === "") errs.push(field.invalid(p, url, "must not be empty"));
        else if (!url.startsWith("/")) errs.push(field.invalid(p, url, "must start with slash"));
        else if (/\s/.test(url)) errs.push(field.invalid(p, url, "must not contain white-space"));
      });
    }
  });
  return errs;
}

function validateFlowSchema(fs: FlowSchema): FieldError[] {
  const name = fs.metadata.name ?? "";
  const fixed = mandatorySchemas()[name];
  if (fixed !== undefined && !semanticEqual(fs.spec, fixed)) return [field.invalid("spec", fs.spec, `spec of '${name}' must equal the fixed value`)];
  const spec = fs.spec ?? {};
  const errs: FieldError[] = [];
  const precedence = spec.matchingPrecedence ?? 0;
  if (precedence <= 0) errs.push(field.invalid("spec.matchingPrecedence", precedence, "must be a positive value"));
  if (precedence > MAX_MATCHING_PRECEDENCE) errs.push(field.invalid("spec.matchingPrecedence", precedence, `must not be greater than ${MAX_MATCHING_PRECEDENCE}`));
  if (precedence === 1 && name !== EXEMPT) errs.push(field.invalid("spec.matchingPrecedence", precedence, "only the schema named 'exempt' may have matchingPrecedence 1"));
  const method = spec.distinguisherMethod;
  if (method != null && !DISTINGUISHERS.includes(method.type ?? "")) errs.push(field.notSupported("spec.distinguisherMethod.type", method.type ?? "", DISTINGUISHERS));
  const level = spec.priorityLevelConfiguration?.name ?? "";
  if (level === "") errs.push(field.required("spec.priorityLevelConfiguration.name", "must reference a priority level"));
  else for (const m of isValidPathSegmentName(level)) errs.push(field.invalid("spec.priorityLevelConfiguration.name", level, m));
  (spec.rules ?? []).forEach((rule, i) => errs.push(...validateRule(rule ?? {}, `spec.rules[${i}]`)));
  return errs;
}

function validateQueuing(q: QueuingConfiguration, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const queues = q.queues ?? 0;
  const handSize = q.handSize ?? 0;
  const limit = q.queueLengthLimit ?? 0;
  if (limit <= 0) errs.push(field.invalid(`${path}.queueLengthLimit`, limit, "must be positive"));
  if (queues <= 0) errs.push(field.invalid(`${path}.queues`, queues, "must be positive"));
  else if (queues > MAX_QUEUES) errs.push(field.invalid(`${path}.queues`, queues, `must not be greater than ${MAX_QUEUES}`));
  if (handSize <= 0) errs.push(field.invalid(`${path}.handSize`, handSize, "must be positive"));
  else if (handSize > queues) errs.push(field.invalid(`${path}.handSize`, handSize, `should not be greater than queues (${queues})`));
  else if (Math.ceil(handSize * Math.log2(queues)) > MAX_HASH_BITS) {
    errs.push(field.invalid(`${path}.handSize`, handSize, `required entropy bits of deckSize ${queues} and handSize ${handSize} should not be greater than ${MAX_HASH_BITS}`));
  }
  return errs;
}

function percent(value: number | null | undefined, path: string): FieldError[] {
  return value != null && (value < 0 || value > 100) ? [field.invalid(path, value, inclusiveRangeError(0, 100))] : [];
}

function validatePriorityLevel(pl: PriorityLevelConfiguration): FieldError[] {
  const name = pl.metadata.name ?? "";
  const fixed = MANDATORY_LEVELS[name];
  if (fixed !== undefined && !semanticEqual(pl.spec, fixed)) return [field.invalid("spec", pl.spec, `spec of '${name}' must equal the fixed value`)];
  const spec = pl.spec ?? {};
  const errs: FieldError[] = [];
  if ((spec.type === "Exempt") !== (name === EXEMPT)) errs.push(field.invalid("spec.type", spec.type ?? "", "type must be 'Exempt' if and only if name is 'exempt'"));
  if (spec.type === "Exempt" || spec.type === "Limited") {
    if (spec.type !== "Limited" && spec.limited != null) errs.push(field.forbidden("spec.limited", "must be nil if the type is not Limited"));
    if (spec.type === "Limited") {
      const limited = spec.limited;
      if (limited == null) errs.push(field.required("spec.limited", "must not be empty when type is Limited"));
      else {
        const shares = limited.nominalConcurrencyShares ?? 0;
        if (shares < 0) errs.push(field.invalid("spec.limited.nominalConcurrencyShares", shares, "must be a non-negative integer"));
        errs.push(...percent(limited.lendablePercent, "spec.limited.lendablePercent"));
        if (limited.borrowingLimitPercent != null && limited.borrowingLimitPercent < 0) {
          errs.push(field.invalid("spec.limited.borrowingLimitPercent", limited.borrowingLimitPercent, "if specified, must be a non-negative integer"));
        }
        const response = limited.limitResponse ?? {};
        const at = "spec.limited.limitResponse";
        if (response.type === "Queue") {
          if (response.queuing == null) errs.push(field.required(`${at}.queuing`, "must not be empty if limited.limitResponse.type is Limited"));
          else errs.push(...validateQueuing(response.queuing, `${at}.queuing`));
        } else if (response.type === "Reject") {
          if (response.queuing != null) errs.push(field.forbidden(`${at}.queuing`, "must be nil if limited.limitResponse.type is not Limited"));
        } else if (!response.type) errs.push(field.required(`${at}.type`, "must not be empty"));
        else errs.push(field.notSupported(`${at}.type`, response.type, ["Queue", "Reject"]));
      }
    }
    if (spec.exempt != null) {
      if (spec.type !== "Exempt") errs.push(field.forbidden("spec.exempt", "must be nil if the type is Limited"));
      const shares = spec.exempt.nominalConcurrencyShares ?? 0;
      if (shares < 0) errs.push(field.invalid("spec.exempt.nominalConcurrencyShares", shares, "must be a non-negative integer"));
      errs.push(...percent(spec.exempt.lendablePercent, "spec.exempt.lendablePercent"));
    }
  } else if (!spec.type) errs.push(field.required("spec.type", "must not be empty"));
  else errs.push(field.notSupported("spec.type", spec.type, ["Exempt", "Limited"]));
  return errs;
}

/** The `Dangling` condition's status, "?" while none is set (the MissingPL column). */
function danglingCell(fs: FlowSchema): string {
  return (fs.status?.conditions ?? []).find((c) => c.type === "Dangling")?.status ?? "?";
}

export function flowSchemas(naming: Naming): ResourceDefinition {
  return defineResource<FlowSchema>({
    group: naming.flowcontrolGroup,
    versions: VERSIONS,
    resource: "flowschemas",
    singular: "flowschema",
    kind: "FlowSchema",
    namespaced: false,
    schema: `${FLOWCONTROL_V1}.FlowSchema`,
    nameRule: "path-segment",
    subresources: [status({ validate: () => [], metadata: [] })], // upstream keeps the stored metadata
    defaults(fs) {
      const spec = (fs.spec ??= {});
      if (!spec.matchingPrecedence) spec.matchingPrecedence = 1000;
    },
    prepareForCreate(fs) {
      fs.status = {};
    },
    validate: validateFlowSchema,
    validateUpdate: validateFlowSchema,
    table: nameAgeTable<FlowSchema>(
      {
        columns: [
          { name: "PriorityLevel", type: "string", description: "The priority level of matching requests.", priority: 0 },
          { name: "MatchingPrecedence", type: "string", description: "The order among schemas (lowest first).", priority: 0 },
          { name: "DistinguisherMethod", type: "string", description: "How matching requests are split into flows.", priority: 0 },
        ],
        cells: (fs) => [fs.spec?.priorityLevelConfiguration?.name ?? "", fs.spec?.matchingPrecedence ?? 0, fs.spec?.distinguisherMethod?.type ?? "*"],
      },
      { columns: [{ name: "MissingPL", type: "string", description: "Whether the referenced priority level is missing (the Dangling condition).", priority: 0 }], cells: (fs) => [danglingCell(fs)] },
    ),
  });
}

export function priorityLevelConfigurations(naming: Naming): ResourceDefinition {
  return defineResource<PriorityLevelConfiguration>({
    group: naming.flowcontrolGroup,
    versions: VERSIONS,
    resource: "prioritylevelconfigurations",
    singular: "prioritylevelconfiguration",
    kind: "PriorityLevelConfiguration",
    namespaced: false,
    schema: `${FLOWCONTROL_V1}.PriorityLevelConfiguration`,
    nameRule: "path-segment",
    subresources: [status({ validate: () => [], metadata: [] })], // upstream keeps the stored metadata
    defaults(pl) {
      const limited = pl.spec?.limited;
      if (limited != null) {
        limited.nominalConcurrencyShares ??= 30;
        limited.lendablePercent ??= 0;
        const q = limited.limitResponse?.queuing;
        if (q != null) {
          if (!q.queues) q.queues = 64;
          if (!q.handSize) q.handSize = 8;
          if (!q.queueLengthLimit) q.queueLengthLimit = 50;
        }
      }
      const exempt = pl.spec?.exempt;
      if (exempt != null) {
        exempt.nominalConcurrencyShares ??= 0;
        exempt.lendablePercent ??= 0;
      }
    },
    prepareForCreate(pl) {
      pl.status = {};
    },
    validate: validatePriorityLevel,
    validateUpdate: validatePriorityLevel,
    table: nameAgeTable<PriorityLevelConfiguration>({
      columns: [
        { name: "Type", type: "string", description: "Exempt or Limited.", priority: 0 },
        { name: "NominalConcurrencyShares", type: "string", description: "The level's share of the server's concurrency.", priority: 0 },
        { name: "Queues", type: "string", description: "How many queues.", priority: 0 },
        { name: "HandSize", type: "string", description: "How many queues a flow is dealt.", priority: 0 },
        { name: "QueueLengthLimit", type: "string", description: "The longest a queue may get.", priority: 0 },
      ],
      cells: (pl) => {
        const limited = pl.spec?.limited;
        const q = limited?.limitResponse?.queuing;
        return [pl.spec?.type ?? "", limited ? (limited.nominalConcurrencyShares ?? 0) : "<none>", q ? (q.queues ?? 0) : "<none>", q ? (q.handSize ?? 0) : "<none>", q ? (q.queueLengthLimit ?? 0) : "<none>"];
      },
    }),
  });
}

export { CATCH_ALL, EXEMPT };
