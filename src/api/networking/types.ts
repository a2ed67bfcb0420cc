// TypeScript views of the networking.<suffix> kinds; fields optional, as
// request bodies are untrusted until validated.

import type { ApiObject, LabelSelector } from "../../machinery/index.js";
import type { IntOrString } from "../core/index.js";

export interface TypedReference {
  apiGroup?: string | null;
  kind?: string;
  name?: string;
}

export interface IngressBackend {
  service?: { name?: string; port?: { name?: string; number?: number } } | null;
  resource?: TypedReference | null;
}

export interface IngressRule {
  host?: string;
  http?: { paths?: { path?: string; pathType?: string; backend?: IngressBackend }[] | null } | null;
}

export interface Ingress extends ApiObject {
  spec?: {
    ingressClassName?: string | null;
    defaultBackend?: IngressBackend | null;
    tls?: { hosts?: string[] | null; secretName?: string }[] | null;
    rules?: IngressRule[] | null;
  };
  status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string; ports?: { port?: number; protocol?: string; error?: string | null }[] | null }[] | null } };
}

export interface IngressClass extends ApiObject {
  spec?: {
    controller?: string;
    parameters?: (TypedReference & { scope?: string | null; namespace?: string | null }) | null;
  };
}

export interface NetworkPolicyPeer {
  podSelector?: LabelSelector | null;
  namespaceSelector?: LabelSelector | null;
  ipBlock?: { cidr?: string; except?: string[] | null } | null;
}

export interface NetworkPolicyPort {
  protocol?: string | null;
  port?: IntOrString | null;
  endPort?: number | null;
}

export interface NetworkPolicy extends ApiObject {
  spec?: {
    podSelector?: LabelSelector;
    ingress?: { ports?: NetworkPolicyPort[] | null; from?: NetworkPolicyPeer[] | null }[] | null;
    egress?: { ports?: NetworkPolicyPort[] | null; to?: NetworkPolicyPeer[] | null }[] | null;
    policyTypes?: string[] | null;
  };
}

export interface ParentReference {
  group?: string;
  resource?: string;
  namespace?: string;
  name?: string;
}

export interface IPAddress extends ApiObject {
  spec?: { parentRef?: ParentReference | null };
}

export interface ServiceCIDR extends ApiObject {
  spec?: { cidrs?: string[] | null };
  status?: { conditions?: MetaCondition[] | null };
}

/** metav1.Condition. */
export interface MetaCondition {
  type?: string;
  status?: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}
