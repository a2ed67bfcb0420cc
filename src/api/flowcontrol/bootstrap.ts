// upstream's bootstrap configuration of API Priority and Fairness: the
// mandatory objects (exempt and catch-all, which validation pins) and the
// suggested ones, created at start when missing (annotated
// `apf.<domain>/autoupdate-spec: "true"`, as upstream). Names of components
// and of the system namespace come from the naming table.

import { componentName, type Naming } from "../../machinery/naming.js";
import type { FlowSchema, FlowSchemaSpec, PolicyRulesWithSubjects, PriorityLevelConfiguration, PriorityLevelConfigurationSpec, ResourcePolicyRule, Subject } from "./types.js";

export const EXEMPT = "exempt";
export const CATCH_ALL = "catch-all";

const ALL_RESOURCES: ResourcePolicyRule = { verbs: ["*"], apiGroups: ["*"], resources: ["*"], clusterScope: true, namespaces: ["*"] };
const ALL_NON_RESOURCES = { verbs: ["*"], nonResourceURLs: ["*"] };
const groups = (...names: string[]): Subject[] => names.map((name) => ({ kind: "Group", group: { name } }));
const users = (...names: string[]): Subject[] => names.map((name) => ({ kind: "User", user: { name } }));
const everything = (subjects: Subject[]): PolicyRulesWithSubjects => ({ subjects, resourceRules: [ALL_RESOURCES], nonResourceRules: [ALL_NON_RESOURCES] });
const electionRule = (resources: string[], group: string, namespaces: string[]): ResourcePolicyRule => ({ verbs: ["get", "create", "update"], apiGroups: [group], resources, namespaces });

function queued(shares: number, queues: number, handSize: number): PriorityLevelConfigurationSpec {
  return { type: "Limited", limited: { nominalConcurrencyShares: shares, lendablePercent: 0, limitResponse: { type: "Queue", queuing: { queues, handSize, queueLengthLimit: 50 } } } };
}

function fs(name: string, level: string, matchingPrecedence: number, distinguisher: string | undefined, ...rules: PolicyRulesWithSubjects[]): [string, FlowSchemaSpec] {
  return [name, { priorityLevelConfiguration: { name: level }, matchingPrecedence, ...(distinguisher ? { distinguisherMethod: { type: distinguisher } } : {}), rules }];
}

/** The mandatory priority levels' specs (v1 form, defaults included). */
export const MANDATORY_LEVELS: Readonly<Record<string, PriorityLevelConfigurationSpec>> = {
  [EXEMPT]: { type: "Exempt", exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } },
  [CATCH_ALL]: { type: "Limited", limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: "Reject" } } },
};

export function mandatorySchemas(): Record<string, FlowSchemaSpec> {
  return Object.fromEntries([
    fs(EXEMPT, EXEMPT, 1, undefined, everything(groups("system:masters"))),
    fs(CATCH_ALL, CATCH_ALL, 10000, "ByUser", everything(groups("system:unauthenticated", "system:authenticated"))),
  ]);
}

const SUGGESTED_LEVELS: Readonly<Record<string, PriorityLevelConfigurationSpec>> = {
  system: queued(30, 64, 6),
  "node-high": queued(40, 64, 6),
  "leader-election": queued(10, 16, 4),
  "workload-high": queued(40, 128, 6),
  "workload-low": queued(100, 128, 6),
  "global-default": queued(20, 128, 6),
};

function suggestedSchemas(naming: Naming): Record<string, FlowSchemaSpec> {
  const controllerManager = componentName(naming, "controller-manager");
  const scheduler = componentName(naming, "scheduler");
  const systemAccounts: Subject[] = [{ kind: "ServiceAccount", serviceAccount: { namespace: naming.systemNamespace, name: "*" } }];
  const core = "";
  const coordination = naming.coordinationGroup;
  return Object.fromEntries([
    fs("system-nodes", "system", 500, "ByUser", everything(groups("system:nodes"))),
    fs("system-node-high", "node-high", 400, "ByUser", {
      subjects: groups("system:nodes"),
      resourceRules: [
        { verbs: ["*"], apiGroups: [core], resources: ["nodes", "nodes/status"], clusterScope: true, namespaces: ["*"] },
        { verbs: ["*"], apiGroups: [coordination], resources: ["leases"], namespaces: ["*"] },
      ],
    }),
    fs("system-leader-election", "leader-election", 100, "ByUser", {
      subjects: [...users(`system:${controllerManager}`, `system:${scheduler}`), ...systemAccounts],
      resourceRules: [electionRule(["endpoints", "configmaps"], core, [naming.systemNamespace]), electionRule(["leases"], coordination, ["*"])],
    }),
    fs("workload-leader-election", "leader-election", 200, "ByUser", {
      subjects: systemAccounts,
      resourceRules: [electionRule(["endpoints", "configmaps"], core, ["*"]), electionRule(["leases"], coordination, ["*"])],
    }),
    fs(controllerManager, "workload-high", 800, "ByNamespace", everything(users(`system:${controllerManager}`))),
    fs(scheduler, "workload-high", 800, "ByNamespace", everything(users(`system:${scheduler}`))),
    fs(`${naming.systemNamespace}-service-accounts`, "workload-high", 900, "ByNamespace", everything(systemAccounts)),
    fs("service-accounts", "workload-low", 9000, "ByUser", everything(groups("system:serviceaccounts"))),
    fs("global-default", "global-default", 9900, "ByUser", everything(groups("system:unauthenticated", "system:authenticated"))),
    fs("probes", EXEMPT, 2, undefined, { subjects: groups("system:unauthenticated", "system:authenticated"), nonResourceRules: [{ verbs: ["get"], nonResourceURLs: ["/healthz", "/readyz", "/livez"] }] }),
  ]);
}

/** The annotation upstream puts on bootstrap objects it may keep up to date. */
export function autoUpdateAnnotation(naming: Naming): string {
  return `apf.${naming.keyDomain}/autoupdate-spec`;
}

/** Every bootstrap object, priority levels first (a schema's level then exists when it is created). */
export function bootstrapObjects(naming: Naming): { levels: PriorityLevelConfiguration[]; schemas: FlowSchema[] } {
  const apiVersion = `${naming.flowcontrolGroup}/v1`;
  const metadata = (name: string) => ({ name, annotations: { [autoUpdateAnnotation(naming)]: "true" } });
  return {
    levels: Object.entries({ ...MANDATORY_LEVELS, ...SUGGESTED_LEVELS }).map(([name, spec]) => ({ apiVersion, kind: "PriorityLevelConfiguration", metadata: metadata(name), spec: structuredClone(spec) })),
    schemas: Object.entries({ ...mandatorySchemas(), ...suggestedSchemas(naming) }).map(([name, spec]) => ({ apiVersion, kind: "FlowSchema", metadata: metadata(name), spec: structuredClone(spec) })),
  };
}
