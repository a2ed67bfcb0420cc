// The built-in signer names (upstream's kubernetes.io/kube-apiserver-client,
// kube-apiserver-client-kubelet, kubelet-serving, legacy-unknown) under the
// naming table's key domain and agent name, the key usages a request may ask
// for, and the condition types.

import type { Naming } from "../../machinery/naming.js";

export interface SignerNames {
  /** Client certificates for the API server (any user the approver lets through). */
  readonly apiServerClient: string;
  /** Node agents' client certificates: CN system:node:NAME, O system:nodes. */
  readonly agentClient: string;
  /** Node agents' serving certificates. */
  readonly agentServing: string;
  /** Refused by this API version (upstream's legacy-unknown). */
  readonly legacyUnknown: string;
}

export function signerNames(naming: Naming): SignerNames {
  const d = naming.keyDomain;
  return {
    apiServerClient: `${d}/kube-apiserver-client`,
    agentClient: `${d}/kube-apiserver-client-${naming.agentName}`,
    agentServing: `${d}/${naming.agentName}-serving`,
    legacyUnknown: `${d}/legacy-unknown`,
  };
}

/** Upstream's key usages, sorted as its NotSupported message lists them. */
export const KEY_USAGES: readonly string[] = [
  "any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment", "decipher only",
  "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement",
  "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping",
];

export const CONDITION = { approved: "Approved", denied: "Denied", failed: "Failed" } as const;

/** The user and group of node agents (upstream's system:node:NAME in system:nodes). */
export const NODE_USER_PREFIX = "system:node:";
export const NODES_GROUP = "system:nodes";

/** The node a user is, when it is one (name system:node:NAME and group system:nodes); "" for system:node: alone. */
export function nodeOfUser(user: { readonly name: string; readonly groups: readonly string[] }): string | undefined {
  if (!user.groups.includes(NODES_GROUP) || !user.name.startsWith(NODE_USER_PREFIX)) return undefined;
  return user.name.slice(NODE_USER_PREFIX.length);
}
/** The group every bootstrap token's user is in. */
export const BOOTSTRAPPERS_GROUP = "system:bootstrappers";
