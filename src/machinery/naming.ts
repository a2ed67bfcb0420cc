// The naming table: every name derived from the product's identity, in one
// place. The seeds replace upstream's names with orch's; --api-group-suffix
// picks the table, so the same server can present upstream's names
// (k8s.io, kubernetes.io, kube-system, ...) to unmodified upstream clients.

export interface Naming {
  /** API group suffix: "orch.io" (upstream "k8s.io"). */
  readonly groupSuffix: string;
  /** Domain of well-known label, annotation and taint keys: "orch.io" (upstream "kubernetes.io"). */
  readonly keyDomain: string;
  /** Group of Table, PartialObjectMetadata and friends. */
  readonly metaGroup: string;
  readonly coordinationGroup: string;
  /** PriorityClasses: "scheduling.orch.io" (upstream "scheduling.k8s.io"). */
  readonly schedulingGroup: string;
  /** StorageClasses, CSI kinds, VolumeAttachments: "storage.orch.io" (upstream "storage.k8s.io"). */
  readonly storageGroup: string;
  readonly discoveryGroup: string;
  /** SelfSubjectReview, and impersonation's uids/userextras attributes: "authentication.orch.io" (upstream "authentication.k8s.io"). */
  readonly authenticationGroup: string;
  /** The access reviews (SubjectAccessReview, ...): "authorization.orch.io" (upstream "authorization.k8s.io"). */
  readonly authorizationGroup: string;
  /** Roles and bindings: "rbac.authorization.orch.io" (upstream "rbac.authorization.k8s.io"). */
  readonly rbacGroup: string;
  readonly systemNamespace: string;
  readonly publicNamespace: string;
  readonly nodeLeaseNamespace: string;
  readonly protobufMediaType: string;
  readonly metricPrefix: string;
  readonly agentName: string;
  /** Annotation on the bookmark that ends a streaming list's initial events. */
  readonly initialEventsEndAnnotation: string;
  /** Audit policies and events: "audit.orch.io" (upstream "audit.k8s.io"). */
  readonly auditGroup: string;
  /** CertificateSigningRequests: "certificates.orch.io" (upstream "certificates.k8s.io"). */
  readonly certificatesGroup: string;
  /** CustomResourceDefinitions: "apiextensions.orch.io" (upstream "apiextensions.k8s.io"). */
  readonly apiextensionsGroup: string;
  /** Webhook configurations: "admissionregistration.orch.io" (upstream "admissionregistration.k8s.io"). */
  readonly admissionregistrationGroup: string;
  /** Ingresses, IngressClasses, NetworkPolicies: "networking.orch.io" (upstream "networking.k8s.io"). */
  readonly networkingGroup: string;
  /** RuntimeClasses: "node.orch.io" (upstream "node.k8s.io"). */
  readonly nodeGroup: string;
  /** FlowSchemas, PriorityLevelConfigurations: "flowcontrol.apiserver.orch.io" (upstream "flowcontrol.apiserver.k8s.io"). */
  readonly flowcontrolGroup: string;
  /** events/v1 Event over core events' storage: "events.orch.io" (upstream "events.k8s.io"). */
  readonly eventsGroup: string;
  /** APIServices (the aggregation layer): "apiregistration.orch.io" (upstream "apiregistration.k8s.io"). */
  readonly apiregistrationGroup: string;
}

/** Media types and parameters are accepted in both spellings, always. */
export const META_GROUPS: readonly string[] = ["meta.orch.io", "meta.k8s.io"];
export const PROTOBUF_MEDIA_TYPES: readonly string[] = ["application/vnd.orch.protobuf", "application/vnd.kubernetes.protobuf"];

export const DEFAULT_GROUP_SUFFIX = "orch.io";

export function namingFor(groupSuffix: string = DEFAULT_GROUP_SUFFIX): Naming {
  const upstream = groupSuffix === "k8s.io";
  const product = upstream ? "kube" : groupSuffix.split(".")[0]!;
  return Object.freeze({
    groupSuffix,
    keyDomain: upstream ? "kubernetes.io" : groupSuffix,
    metaGroup: `meta.${groupSuffix}`,
    coordinationGroup: `coordination.${groupSuffix}`,
    schedulingGroup: `scheduling.${groupSuffix}`,
    storageGroup: `storage.${groupSuffix}`,
    discoveryGroup: `apidiscovery.${groupSuffix}`,
    authenticationGroup: `authentication.${groupSuffix}`,
    authorizationGroup: `authorization.${groupSuffix}`,
    rbacGroup: `rbac.authorization.${groupSuffix}`,
    systemNamespace: `${product}-system`,
    publicNamespace: `${product}-public`,
    nodeLeaseNamespace: `${product}-node-lease`,
    protobufMediaType: upstream ? "application/vnd.kubernetes.protobuf" : `application/vnd.${product}.protobuf`,
    metricPrefix: upstream ? "kubernetes_" : `${product}_`,
    agentName: upstream ? "kubelet" : "nodeagent",
    initialEventsEndAnnotation: `${groupSuffix}/initial-events-end`,
    auditGroup: `audit.${groupSuffix}`,
    certificatesGroup: `certificates.${groupSuffix}`,
    apiextensionsGroup: `apiextensions.${groupSuffix}`,
    admissionregistrationGroup: `admissionregistration.${groupSuffix}`,
    networkingGroup: `networking.${groupSuffix}`,
    nodeGroup: `node.${groupSuffix}`,
    flowcontrolGroup: `flowcontrol.apiserver.${groupSuffix}`,
    eventsGroup: `events.${groupSuffix}`,
    apiregistrationGroup: `apiregistration.${groupSuffix}`,
  });
}

