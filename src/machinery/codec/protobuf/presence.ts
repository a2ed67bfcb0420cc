// Which scalar fields keep a zero value when decoded: those that are pointers
// in upstream's Go types (`replicas *int32`), where 0 or "" or false differs
// from unset. Go writes every non-pointer scalar, zero or not, so decoding
// keeps a zero only here and in `required` fields; elsewhere a zero is unset,
// as upstream's `omitempty` JSON shows it. Facts from k8s.io/api (v1.33).

const META = "io.k8s.apimachinery.pkg.apis.meta.v1";
const CORE = "io.k8s.api.core.v1";
const APPS = "io.k8s.api.apps.v1";
const BATCH = "io.k8s.api.batch.v1";

const leaseSpec = ["holderIdentity", "leaseDurationSeconds", "leaseTransitions", "strategy", "preferredHolder"];

/** Type name → JSON names of its pointer-typed scalar fields (embedded structs' fields included, flattened). */
export const POINTER_SCALARS: Readonly<Record<string, readonly string[]>> = {
  [`${META}.ObjectMeta`]: ["deletionGracePeriodSeconds"],
  [`${META}.ListMeta`]: ["remainingItemCount"],
  [`${META}.OwnerReference`]: ["controller", "blockOwnerDeletion"],
  [`${META}.DeleteOptions`]: ["gracePeriodSeconds", "orphanDependents", "propagationPolicy", "ignoreStoreReadErrorWithClusterBreakingPotential"],
  [`${META}.Preconditions`]: ["uid", "resourceVersion"],

  [`${CORE}.Container`]: ["restartPolicy"],
  [`${CORE}.EphemeralContainer`]: ["restartPolicy"],
  [`${CORE}.ConfigMapEnvSource`]: ["optional"],
  [`${CORE}.SecretEnvSource`]: ["optional"],
  [`${CORE}.ConfigMapKeySelector`]: ["optional"],
  [`${CORE}.SecretKeySelector`]: ["optional"],
  [`${CORE}.VolumeMount`]: ["recursiveReadOnly", "mountPropagation"],
  [`${CORE}.Probe`]: ["terminationGracePeriodSeconds"],
  [`${CORE}.Lifecycle`]: ["stopSignal"],
  [`${CORE}.SecurityContext`]: ["privileged", "runAsUser", "runAsGroup", "runAsNonRoot", "readOnlyRootFilesystem", "allowPrivilegeEscalation", "procMount"],
  [`${CORE}.WindowsSecurityContextOptions`]: ["gmsaCredentialSpecName", "gmsaCredentialSpec", "runAsUserName", "hostProcess"],
  [`${CORE}.SeccompProfile`]: ["localhostProfile"],
  [`${CORE}.AppArmorProfile`]: ["localhostProfile"],
  [`${CORE}.HostPathVolumeSource`]: ["type"],
  [`${CORE}.SecretVolumeSource`]: ["defaultMode", "optional"],
  [`${CORE}.ConfigMapVolumeSource`]: ["defaultMode", "optional"],
  [`${CORE}.KeyToPath`]: ["mode"],
  [`${CORE}.DownwardAPIVolumeSource`]: ["defaultMode"],
  [`${CORE}.DownwardAPIVolumeFile`]: ["mode"],
  [`${CORE}.ProjectedVolumeSource`]: ["defaultMode"],
  [`${CORE}.SecretProjection`]: ["optional"],
  [`${CORE}.ConfigMapProjection`]: ["optional"],
  [`${CORE}.ServiceAccountTokenProjection`]: ["expirationSeconds"],
  [`${CORE}.ClusterTrustBundleProjection`]: ["name", "signerName", "optional"],
  [`${CORE}.CSIVolumeSource`]: ["readOnly", "fsType"],
  [`${CORE}.PersistentVolumeClaimSpec`]: ["storageClassName", "volumeMode", "volumeAttributesClassName"],
  [`${CORE}.PersistentVolumeClaimStatus`]: ["currentVolumeAttributesClassName"],
  [`${CORE}.TypedLocalObjectReference`]: ["apiGroup"],
  [`${CORE}.TypedObjectReference`]: ["apiGroup", "namespace"],
  [`${CORE}.Toleration`]: ["tolerationSeconds"],
  [`${CORE}.TopologySpreadConstraint`]: ["minDomains", "nodeAffinityPolicy", "nodeTaintsPolicy"],
  [`${CORE}.PodSpec`]: [
    "terminationGracePeriodSeconds",
    "activeDeadlineSeconds",
    "automountServiceAccountToken",
    "shareProcessNamespace",
    "priority",
    "runtimeClassName",
    "enableServiceLinks",
    "preemptionPolicy",
    "setHostnameAsFQDN",
    "hostUsers",
  ],
  [`${CORE}.PodSecurityContext`]: ["runAsUser", "runAsGroup", "runAsNonRoot", "fsGroup", "fsGroupChangePolicy", "supplementalGroupsPolicy", "seLinuxChangePolicy"],
  [`${CORE}.PodDNSConfigOption`]: ["value"],
  [`${CORE}.PodResourceClaim`]: ["resourceClaimName", "resourceClaimTemplateName"],
  [`${CORE}.PodResourceClaimStatus`]: ["resourceClaimName"],
  [`${CORE}.ContainerStatus`]: ["started", "stopSignal"],
  [`${CORE}.VolumeMountStatus`]: ["recursiveReadOnly"],
  [`${CORE}.NodeSwapStatus`]: ["capacity"],
  [`${CORE}.NodeRuntimeHandlerFeatures`]: ["recursiveReadOnlyMounts", "userNamespaces"],
  [`${CORE}.NodeFeatures`]: ["supplementalGroupsPolicy"],
  [`${CORE}.ServiceSpec`]: ["allocateLoadBalancerNodePorts", "loadBalancerClass", "ipFamilyPolicy", "internalTrafficPolicy", "trafficDistribution"],
  [`${CORE}.ServicePort`]: ["appProtocol"],
  [`${CORE}.ClientIPConfig`]: ["timeoutSeconds"],
  [`${CORE}.LoadBalancerIngress`]: ["ipMode"],
  [`${CORE}.PortStatus`]: ["error"],
  [`${CORE}.EndpointAddress`]: ["nodeName"],
  [`${CORE}.EndpointPort`]: ["appProtocol"],
  [`${CORE}.ConfigMap`]: ["immutable"],
  [`${CORE}.Secret`]: ["immutable"],
  [`${CORE}.ServiceAccount`]: ["automountServiceAccountToken"],
  [`${CORE}.ReplicationControllerSpec`]: ["replicas"],

  [`${APPS}.DeploymentSpec`]: ["replicas", "revisionHistoryLimit", "progressDeadlineSeconds"],
  [`${APPS}.DeploymentStatus`]: ["terminatingReplicas", "collisionCount"],
  [`${APPS}.ReplicaSetSpec`]: ["replicas"],
  [`${APPS}.ReplicaSetStatus`]: ["terminatingReplicas"],
  [`${APPS}.DaemonSetSpec`]: ["revisionHistoryLimit"],
  [`${APPS}.DaemonSetStatus`]: ["collisionCount"],
  [`${APPS}.StatefulSetSpec`]: ["replicas", "revisionHistoryLimit"],
  [`${APPS}.StatefulSetStatus`]: ["collisionCount"],
  [`${APPS}.RollingUpdateStatefulSetStrategy`]: ["partition"],

  [`${BATCH}.JobSpec`]: [
    "parallelism",
    "completions",
    "activeDeadlineSeconds",
    "backoffLimit",
    "backoffLimitPerIndex",
    "maxFailedIndexes",
    "manualSelector",
    "ttlSecondsAfterFinished",
    "completionMode",
    "suspend",
    "podReplacementPolicy",
    "managedBy",
  ],
  [`${BATCH}.JobStatus`]: ["terminating", "ready", "failedIndexes"],
  [`${BATCH}.PodFailurePolicyOnExitCodesRequirement`]: ["containerName"],
  [`${BATCH}.SuccessPolicyRule`]: ["succeededIndexes", "succeededCount"],
  [`${BATCH}.CronJobSpec`]: ["timeZone", "startingDeadlineSeconds", "suspend", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"],

  ["io.k8s.api.coordination.v1.LeaseSpec"]: leaseSpec,
  ["io.k8s.api.coordination.v1beta1.LeaseSpec"]: leaseSpec,
};

/** Whether a decoded zero of this field is kept (a Go pointer, or a required field upstream writes even when zero). */
export function keepsZero(typeName: string, field: string, required: boolean | undefined): boolean {
  return required === true || (POINTER_SCALARS[typeName]?.includes(field) ?? false);
}
