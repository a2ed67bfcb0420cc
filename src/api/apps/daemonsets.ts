// daemonsets (apps/v1): updateStrategy RollingUpdate (maxUnavailable 1,
// maxSurge 0) and revisionHistoryLimit 10 by default, upstream's
// ValidateDaemonSetSpec, an immutable selector, and the `kubectl get` columns.

import { field, type FieldError } from "../../machinery/index.js";
import { defineResource, type ResourceDefinition } from "../resource.js";
import { status } from "../subresources/index.js";
import { APPS_V1 } from "./schemas.js";
import type { DaemonSet, DaemonSetSpec } from "./types.js";
import {
  defaultPodTemplate,
  defaultRollingUpdate,
  formatLabels,
  immutable,
  intOrPercentValue,
  isEmptySelector,
  nonnegative,
  notMoreThan100Percent,
  specPods,
  validateIntOrPercent,
  validateLabelSelector,
  validateLongRunningTemplate,
  validatePodTemplate,
  asSelector,
  workloadTable,
} from "./workload.js";

export function defaultDaemonSet(obj: DaemonSet): void {
  const spec = (obj.spec ??= {});
  defaultRollingUpdate((spec.updateStrategy ??= {}), { maxUnavailable: 1, maxSurge: 0 });
  spec.revisionHistoryLimit ??= 10;
  defaultPodTemplate((spec.template ??= {}));
}

function validateUpdateStrategy(strategy: DaemonSetSpec["updateStrategy"], path: string): FieldError[] {
  const errs: FieldError[] = [];
  switch (strategy?.type) {
    case "OnDelete":
      break;
    case "RollingUpdate": {
      const ru = strategy.rollingUpdate;
      if (!ru) return [field.required(`${path}.rollingUpdate`, "")];
      const at = `${path}.rollingUpdate`;
      errs.push(...validateIntOrPercent(ru.maxUnavailable, `${at}.maxUnavailable`), ...validateIntOrPercent(ru.maxSurge, `${at}.maxSurge`));
      errs.push(...notMoreThan100Percent(ru.maxUnavailable, `${at}.maxUnavailable`), ...notMoreThan100Percent(ru.maxSurge, `${at}.maxSurge`));
      // Exactly one of the two may be non-zero: surging and dropping at once has no meaning per node.
      const unavailable = (intOrPercentValue(ru.maxUnavailable) || 0) !== 0;
      const surge = (intOrPercentValue(ru.maxSurge) || 0) !== 0;
      if (unavailable && surge) errs.push(field.invalid(`${at}.maxSurge`, ru.maxSurge, "may not be set when maxUnavailable is non-zero"));
      if (!unavailable && !surge) errs.push(field.required(`${at}.maxUnavailable`, "cannot be 0 when maxSurge is 0"));
      break;
    }
    default:
      errs.push(field.notSupported(`${path}.type`, strategy?.type ?? "", ["RollingUpdate", "OnDelete"]));
  }
  return errs;
}

export function validateDaemonSetSpec(spec: DaemonSetSpec, path = "spec"): FieldError[] {
  const errs: FieldError[] = [];
  // Unlike the other apps kinds, upstream has no "Required" here: a missing
  // selector selects nothing and fails the template check instead.
  errs.push(...validateLabelSelector(spec.selector, `${path}.selector`));
  const selector = asSelector(spec.selector);
  if (selector !== undefined && !selector.matches(spec.template?.metadata?.labels ?? {})) {
    errs.push(field.invalid(`${path}.template.metadata.labels`, spec.template?.metadata?.labels ?? null, "`selector` does not match template `labels`"));
  }
  if (spec.selector && isEmptySelector(spec.selector)) errs.push(field.invalid(`${path}.selector`, spec.selector, "empty selector is invalid for daemonset"));
  errs.push(...validatePodTemplate(spec.template, `${path}.template`));
  errs.push(...validateLongRunningTemplate(spec.template, `${path}.template`, "DaemonSet", "invalid"));
  errs.push(...nonnegative(spec.minReadySeconds, `${path}.minReadySeconds`));
  errs.push(...validateUpdateStrategy(spec.updateStrategy, `${path}.updateStrategy`));
  errs.push(...nonnegative(spec.revisionHistoryLimit, `${path}.revisionHistoryLimit`));
  return errs;
}

const int = (name: string, description: string) => ({ name, type: "integer", description, priority: 0 }) as const;

export const daemonsets: ResourceDefinition = defineResource<DaemonSet>({
  group: "apps",
  versions: ["v1"],
  resource: "daemonsets",
  singular: "daemonset",
  kind: "DaemonSet",
  namespaced: true,
  shortNames: ["ds"],
  categories: ["all"],
  schema: `${APPS_V1}.DaemonSet`,
  subresources: [status()],
  defaults: defaultDaemonSet,
  prepareForCreate(obj) {
    obj.status = { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 };
  },
  validate: (obj) => validateDaemonSetSpec(obj.spec ?? {}),
  validateUpdate: (obj, old) => [
    ...validateDaemonSetSpec(obj.spec ?? {}),
    ...immutable(obj.spec?.selector, old.spec?.selector, "spec.selector"),
  ],
  table: workloadTable<DaemonSet>(
    {
      columns: [
        int("Desired", "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod)."),
        int("Current", "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod."),
        int("Ready", "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready."),
        int("Up-to-date", "The total number of nodes that are running updated daemon pod"),
        int("Available", "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)"),
        { name: "Node Selector", type: "string", description: "NodeSelector is a selector which must be true for the pod to fit on a node.", priority: 0 },
      ],
      cells(obj) {
        const status = obj.status ?? {};
        return [
          status.desiredNumberScheduled ?? 0,
          status.currentNumberScheduled ?? 0,
          status.numberReady ?? 0,
          status.updatedNumberScheduled ?? 0,
          status.numberAvailable ?? 0,
          formatLabels(obj.spec?.template?.spec?.nodeSelector),
        ];
      },
    },
    specPods(),
  ),
});
