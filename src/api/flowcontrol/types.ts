// TypeScript views of the flowcontrol.apiserver.<suffix> kinds; fields
// optional, as request bodies are untrusted until validated.

import type { ApiObject } from "../../machinery/index.js";
import type { Condition } from "../core/index.js";

export interface Subject {
  kind?: string;
  user?: { name?: string } | null;
  group?: { name?: string } | null;
  serviceAccount?: { namespace?: string; name?: string } | null;
}

export interface ResourcePolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  clusterScope?: boolean;
  namespaces?: string[] | null;
}

export interface NonResourcePolicyRule {
  verbs?: string[];
  nonResourceURLs?: string[];
}

export interface PolicyRulesWithSubjects {
  subjects?: Subject[];
  resourceRules?: ResourcePolicyRule[] | null;
  nonResourceRules?: NonResourcePolicyRule[] | null;
}

export interface FlowSchemaSpec {
  priorityLevelConfiguration?: { name?: string };
  matchingPrecedence?: number;
  distinguisherMethod?: { type?: string } | null;
  rules?: PolicyRulesWithSubjects[] | null;
}

export interface FlowSchema extends ApiObject {
  spec?: FlowSchemaSpec;
  status?: { conditions?: Condition[] | null };
}

export interface QueuingConfiguration {
  queues?: number;
  handSize?: number;
  queueLengthLimit?: number;
}

export interface PriorityLevelConfigurationSpec {
  type?: string;
  limited?: {
    nominalConcurrencyShares?: number | null;
    limitResponse?: { type?: string; queuing?: QueuingConfiguration | null };
    lendablePercent?: number | null;
    borrowingLimitPercent?: number | null;
  } | null;
  exempt?: { nominalConcurrencyShares?: number | null; lendablePercent?: number | null } | null;
}

export interface PriorityLevelConfiguration extends ApiObject {
  spec?: PriorityLevelConfigurationSpec;
  status?: { conditions?: Condition[] | null };
}