/**
 * The annotations the node agent puts on static pods (upstream's
 * kubernetes.io/config.*): where from, the hash that is also the uid, and the
 * mark of a mirror pod in the API.
 */
export function configAnnotations(keyDomain: string) {
  return { source: `${keyDomain}/config.source`, hash: `${keyDomain}/config.hash`, mirror: `${keyDomain}/config.mirror` };
}

/**
 * The annotation and finalizer keys of persistent storage (upstream's
 * kubernetes.io/pvc-protection, volume.kubernetes.io/selected-node, ...), which
 * the admission plugins, the binder, the provisioner and the scheduler share.
 */
export interface StorageKeys {
  /** On a StorageClass: "true" makes it the class of claims that name none. */
  defaultClass: string;
  /** Kept on a claim while a pod uses it. */
  pvcProtection: string;
  /** Kept on a volume while a claim is bound to it. */
  pvProtection: string;
  /** On a claim of a WaitForFirstConsumer class: the node the scheduler picked. */
  selectedNode: string;
  /** On a claim: the provisioner asked to make its volume. */
  storageProvisioner: string;
  /** On a claim: the binder has finished binding it. */
  bindCompleted: string;
  /** On a claim or volume: the binder (not a user) made the bind. */
  boundByController: string;
  /** On a volume: the provisioner that made it (upstream's pv.kubernetes.io/provisioned-by). */
  provisionedBy: string;
}

export function storageKeys(naming: Naming): StorageKeys {
  const d = naming.keyDomain;
  return {
    defaultClass: `storageclass.${d}/is-default-class`,
    pvcProtection: `${d}/pvc-protection`,
    pvProtection: `${d}/pv-protection`,
    selectedNode: `volume.${d}/selected-node`,
    storageProvisioner: `volume.${d}/storage-provisioner`,
    bindCompleted: `pv.${d}/bind-completed`,
    boundByController: `pv.${d}/bound-by-controller`,
    provisionedBy: `pv.${d}/provisioned-by`,
  };
}

/** Names accepted by --api-group-suffix: a DNS subdomain with at least two labels. */
export function isValidGroupSuffix(suffix: string): boolean {
  return /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/.test(suffix) && suffix.length <= 253;
}

/**
 * The label and annotation keys the workload controllers write (upstream's
 * deployment.kubernetes.io/revision, statefulset.kubernetes.io/pod-name, ...).
 * Unprefixed keys (pod-template-hash, controller-revision-hash) are the same
 * in every table.
 */
export interface WorkloadKeys {
  deploymentRevision: string;
  deploymentRevisionHistory: string;
  desiredReplicas: string;
  maxReplicas: string;
  podDeletionCost: string;
  revisionHash: string;
  statefulSetPodName: string;
  podIndex: string;
  /** Node taints the DaemonSet controller tolerates on its pods. */
  taintNotReady: string;
  taintUnreachable: string;
  taintDiskPressure: string;
  taintMemoryPressure: string;
  taintPidPressure: string;
  taintUnschedulable: string;
  taintNetworkUnavailable: string;
}

export function workloadKeys(naming: Naming): WorkloadKeys {
  const d = naming.keyDomain;
  return {
    deploymentRevision: `deployment.${d}/revision`,
    deploymentRevisionHistory: `deployment.${d}/revision-history`,
    desiredReplicas: `deployment.${d}/desired-replicas`,
    maxReplicas: `deployment.${d}/max-replicas`,
    podDeletionCost: `controller.${d}/pod-deletion-cost`,
    revisionHash: `controller.${d}/hash`,
    statefulSetPodName: `statefulset.${d}/pod-name`,
    podIndex: `apps.${d}/pod-index`,
    taintNotReady: `node.${d}/not-ready`,
    taintUnreachable: `node.${d}/unreachable`,
    taintDiskPressure: `node.${d}/disk-pressure`,
    taintMemoryPressure: `node.${d}/memory-pressure`,
    taintPidPressure: `node.${d}/pid-pressure`,
    taintUnschedulable: `node.${d}/unschedulable`,
    taintNetworkUnavailable: `node.${d}/network-unavailable`,
  };
}

/** The programs that talk to the API server under a name of their own. */
export type ComponentName = "controller-manager" | "scheduler" | "nodeagent" | "proxy";

/**
 * The name a program goes by toward the API server: its user agent, and so
 * the field manager of its writes. Upstream's table: kube-controller-manager,
 * kube-scheduler, kubelet, kube-proxy; orch's: orch-controller-manager, ...
 */
export function componentName(naming: Naming, component: ComponentName): string {
  if (component === "nodeagent" && naming.agentName === "kubelet") return "kubelet";
  const product = naming.systemNamespace.slice(0, -"-system".length);
  return `${product}-${component === "nodeagent" ? naming.agentName : component}`;
}

/**
 * The user of the API server's client certificate towards node agents
 * (kubeadm's kube-apiserver-kubelet-client): "orch-apiserver-nodeagent-client",
 * upstream "kube-apiserver-kubelet-client".
 */
export function nodeAgentClientUser(naming: Naming): string {
  const product = naming.systemNamespace.slice(0, -"-system".length);
  return `${product}-apiserver-${naming.agentName}-client`;
}

/** The `provider` label of the `kubernetes` service: "orch" (upstream "kubernetes"). */
export function providerName(naming: Naming): string {
  return naming.keyDomain.split(".")[0]!;
}
