// statefulsets (apps/v1): upstream's defaults (OrderedReady, RollingUpdate
// with partition 0, Retain/Retain claims, 1 replica, 10 revisions), its
// validation (names are DNS labels; only a few spec fields may change), the
// `kubectl get` columns and Scale access.

import { field, type FieldError } from "../../machinery/index.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { scale, status } from "../subresources/index.js";
import { APPS_V1 } from "./schemas.js";
import type { StatefulSet, StatefulSetSpec } from "./types.js";
import {
  defaultPodTemplate,
  immutable,
  intOrPercentValue,
  nonnegative,
  notMoreThan100Percent,
  replicaScale,
  selectorMatchesTemplate,
  semanticEqual,
  validateIntOrPercent,
  validateLongRunningTemplate,
  validateTemplateMetadata,
  validateRequiredSelector,
  workloadTable,
} from "./workload.js";

export function defaultStatefulSet(obj: StatefulSet): void {
  const spec = (obj.spec ??= {});
  if (!spec.podManagementPolicy) spec.podManagementPolicy = "OrderedReady";
  const strategy = (spec.updateStrategy ??= {});
  if (!strategy.type) {
    strategy.type = "RollingUpdate";
    strategy.rollingUpdate ??= {};
  }
  if (strategy.type === "RollingUpdate" && strategy.rollingUpdate) strategy.rollingUpdate.partition ??= 0;
  const retention = (spec.persistentVolumeClaimRetentionPolicy ??= {});
  if (!retention.whenDeleted) retention.whenDeleted = "Retain";
  if (!retention.whenScaled) retention.whenScaled = "Retain";
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  defaultPodTemplate((spec.template ??= {}));
  // Claim status is a plain struct upstream, so every template carries phase Pending.
  for (const claim of spec.volumeClaimTemplates ?? []) {
    if (typeof claim !== "object" || claim === null) continue;
    const status = ((claim as { status?: { phase?: string } }).status ??= {});
    if (!status.phase) status.phase = "Pending";
  }
}

const RETENTION = ["Retain", "Delete"];

export function validateStatefulSetSpec(spec: StatefulSetSpec, path = "spec"): FieldError[] {
  const errs: FieldError[] = [];
  switch (spec.podManagementPolicy) {
    case undefined:
    case "":
      errs.push(field.required(`${path}.podManagementPolicy`, ""));
      break;
    case "OrderedReady":
    case "Parallel":
      break;
    default:
      errs.push(field.invalid(`${path}.podManagementPolicy`, spec.podManagementPolicy, "must be 'OrderedReady' or 'Parallel'"));
  }
  const strategy = spec.updateStrategy;
  switch (strategy?.type) {
    case undefined:
    case "":
      errs.push(field.required(`${path}.updateStrategy`, ""));
      break;
    case "OnDelete":
      if (strategy.rollingUpdate) {
        errs.push(field.invalid(`${path}.updateStrategy.rollingUpdate`, strategy.rollingUpdate, "only allowed for updateStrategy 'RollingUpdate'"));
      }
      break;
    case "RollingUpdate": {
      const ru = strategy.rollingUpdate;
      if (!ru) break;
      const at = `${path}.updateStrategy.rollingUpdate`;
      errs.push(...nonnegative(ru.partition, `${at}.partition`));
      if (ru.maxUnavailable !== undefined && ru.maxUnavailable !== null) {
        errs.push(...validateIntOrPercent(ru.maxUnavailable, `${at}.maxUnavailable`));
        if (intOrPercentValue(ru.maxUnavailable) === 0) errs.push(field.invalid(`${at}.maxUnavailable`, ru.maxUnavailable, "cannot be 0"));
        errs.push(...notMoreThan100Percent(ru.maxUnavailable, `${at}.maxUnavailable`));
      }
      break;
    }
    default:
      errs.push(field.invalid(`${path}.updateStrategy`, strategy, "must be 'RollingUpdate' or 'OnDelete'"));
  }
  const retention = spec.persistentVolumeClaimRetentionPolicy;
  if (retention) {
    for (const key of ["whenDeleted", "whenScaled"] as const) {
      if (!RETENTION.includes(retention[key] ?? "")) {
        errs.push(field.notSupported(`${path}.persistentVolumeClaimRetentionPolicy.${key}`, retention[key] ?? "", RETENTION));
      }
    }
  }
  errs.push(...nonnegative(spec.replicas, `${path}.replicas`), ...nonnegative(spec.minReadySeconds, `${path}.minReadySeconds`));
  if (spec.ordinals) errs.push(...nonnegative(spec.ordinals.start, `${path}.ordinals.start`));

  const selector = validateRequiredSelector(spec.selector, `${path}.selector`, "statefulset", errs);
  if (selector === undefined) {
    errs.push(field.invalid(`${path}.selector`, spec.selector ?? null, ""));
  } else {
    errs.push(...selectorMatchesTemplate(selector, spec.template, `${path}.template`));
    // Upstream checks only the template's metadata here: its volumes are
    // completed by volumeClaimTemplates, so the pod spec alone may not validate.
    if (spec.template === undefined) errs.push(field.required(`${path}.template`, ""));
    else errs.push(...validateTemplateMetadata(spec.template, `${path}.template`));
  }
  errs.push(...validateLongRunningTemplate(spec.template, `${path}.template`, "StatefulSet"));
  return errs;
}

/** Fields of a StatefulSet's spec that may change after creation. */
const MUTABLE = ["replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy", "minReadySeconds", "revisionHistoryLimit"] as const;

export function validateStatefulSetUpdate(obj: StatefulSet, old: StatefulSet): FieldError[] {
  const errs = validateStatefulSetSpec(obj.spec ?? {});
  const next: Record<string, unknown> = { ...obj.spec };
  const prev: Record<string, unknown> = { ...old.spec };
  for (const key of MUTABLE) {
    delete next[key];
    delete prev[key];
  }
  if (!semanticEqual(next, prev)) {
    errs.push(
      field.forbidden(
        "spec",
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ),
    );
  }
  return errs;
}

export const statefulsets: ResourceDefinition = defineResource<StatefulSet>({
  group: "apps",
  versions: ["v1"],
  resource: "statefulsets",
  singular: "statefulset",
  kind: "StatefulSet",
  namespaced: true,
  shortNames: ["sts"],
  categories: ["all"],
  schema: `${APPS_V1}.StatefulSet`,
  // Pods are named <set>-<ordinal> and get the name as hostname, so the set's name must be a DNS label.
  nameRule: "label",
  subresources: [scale(replicaScale<StatefulSet>()), status()],
  defaults: defaultStatefulSet,
  prepareForCreate(obj) {
    obj.status = { replicas: 0, availableReplicas: 0 };
  },
  validate: (obj) => validateStatefulSetSpec(obj.spec ?? {}),
  validateUpdate: (obj, old) => [
    ...validateStatefulSetUpdate(obj, old),
    ...immutable(obj.spec?.selector, old.spec?.selector, "spec.selector"),
  ],
  // Upstream prints no Selector column for stateful sets.
  table: workloadTable<StatefulSet>(
    {
      columns: [{ name: "Ready", type: "string", description: "Number of the pod with ready state", priority: 0 }],
      cells: (obj) => [`${obj.status?.readyReplicas ?? 0}/${obj.spec?.replicas ?? 0}`],
    },
    { template: (obj) => obj.spec?.template },
  ),
});
