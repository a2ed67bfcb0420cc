// The core v1 types (pods, nodes, namespaces, services, endpoints, config
// maps, secrets, events, service accounts and what they embed) as schema
// data: upstream's v1.33 field sets, Protobuf field numbers from
// k8s.io/api/core/v1/generated.proto, required fields, defaults, list types
// and strategic-merge keys as upstream's OpenAPI publishes them.
//
// Left out on purpose (rarely used, mostly deprecated in-tree cloud/vendor
// volume plugins; a pod using one loses that field as unknown):
// VolumeSource gcePersistentDisk (3), awsElasticBlockStore (4), gitRepo (5),
// iscsi (8), glusterfs (9), rbd (11), flexVolume (12), cinder (13), cephfs (14),
// flocker (15), fc (17), azureFile (18), vsphereVolume (20), quobyte (21),
// azureDisk (22), photonPersistentDisk (23), portworxVolume (24), scaleIO (25),
// storageos (27). Also the kinds nobody here serves yet (PersistentVolume,
// ReplicationController, LimitRange, ResourceQuota, ComponentStatus,
// PodTemplate) and the deprecated NodeSpec.configSource / NodeStatus.config.

import { f, s, type, type Field, type Schema, type SchemaRegistry, type TypeDef } from "../../machinery/schema.js";
import { META_V1, probedConditionFields, registerMetaSchemas } from "../meta/schemas.js";

export const CORE_V1 = "io.k8s.api.core.v1";

const core = (name: string): Schema => s.ref(`${CORE_V1}.${name}`);
const meta = (name: string): Schema => s.ref(`${META_V1}.${name}`);
const t = (name: string, description: string, fields: Record<string, Field>): TypeDef => type(`${CORE_V1}.${name}`, description, fields);
const atomic = (items: Schema): Schema => s.array(items, { listType: "atomic" });
const mapList = (items: Schema, ...keys: string[]): Schema => s.array(items, { listType: "map", listMapKeys: keys });
const mergeBy = (key: string) => ({ patchStrategy: "merge" as const, patchMergeKey: key });
const quantities = (): Schema => s.map(s.quantity());
const enumOf = (...values: string[]): Schema => s.string({ enum: values });
/** Mode bits 0644, the default of every file-projecting volume. */
const MODE_0644 = 420;

/** Go's embedded structs: the same fields, in Protobuf inside the sub-message at `at`. */
function embedded(at: number, fields: Record<string, Field>): Record<string, Field> {
  return Object.fromEntries(Object.entries(fields).map(([name, field]) => [name, { ...field, embeddedIn: at }]));
}

/** LocalObjectReference's one field, embedded at 1 in the selectors and sources that name a config map or secret. */
const localName = (what: string) => embedded(1, { name: f(1, s.string(), `Name of the ${what} in the pod's namespace.`) });

/** `<Kind>List`: list metadata (1) and the items (2), as every upstream list message. */
export function listOf(group: string, kind: string, description: string): TypeDef {
  return type(`${group}.${kind}List`, description, {
    metadata: f(1, meta("ListMeta"), "Standard list metadata."),
    items: f(2, s.array(s.ref(`${group}.${kind}`)), `The ${kind} objects.`, { required: true }),
  });
}

/** Kinds with metadata (1), spec (2) and status (3). */
function kind(name: string, description: string, withStatus = true): TypeDef {
  const fields: Record<string, Field> = {
    metadata: f(1, meta("ObjectMeta"), "Standard object metadata."),
    spec: f(2, core(`${name}Spec`), `The desired state of the ${name}.`),
  };
  if (withStatus) fields["status"] = f(3, core(`${name}Status`), `The observed state of the ${name}; written by the system.`);
  return t(name, description, fields);
}

// ---------------------------------------------------------------- Namespace

const namespaceTypes = [
  kind("Namespace", "A scope for names; most objects live in one."),
  t("NamespaceSpec", "The desired state of a Namespace.", {
    finalizers: f(1, atomic(s.string()), "Values that must be gone before the namespace is removed from storage; `kubernetes` by default."),
  }),
  t("NamespaceStatus", "The observed state of a Namespace.", {
    phase: f(1, enumOf("Active", "Terminating"), "Active, or Terminating once deleted."),
    conditions: f(2, mapList(core("NamespaceCondition"), "type"), "Observations of the namespace's state.", mergeBy("type")),
  }),
  t("NamespaceCondition", "One observed condition of a namespace.", {
    type: f(1, s.string(), "Condition type.", { required: true }),
    status: f(2, s.string(), "True, False or Unknown.", { required: true }),
    lastTransitionTime: f(4, s.time(), "When status last changed."),
    reason: f(5, s.string(), "CamelCase reason for the last transition."),
    message: f(6, s.string(), "Human-readable details."),
  }),
];

// ---------------------------------------------------------------- Pod: containers

const containerFields: Record<string, Field> = {
  name: f(1, s.string(), "Container name, a DNS label unique within the pod. Cannot be updated.", { required: true }),
  image: f(2, s.string(), "Container image reference."),
  command: f(3, atomic(s.string()), "Entrypoint; the image's ENTRYPOINT when empty. $(VAR) references are expanded."),
  args: f(4, atomic(s.string()), "Arguments to the entrypoint; the image's CMD when empty."),
  workingDir: f(5, s.string(), "Working directory; the runtime's default when empty."),
  ports: f(6, mapList(core("ContainerPort"), "containerPort", "protocol"), "Ports to expose (informational; any listening port is reachable).", mergeBy("containerPort")),
  envFrom: f(19, atomic(core("EnvFromSource")), "Sources whose keys become environment variables."),
  env: f(7, mapList(core("EnvVar"), "name"), "Environment variables.", mergeBy("name")),
  resources: f(8, core("ResourceRequirements"), "Compute resource requests and limits."),
  resizePolicy: f(23, atomic(core("ContainerResizePolicy")), "Whether resizing each resource restarts the container."),
  restartPolicy: f(24, s.string(), "Only for init containers: Always makes it a sidecar that keeps running."),
  volumeMounts: f(9, mapList(core("VolumeMount"), "mountPath"), "Pod volumes mounted into the container.", mergeBy("mountPath")),
  volumeDevices: f(21, mapList(core("VolumeDevice"), "devicePath"), "Raw block devices mapped into the container.", mergeBy("devicePath")),
  livenessProbe: f(10, core("Probe"), "Restart the container when this probe fails."),
  readinessProbe: f(11, core("Probe"), "Remove the pod from service endpoints while this probe fails."),
  startupProbe: f(22, core("Probe"), "Other probes wait until this one succeeds once."),
  lifecycle: f(12, core("Lifecycle"), "Hooks run after start and before stop."),
  terminationMessagePath: f(13, s.string(), "File whose content becomes the termination message.", { default: "/dev/termination-log" }),
  terminationMessagePolicy: f(20, enumOf("File", "FallbackToLogsOnError"), "File, or FallbackToLogsOnError to use the log tail when the file is empty.", {
    default: "File",
  }),
  imagePullPolicy: f(14, enumOf("Always", "Never", "IfNotPresent"), "Always for `:latest` or untagged images, IfNotPresent otherwise."),
  securityContext: f(15, core("SecurityContext"), "Security options; override the pod's."),
  stdin: f(16, s.bool(), "Allocate a stdin buffer."),
  stdinOnce: f(17, s.bool(), "Close stdin after the first attach session ends."),
  tty: f(18, s.bool(), "Allocate a TTY (needs stdin)."),
};

const containerTypes = [
  t("Container", "One application container of a pod.", containerFields),
  t("EphemeralContainer", "A temporary container added to a running pod for debugging.", {
    ...embedded(1, containerFields),
    targetContainerName: f(2, s.string(), "Share the namespaces of this container of the pod."),
  }),
  t("ContainerPort", "A network port of a container.", {
    name: f(1, s.string(), "IANA_SVC_NAME, unique within the pod; services may refer to it."),
    hostPort: f(2, s.int32(), "Port on the host (rarely needed)."),
    containerPort: f(3, s.int32(), "Port on the pod's IP, 1-65535.", { required: true }),
    protocol: f(4, enumOf("TCP", "UDP", "SCTP"), "TCP, UDP or SCTP.", { default: "TCP" }),
    hostIP: f(5, s.string(), "Host IP to bind the host port to."),
  }),
  t("EnvVar", "One environment variable.", {
    name: f(1, s.string(), "Variable name.", { required: true }),
    value: f(2, s.string(), "Value; $(VAR) references are expanded."),
    valueFrom: f(3, core("EnvVarSource"), "Where the value comes from, when value is empty."),
  }),
  t("EnvVarSource", "The source of one environment variable's value.", {
    fieldRef: f(1, core("ObjectFieldSelector"), "A field of the pod (metadata.name, status.podIP, ...)."),
    resourceFieldRef: f(2, core("ResourceFieldSelector"), "A resource limit or request of the container."),
    configMapKeyRef: f(3, core("ConfigMapKeySelector"), "A key of a config map."),
    secretKeyRef: f(4, core("SecretKeySelector"), "A key of a secret."),
  }),
  t("EnvFromSource", "A config map or secret whose keys become environment variables.", {
    prefix: f(1, s.string(), "Prefix for every variable name."),
    configMapRef: f(2, core("ConfigMapEnvSource"), "The config map to read."),
    secretRef: f(3, core("SecretEnvSource"), "The secret to read."),
  }),
  t("ConfigMapEnvSource", "Selects a config map for envFrom.", {
    ...localName("config map"),
    optional: f(2, s.bool(), "Whether the config map may be missing."),
  }),
  t("SecretEnvSource", "Selects a secret for envFrom.", {
    ...localName("secret"),
    optional: f(2, s.bool(), "Whether the secret may be missing."),
  }),
  t("ConfigMapKeySelector", "One key of a config map.", {
    ...localName("config map"),
    key: f(2, s.string(), "The key.", { required: true }),
    optional: f(3, s.bool(), "Whether the config map or key may be missing."),
  }),
  t("SecretKeySelector", "One key of a secret.", {
    ...localName("secret"),
    key: f(2, s.string(), "The key.", { required: true }),
    optional: f(3, s.bool(), "Whether the secret or key may be missing."),
  }),
  t("ObjectFieldSelector", "A field of the pod, by path.", {
    apiVersion: f(1, s.string(), "Version the path is written in.", { default: "v1" }),
    fieldPath: f(2, s.string(), "Path of the field, e.g. metadata.name.", { required: true }),
  }),
  t("ResourceFieldSelector", "A container resource and its output unit.", {
    containerName: f(1, s.string(), "Container name; required for volumes."),
    resource: f(2, s.string(), "limits.cpu, requests.memory, ...", { required: true }),
    divisor: f(3, s.quantity(), "Unit of the output; 1 when unset."),
  }),
  t("ResourceRequirements", "Compute resource requests and limits.", {
    limits: f(1, quantities(), "The most a container may use."),
    requests: f(2, quantities(), "What a container is guaranteed; defaults to limits."),
    claims: f(3, mapList(core("ResourceClaim"), "name"), "Resource claims of the pod this container uses."),
  }),
  t("ResourceClaim", "A reference to one of the pod's resource claims.", {
    name: f(1, s.string(), "Name of an entry in spec.resourceClaims.", { required: true }),
    request: f(2, s.string(), "One request of that claim; all when empty."),
  }),
  t("ContainerResizePolicy", "What resizing one resource does to a container.", {
    resourceName: f(1, s.string(), "cpu or memory.", { required: true }),
    restartPolicy: f(2, enumOf("NotRequired", "RestartContainer"), "NotRequired or RestartContainer.", { required: true }),
  }),
  t("VolumeMount", "A volume mounted into a container.", {
    name: f(1, s.string(), "Name of a pod volume.", { required: true }),
    readOnly: f(2, s.bool(), "Mount read-only."),
    recursiveReadOnly: f(7, enumOf("Disabled", "IfPossible", "Enabled"), "Whether a read-only mount is read-only recursively."),
    mountPath: f(3, s.string(), "Path in the container; must not contain ':'.", { required: true }),
    subPath: f(4, s.string(), "Path within the volume to mount instead of its root."),
    mountPropagation: f(5, enumOf("None", "HostToContainer", "Bidirectional"), "How mounts propagate between host and container."),
    subPathExpr: f(6, s.string(), "Like subPath, with $(VAR) expansion."),
  }),
  t("VolumeDevice", "A raw block device mapped into a container.", {
    name: f(1, s.string(), "Name of a persistentVolumeClaim volume of the pod.", { required: true }),
    devicePath: f(2, s.string(), "Path of the device in the container.", { required: true }),
  }),
  t("Probe", "A health check of a container.", {
    ...embedded(1, {
      exec: f(1, core("ExecAction"), "Run a command in the container."),
      httpGet: f(2, core("HTTPGetAction"), "Send an HTTP GET."),
      tcpSocket: f(3, core("TCPSocketAction"), "Open a TCP connection."),
      grpc: f(4, core("GRPCAction"), "Call the gRPC health service."),
    }),
    initialDelaySeconds: f(2, s.int32(), "Seconds after start before the first probe."),
    timeoutSeconds: f(3, s.int32(), "Seconds before a probe times out.", { default: 1 }),
    periodSeconds: f(4, s.int32(), "Seconds between probes.", { default: 10 }),
    successThreshold: f(5, s.int32(), "Consecutive successes that count as success after a failure.", { default: 1 }),
    failureThreshold: f(6, s.int32(), "Consecutive failures that count as failure.", { default: 3 }),
    terminationGracePeriodSeconds: f(7, s.int64(), "Grace period when a failed probe kills the container; the pod's when unset."),
  }),
  t("ExecAction", "A command run in the container.", {
    command: f(1, atomic(s.string()), "The command line, not run in a shell; exit 0 is success."),
  }),
  t("HTTPGetAction", "An HTTP GET against the container.", {
    path: f(1, s.string(), "Request path.", { default: "/" }),
    port: f(2, s.intOrString(), "Port number or name.", { required: true }),
    host: f(3, s.string(), "Host to connect to; the pod IP when empty."),
    scheme: f(4, enumOf("HTTP", "HTTPS"), "HTTP or HTTPS.", { default: "HTTP" }),
    httpHeaders: f(5, atomic(core("HTTPHeader")), "Extra request headers."),
  }),
  t("HTTPHeader", "One HTTP header.", {
    name: f(1, s.string(), "Header name.", { required: true }),
    value: f(2, s.string(), "Header value.", { required: true }),
  }),
  t("TCPSocketAction", "A TCP connection to the container.", {
    port: f(1, s.intOrString(), "Port number or name.", { required: true }),
    host: f(2, s.string(), "Host to connect to; the pod IP when empty."),
  }),
  t("GRPCAction", "A call to the gRPC health checking service.", {
    port: f(1, s.int32(), "Port of the gRPC service.", { required: true }),
    service: f(2, s.string(), "Service name in the HealthCheckRequest."),
  }),
  t("SleepAction", "Sleep for a while.", {
    seconds: f(1, s.int64(), "Seconds to sleep.", { required: true }),
  }),
  t("Lifecycle", "Hooks around a container's start and stop.", {
    postStart: f(1, core("LifecycleHandler"), "Runs right after the container is created."),
    preStop: f(2, core("LifecycleHandler"), "Runs before the container is stopped by the system."),
    stopSignal: f(3, s.string(), "Signal that stops the container (needs spec.os.name)."),
  }),
  t("LifecycleHandler", "One lifecycle hook action.", {
    exec: f(1, core("ExecAction"), "Run a command."),
    httpGet: f(2, core("HTTPGetAction"), "Send an HTTP GET."),
    tcpSocket: f(3, core("TCPSocketAction"), "Deprecated; accepted but not run."),
    sleep: f(4, core("SleepAction"), "Sleep."),
  }),
  t("SecurityContext", "Security options of one container.", {
    capabilities: f(1, core("Capabilities"), "Capabilities to add and drop."),
    privileged: f(2, s.bool(), "Run privileged (root on the host, in effect)."),
    seLinuxOptions: f(3, core("SELinuxOptions"), "SELinux context."),
    windowsOptions: f(10, core("WindowsSecurityContextOptions"), "Windows-specific options."),
    runAsUser: f(4, s.int64(), "UID of the entrypoint."),
    runAsGroup: f(8, s.int64(), "GID of the entrypoint."),
    runAsNonRoot: f(5, s.bool(), "Refuse to start as UID 0."),
    readOnlyRootFilesystem: f(6, s.bool(), "Mount the root filesystem read-only."),
    allowPrivilegeEscalation: f(7, s.bool(), "Whether no_new_privs is left unset."),
    procMount: f(9, enumOf("Default", "Unmasked"), "Default or Unmasked /proc."),
    seccompProfile: f(11, core("SeccompProfile"), "Seccomp profile; overrides the pod's."),
    appArmorProfile: f(12, core("AppArmorProfile"), "AppArmor profile; overrides the pod's."),
  }),
  t("Capabilities", "POSIX capabilities to add and drop.", {
    add: f(1, atomic(s.string()), "Capabilities to add."),
    drop: f(2, atomic(s.string()), "Capabilities to drop."),
  }),
  t("SELinuxOptions", "SELinux labels.", {
    user: f(1, s.string(), "SELinux user."),
    role: f(2, s.string(), "SELinux role."),
    type: f(3, s.string(), "SELinux type."),
    level: f(4, s.string(), "SELinux level."),
  }),
  t("WindowsSecurityContextOptions", "Windows-specific security options.", {
    gmsaCredentialSpecName: f(1, s.string(), "Name of the GMSA credential spec."),
    gmsaCredentialSpec: f(2, s.string(), "Contents of the GMSA credential spec."),
    runAsUserName: f(3, s.string(), "Windows user name of the entrypoint."),
    hostProcess: f(4, s.bool(), "Run as a host process container."),
  }),
  t("SeccompProfile", "A seccomp profile.", {
    type: f(1, enumOf("Localhost", "RuntimeDefault", "Unconfined"), "Localhost, RuntimeDefault or Unconfined.", { required: true }),
    localhostProfile: f(2, s.string(), "Profile path relative to the agent's seccomp directory (type Localhost)."),
  }),
  t("AppArmorProfile", "An AppArmor profile.", {
    type: f(1, enumOf("Localhost", "RuntimeDefault", "Unconfined"), "Localhost, RuntimeDefault or Unconfined.", { required: true }),
    localhostProfile: f(2, s.string(), "Name of a profile loaded on the node (type Localhost)."),
  }),
];

// ---------------------------------------------------------------- Pod: volumes

/** The volume sources served, at their VolumeSource field numbers (see the header for the ones left out). */
const volumeSourceFields: Record<string, Field> = {
  hostPath: f(1, core("HostPathVolumeSource"), "A file or directory on the host."),
  emptyDir: f(2, core("EmptyDirVolumeSource"), "A temporary directory that lives as long as the pod."),
  secret: f(6, core("SecretVolumeSource"), "A secret's keys as files."),
  nfs: f(7, core("NFSVolumeSource"), "An NFS export."),
  persistentVolumeClaim: f(10, core("PersistentVolumeClaimVolumeSource"), "A persistent volume claim in the pod's namespace."),
  downwardAPI: f(16, core("DownwardAPIVolumeSource"), "Pod fields and container resources as files."),
  configMap: f(19, core("ConfigMapVolumeSource"), "A config map's keys as files."),
  projected: f(26, core("ProjectedVolumeSource"), "Several sources projected into one directory."),
  csi: f(28, core("CSIVolumeSource"), "An ephemeral volume from a CSI driver."),
  ephemeral: f(29, core("EphemeralVolumeSource"), "A claim created for, and deleted with, the pod."),
  image: f(30, core("ImageVolumeSource"), "An OCI image or artifact, mounted read-only."),
};

const volumeTypes = [
  t("Volume", "A named volume the pod's containers may mount.", {
    name: f(1, s.string(), "Volume name, a DNS label unique within the pod.", { required: true }),
    ...embedded(2, volumeSourceFields),
  }),
  t("HostPathVolumeSource", "A host path mapped into the pod.", {
    path: f(1, s.string(), "Path on the host.", { required: true }),
    type: f(2, enumOf("", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice"), "What must exist at the path.", {
      default: "",
    }),
  }),
  t("EmptyDirVolumeSource", "A temporary directory.", {
    medium: f(1, enumOf("", "Memory", "HugePages"), "Storage medium: the node's default, or Memory (tmpfs)."),
    sizeLimit: f(2, s.quantity(), "Most local storage the directory may use."),
  }),
  t("SecretVolumeSource", "A secret projected as files.", {
    secretName: f(1, s.string(), "Name of the secret in the pod's namespace."),
    items: f(2, atomic(core("KeyToPath")), "Which keys go to which paths; all keys when empty."),
    defaultMode: f(3, s.int32(), "Mode bits of the files; 0644 when unset.", { default: MODE_0644 }),
    optional: f(4, s.bool(), "Whether the secret may be missing."),
  }),
  t("ConfigMapVolumeSource", "A config map projected as files.", {
    ...localName("config map"),
    items: f(2, atomic(core("KeyToPath")), "Which keys go to which paths; all keys when empty."),
    defaultMode: f(3, s.int32(), "Mode bits of the files; 0644 when unset.", { default: MODE_0644 }),
    optional: f(4, s.bool(), "Whether the config map may be missing."),
  }),
  t("KeyToPath", "One key projected to one path.", {
    key: f(1, s.string(), "The key.", { required: true }),
    path: f(2, s.string(), "Relative path of the file; no '..'.", { required: true }),
    mode: f(3, s.int32(), "Mode bits of this file."),
  }),
  t("NFSVolumeSource", "An NFS mount.", {
    server: f(1, s.string(), "NFS server host name or IP.", { required: true }),
    path: f(2, s.string(), "Exported path.", { required: true }),
    readOnly: f(3, s.bool(), "Mount read-only."),
  }),
  t("PersistentVolumeClaimVolumeSource", "A reference to a claim in the pod's namespace.", {
    claimName: f(1, s.string(), "Name of the claim.", { required: true }),
    readOnly: f(2, s.bool(), "Mount read-only."),
  }),
  t("DownwardAPIVolumeSource", "Pod information as files.", {
    items: f(1, atomic(core("DownwardAPIVolumeFile")), "The files."),
    defaultMode: f(2, s.int32(), "Mode bits of the files; 0644 when unset.", { default: MODE_0644 }),
  }),
  t("DownwardAPIVolumeFile", "One downward API file.", {
    path: f(1, s.string(), "Relative path of the file.", { required: true }),
    fieldRef: f(2, core("ObjectFieldSelector"), "A pod field: labels, annotations, name, namespace or uid."),
    resourceFieldRef: f(3, core("ResourceFieldSelector"), "A container resource limit or request."),
    mode: f(4, s.int32(), "Mode bits of this file."),
  }),
  t("ProjectedVolumeSource", "Several sources in one directory.", {
    sources: f(1, atomic(core("VolumeProjection")), "The projected sources."),
    defaultMode: f(2, s.int32(), "Mode bits of the files; 0644 when unset.", { default: MODE_0644 }),
  }),
  t("VolumeProjection", "One projected source; exactly one field is set.", {
    secret: f(1, core("SecretProjection"), "Keys of a secret."),
    downwardAPI: f(2, core("DownwardAPIProjection"), "Pod information."),
    configMap: f(3, core("ConfigMapProjection"), "Keys of a config map."),
    serviceAccountToken: f(4, core("ServiceAccountTokenProjection"), "A service account token."),
    clusterTrustBundle: f(5, core("ClusterTrustBundleProjection"), "Certificates of ClusterTrustBundle objects."),
  }),
  t("SecretProjection", "A secret in a projected volume.", {
    ...localName("secret"),
    items: f(2, atomic(core("KeyToPath")), "Which keys go to which paths."),
    optional: f(4, s.bool(), "Whether the secret may be missing."),
  }),
  t("ConfigMapProjection", "A config map in a projected volume.", {
    ...localName("config map"),
    items: f(2, atomic(core("KeyToPath")), "Which keys go to which paths."),
    optional: f(4, s.bool(), "Whether the config map may be missing."),
  }),
  t("DownwardAPIProjection", "Pod information in a projected volume.", {
    items: f(1, atomic(core("DownwardAPIVolumeFile")), "The files."),
  }),
  t("ServiceAccountTokenProjection", "A service account token in a projected volume.", {
    audience: f(1, s.string(), "Intended audience; the API server's when empty."),
    expirationSeconds: f(2, s.int64(), "Requested validity; at least 600.", { default: 3600 }),
    path: f(3, s.string(), "Relative path of the token file.", { required: true }),
  }),
  t("ClusterTrustBundleProjection", "ClusterTrustBundle certificates in a projected volume.", {
    name: f(1, s.string(), "A bundle by name."),
    signerName: f(2, s.string(), "All bundles of this signer."),
    labelSelector: f(3, meta("LabelSelector"), "Bundles of the signer matching this selector."),
    optional: f(5, s.bool(), "Whether no bundle may match."),
    path: f(4, s.string(), "Relative path of the file.", { required: true }),
  }),
  t("CSIVolumeSource", "An inline volume from a CSI driver.", {
    driver: f(1, s.string(), "Name of the CSI driver.", { required: true }),
    readOnly: f(2, s.bool(), "Mount read-only."),
    fsType: f(3, s.string(), "Filesystem type."),
    volumeAttributes: f(4, s.map(s.string()), "Driver-specific attributes."),
    nodePublishSecretRef: f(5, core("LocalObjectReference"), "Secret passed to NodePublishVolume."),
  }),
  t("EphemeralVolumeSource", "A claim made for the pod from a template.", {
    volumeClaimTemplate: f(1, core("PersistentVolumeClaimTemplate"), "The claim to create, named <pod>-<volume>."),
  }),
  t("PersistentVolumeClaimTemplate", "Template of a claim.", {
    metadata: f(1, meta("ObjectMeta"), "Labels and annotations copied into the claim."),
    spec: f(2, core("PersistentVolumeClaimSpec"), "The claim's spec.", { required: true }),
  }),
  t("PersistentVolumeClaimSpec", "What a claim asks for.", {
    accessModes: f(1, atomic(s.string()), "ReadWriteOnce, ReadOnlyMany, ReadWriteMany, ReadWriteOncePod."),
    selector: f(4, meta("LabelSelector"), "Which volumes may bind."),
    resources: f(2, core("VolumeResourceRequirements"), "Minimum size and other resources."),
    volumeName: f(3, s.string(), "The volume bound to this claim."),
    storageClassName: f(5, s.string(), "Storage class required."),
    volumeMode: f(6, enumOf("Block", "Filesystem"), "Filesystem (default) or Block."),
    dataSource: f(7, core("TypedLocalObjectReference"), "A snapshot or claim to copy from."),
    dataSourceRef: f(8, core("TypedObjectReference"), "An object to populate the volume from."),
    volumeAttributesClassName: f(9, s.string(), "VolumeAttributesClass to apply."),
  }),
  t("VolumeResourceRequirements", "Storage resource requirements.", {
    limits: f(1, quantities(), "Maximum resources."),
    requests: f(2, quantities(), "Minimum resources."),
  }),
  t("TypedLocalObjectReference", "A typed reference in the same namespace.", {
    apiGroup: f(1, s.string(), "API group; core when empty."),
    kind: f(2, s.string(), "Kind.", { required: true }),
    name: f(3, s.string(), "Name.", { required: true }),
  }),
  t("TypedObjectReference", "A typed reference, possibly in another namespace.", {
    apiGroup: f(1, s.string(), "API group; core when empty."),
    kind: f(2, s.string(), "Kind.", { required: true }),
    name: f(3, s.string(), "Name.", { required: true }),
    namespace: f(4, s.string(), "Namespace, when not the claim's."),
  }),
  t("ImageVolumeSource", "An OCI object mounted as a volume.", {
    reference: f(1, s.string(), "Image or artifact reference."),
    pullPolicy: f(2, enumOf("Always", "Never", "IfNotPresent"), "Always, Never or IfNotPresent."),
  }),
  t("LocalObjectReference", "A name in the same namespace.", {
    name: f(1, s.string(), "Name of the referent."),
  }),
];

// ---------------------------------------------------------------- Pod: scheduling

const schedulingTypes = [
  t("Affinity", "Scheduling affinity rules.", {
    nodeAffinity: f(1, core("NodeAffinity"), "Which nodes the pod may or prefers to run on."),
    podAffinity: f(2, core("PodAffinity"), "Pods to run near."),
    podAntiAffinity: f(3, core("PodAntiAffinity"), "Pods to run away from."),
  }),
  t("NodeAffinity", "Node affinity rules.", {
    requiredDuringSchedulingIgnoredDuringExecution: f(1, core("NodeSelector"), "Hard requirement at scheduling time."),
    preferredDuringSchedulingIgnoredDuringExecution: f(2, atomic(core("PreferredSchedulingTerm")), "Weighted preferences."),
  }),
  t("NodeSelector", "A union (OR) of node selector terms.", {
    nodeSelectorTerms: f(1, atomic(core("NodeSelectorTerm")), "The terms, ORed.", { required: true }),
  }),
  t("NodeSelectorTerm", "Requirements ANDed; null or empty matches no node.", {
    matchExpressions: f(1, atomic(core("NodeSelectorRequirement")), "Requirements on node labels."),
    matchFields: f(2, atomic(core("NodeSelectorRequirement")), "Requirements on node fields."),
  }),
  t("NodeSelectorRequirement", "One requirement on a node label or field.", {
    key: f(1, s.string(), "Label key or field name.", { required: true }),
    operator: f(2, enumOf("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"), "In, NotIn, Exists, DoesNotExist, Gt or Lt.", { required: true }),
    values: f(3, atomic(s.string()), "Values; one integer for Gt and Lt."),
  }),
  t("PreferredSchedulingTerm", "A weighted node selector term.", {
    weight: f(1, s.int32(), "Weight, 1-100.", { required: true }),
    preference: f(2, core("NodeSelectorTerm"), "The term.", { required: true }),
  }),
  t("PodAffinity", "Pod affinity rules.", {
    requiredDuringSchedulingIgnoredDuringExecution: f(1, atomic(core("PodAffinityTerm")), "Hard requirements, all must hold."),
    preferredDuringSchedulingIgnoredDuringExecution: f(2, atomic(core("WeightedPodAffinityTerm")), "Weighted preferences."),
  }),
  t("PodAntiAffinity", "Pod anti-affinity rules.", {
    requiredDuringSchedulingIgnoredDuringExecution: f(1, atomic(core("PodAffinityTerm")), "Hard requirements, all must hold."),
    preferredDuringSchedulingIgnoredDuringExecution: f(2, atomic(core("WeightedPodAffinityTerm")), "Weighted preferences."),
  }),
  t("PodAffinityTerm", "Pods (by labels and namespaces) and the topology to compare by.", {
    labelSelector: f(1, meta("LabelSelector"), "Which pods; null matches none."),
    namespaces: f(2, atomic(s.string()), "Namespaces to look in; the pod's own when empty and no selector."),
    topologyKey: f(3, s.string(), "Node label whose equal values count as co-located.", { required: true }),
    namespaceSelector: f(4, meta("LabelSelector"), "Namespaces by label; {} matches all."),
    matchLabelKeys: f(5, atomic(s.string()), "Incoming pod label keys ANDed into the selector as `key in (value)`."),
    mismatchLabelKeys: f(6, atomic(s.string()), "Incoming pod label keys ANDed as `key notin (value)`."),
  }),
  t("WeightedPodAffinityTerm", "A weighted pod affinity term.", {
    weight: f(1, s.int32(), "Weight, 1-100.", { required: true }),
    podAffinityTerm: f(2, core("PodAffinityTerm"), "The term.", { required: true }),
  }),
  t("Toleration", "Lets the pod schedule onto (or stay on) nodes with a matching taint.", {
    key: f(1, s.string(), "Taint key; empty with Exists matches every taint."),
    operator: f(2, enumOf("Exists", "Equal"), "Exists or Equal (default)."),
    value: f(3, s.string(), "Taint value for Equal."),
    effect: f(4, enumOf("NoSchedule", "PreferNoSchedule", "NoExecute"), "Effect to match; all when empty."),
    tolerationSeconds: f(5, s.int64(), "For NoExecute: how long the pod stays after the taint appears; forever when unset."),
  }),
  t("TopologySpreadConstraint", "How evenly matching pods spread over a topology.", {
    maxSkew: f(1, s.int32(), "Largest allowed difference between domains.", { required: true }),
    topologyKey: f(2, s.string(), "Node label that defines the domains.", { required: true }),
    whenUnsatisfiable: f(3, enumOf("DoNotSchedule", "ScheduleAnyway"), "DoNotSchedule or ScheduleAnyway.", { required: true }),
    labelSelector: f(4, meta("LabelSelector"), "Which pods count."),
    minDomains: f(5, s.int32(), "Minimum eligible domains."),
    nodeAffinityPolicy: f(6, enumOf("Honor", "Ignore"), "Whether node affinity limits the domains (Honor by default)."),
    nodeTaintsPolicy: f(7, enumOf("Honor", "Ignore"), "Whether taints limit the domains (Ignore by default)."),
    matchLabelKeys: f(8, atomic(s.string()), "Incoming pod label keys ANDed into the selector."),
  }),
];

// ---------------------------------------------------------------- Pod: spec and status

const podTypes = [
  kind("Pod", "A group of containers scheduled together onto one node."),
  t("PodSpec", "The desired state of a pod.", {
    volumes: f(1, mapList(core("Volume"), "name"), "Volumes the containers may mount.", { patchStrategy: "merge,retainKeys", patchMergeKey: "name" }),
    initContainers: f(20, mapList(core("Container"), "name"), "Containers run in order before the others start.", mergeBy("name")),
    containers: f(2, mapList(core("Container"), "name"), "The pod's containers; at least one.", { required: true, ...mergeBy("name") }),
    ephemeralContainers: f(34, mapList(core("EphemeralContainer"), "name"), "Debugging containers, added through the ephemeralcontainers subresource.", mergeBy("name")),
    restartPolicy: f(3, enumOf("Always", "OnFailure", "Never"), "Always, OnFailure or Never.", { default: "Always" }),
    terminationGracePeriodSeconds: f(4, s.int64(), "Seconds between the stop signal and the kill.", { default: 30 }),
    activeDeadlineSeconds: f(5, s.int64(), "Seconds the pod may run before it is failed."),
    dnsPolicy: f(6, enumOf("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"), "How DNS is configured.", { default: "ClusterFirst" }),
    nodeSelector: f(7, s.map(s.string()), "Node labels the node must have."),
    serviceAccountName: f(8, s.string(), "Service account the pod runs as."),
    serviceAccount: f(9, s.string(), "Deprecated alias of serviceAccountName."),
    automountServiceAccountToken: f(21, s.bool(), "Whether a token is mounted automatically."),
    nodeName: f(10, s.string(), "The node the pod is bound to; set by the scheduler."),
    hostNetwork: f(11, s.bool(), "Use the host's network namespace."),
    hostPID: f(12, s.bool(), "Use the host's PID namespace."),
    hostIPC: f(13, s.bool(), "Use the host's IPC namespace."),
    shareProcessNamespace: f(27, s.bool(), "One PID namespace for all containers."),
    securityContext: f(14, core("PodSecurityContext"), "Pod-level security settings.", { default: {} }),
    imagePullSecrets: f(15, mapList(core("LocalObjectReference"), "name"), "Secrets for pulling images.", mergeBy("name")),
    hostname: f(16, s.string(), "Host name of the pod; a system value when empty."),
    subdomain: f(17, s.string(), "Subdomain, giving <hostname>.<subdomain>.<namespace>.svc.<cluster domain>."),
    affinity: f(18, core("Affinity"), "Scheduling constraints."),
    schedulerName: f(19, s.string(), "Scheduler that places the pod.", { default: "default-scheduler" }),
    tolerations: f(22, atomic(core("Toleration")), "Taints the pod tolerates."),
    hostAliases: f(23, mapList(core("HostAlias"), "ip"), "Extra /etc/hosts entries.", mergeBy("ip")),
    priorityClassName: f(24, s.string(), "Name of the pod's priority class."),
    priority: f(25, s.int32(), "Priority value, filled from priorityClassName."),
    dnsConfig: f(26, core("PodDNSConfig"), "Extra DNS settings merged into the policy's."),
    readinessGates: f(28, atomic(core("PodReadinessGate")), "Extra conditions that must be True for the pod to be ready."),
    runtimeClassName: f(29, s.string(), "RuntimeClass to run the pod with."),
    enableServiceLinks: f(30, s.bool(), "Inject service environment variables.", { default: true }),
    preemptionPolicy: f(31, enumOf("Never", "PreemptLowerPriority"), "Whether the pod may preempt lower-priority pods."),
    overhead: f(32, quantities(), "Resources of the pod sandbox, from its RuntimeClass."),
    topologySpreadConstraints: f(33, mapList(core("TopologySpreadConstraint"), "topologyKey", "whenUnsatisfiable"), "How to spread pods.", mergeBy("topologyKey")),
    setHostnameAsFQDN: f(35, s.bool(), "Use the FQDN as host name."),
    os: f(36, core("PodOS"), "Operating system of the containers."),
    hostUsers: f(37, s.bool(), "Use the host's user namespace (default true)."),
    schedulingGates: f(38, mapList(core("PodSchedulingGate"), "name"), "Gates that block scheduling until removed.", mergeBy("name")),
    resourceClaims: f(39, mapList(core("PodResourceClaim"), "name"), "Dynamic resource claims of the pod.", {
      patchStrategy: "merge,retainKeys",
      patchMergeKey: "name",
    }),
    resources: f(40, core("ResourceRequirements"), "Pod-level requests and limits (alpha)."),
  }),
  t("PodSecurityContext", "Pod-level security settings.", {
    seLinuxOptions: f(1, core("SELinuxOptions"), "SELinux context of all containers."),
    windowsOptions: f(8, core("WindowsSecurityContextOptions"), "Windows-specific options."),
    runAsUser: f(2, s.int64(), "UID of every container's entrypoint."),
    runAsGroup: f(6, s.int64(), "GID of every container's entrypoint."),
    runAsNonRoot: f(3, s.bool(), "Refuse to start containers as UID 0."),
    supplementalGroups: f(4, atomic(s.int64()), "Extra groups of every container's first process."),
    supplementalGroupsPolicy: f(12, enumOf("Merge", "Strict"), "Merge or Strict."),
    fsGroup: f(5, s.int64(), "Group that owns supporting volumes."),
    sysctls: f(7, atomic(core("Sysctl")), "Namespaced sysctls."),
    fsGroupChangePolicy: f(9, enumOf("OnRootMismatch", "Always"), "When volume ownership is changed."),
    seccompProfile: f(10, core("SeccompProfile"), "Seccomp profile of all containers."),
    appArmorProfile: f(11, core("AppArmorProfile"), "AppArmor profile of all containers."),
    seLinuxChangePolicy: f(13, s.string(), "MountOption or Recursive relabeling of volumes."),
  }),
  t("Sysctl", "One kernel parameter.", {
    name: f(1, s.string(), "Parameter name.", { required: true }),
    value: f(2, s.string(), "Parameter value.", { required: true }),
  }),
  t("PodDNSConfig", "DNS settings added to the DNS policy's.", {
    nameservers: f(1, atomic(s.string()), "Name server IPs."),
    searches: f(2, atomic(s.string()), "Search domains."),
    options: f(3, atomic(core("PodDNSConfigOption")), "Resolver options."),
  }),
  t("PodDNSConfigOption", "One resolver option.", {
    name: f(1, s.string(), "Option name."),
    value: f(2, s.string(), "Option value."),
  }),
  t("HostAlias", "An /etc/hosts entry.", {
    ip: f(1, s.string(), "IP address.", { required: true }),
    hostnames: f(2, atomic(s.string()), "Host names for the IP."),
  }),
  t("PodReadinessGate", "A condition that gates readiness.", {
    conditionType: f(1, s.string(), "Type of a pod condition.", { required: true }),
  }),
  t("PodSchedulingGate", "A gate that blocks scheduling.", {
    name: f(1, s.string(), "Gate name, unique within the pod.", { required: true }),
  }),
  t("PodResourceClaim", "A resource claim of the pod.", {
    name: f(1, s.string(), "Name within the pod, a DNS label.", { required: true }),
    resourceClaimName: f(3, s.string(), "An existing ResourceClaim."),
    resourceClaimTemplateName: f(4, s.string(), "A ResourceClaimTemplate to create a claim from."),
  }),
  t("PodOS", "The pod's operating system.", {
    name: f(1, s.string(), "linux or windows.", { required: true }),
  }),
  t("PodStatus", "The observed state of a pod.", {
    observedGeneration: f(17, s.int64(), "The metadata.generation this status reflects."),
    phase: f(1, enumOf("Pending", "Running", "Succeeded", "Failed", "Unknown"), "Pending, Running, Succeeded, Failed or Unknown."),
    conditions: f(2, mapList(core("PodCondition"), "type"), "PodScheduled, Initialized, ContainersReady, Ready, ...", mergeBy("type")),
    message: f(3, s.string(), "Why the pod is in this state."),
    reason: f(4, s.string(), "CamelCase reason, e.g. Evicted."),
    nominatedNodeName: f(11, s.string(), "Node the pod may run on after preemption."),
    hostIP: f(5, s.string(), "Primary IP of the node."),
    hostIPs: f(16, atomic(core("HostIP")), "IPs of the node; the first is hostIP.", mergeBy("ip")),
    podIP: f(6, s.string(), "Primary IP of the pod."),
    podIPs: f(12, mapList(core("PodIP"), "ip"), "IPs of the pod, at most one per family; the first is podIP.", mergeBy("ip")),
    startTime: f(7, s.time(), "When the node agent acknowledged the pod."),
    initContainerStatuses: f(10, atomic(core("ContainerStatus")), "Statuses of init containers."),
    containerStatuses: f(8, atomic(core("ContainerStatus")), "Statuses of containers."),
    qosClass: f(9, enumOf("Guaranteed", "Burstable", "BestEffort"), "Quality of service class, from the requests and limits."),
    ephemeralContainerStatuses: f(13, atomic(core("ContainerStatus")), "Statuses of ephemeral containers."),
    resize: f(14, s.string(), "Deprecated status of a pending resize."),
    resourceClaimStatuses: f(15, mapList(core("PodResourceClaimStatus"), "name"), "Names of claims generated for the pod.", {
      patchStrategy: "merge,retainKeys",
      patchMergeKey: "name",
    }),
  }),
  t("PodCondition", "One observed condition of a pod.", {
    ...probedConditionFields,
    observedGeneration: f(7, s.int64(), "The metadata.generation this condition reflects."),
  }),
  t("PodIP", "One IP of a pod.", { ip: f(1, s.string(), "The IP address.", { required: true }) }),
  t("HostIP", "One IP of a node.", { ip: f(1, s.string(), "The IP address.", { required: true }) }),
  t("PodResourceClaimStatus", "The claim generated for one of the pod's resource claims.", {
    name: f(1, s.string(), "Name of the entry in spec.resourceClaims.", { required: true }),
    resourceClaimName: f(2, s.string(), "Name of the generated ResourceClaim."),
  }),
  t("ContainerStatus", "The observed state of one container.", {
    name: f(1, s.string(), "Container name.", { required: true }),
    state: f(2, core("ContainerState"), "Current state."),
    lastState: f(3, core("ContainerState"), "Previous termination, kept for debugging crashes."),
    ready: f(4, s.bool(), "Whether the readiness probe passes.", { required: true }),
    restartCount: f(5, s.int32(), "Restarts so far.", { required: true }),
    image: f(6, s.string(), "Image the container runs.", { required: true }),
    imageID: f(7, s.string(), "ID of that image.", { required: true }),
    containerID: f(8, s.string(), "<runtime>://<id>."),
    started: f(9, s.bool(), "Whether the startup probe (and postStart hook) completed."),
    allocatedResources: f(10, quantities(), "Resources allocated by the node."),
    resources: f(11, core("ResourceRequirements"), "Resources actually applied."),
    volumeMounts: f(12, mapList(core("VolumeMountStatus"), "mountPath"), "Status of volume mounts.", mergeBy("mountPath")),
    user: f(13, core("ContainerUser"), "Identity of the first process."),
    allocatedResourcesStatus: f(14, mapList(core("ResourceStatus"), "name"), "Health of allocated resources.", mergeBy("name")),
    stopSignal: f(15, s.string(), "The effective stop signal."),
  }),
  t("ContainerState", "One of waiting, running or terminated; waiting when none is set.", {
    waiting: f(1, core("ContainerStateWaiting"), "Not yet running."),
    running: f(2, core("ContainerStateRunning"), "Running."),
    terminated: f(3, core("ContainerStateTerminated"), "Exited."),
  }),
  t("ContainerStateWaiting", "A waiting container.", {
    reason: f(1, s.string(), "Why it is not running (ContainerCreating, CrashLoopBackOff, ...)."),
    message: f(2, s.string(), "Details."),
  }),
  t("ContainerStateRunning", "A running container.", {
    startedAt: f(1, s.time(), "When it last (re)started."),
  }),
  t("ContainerStateTerminated", "An exited container.", {
    exitCode: f(1, s.int32(), "Exit status.", { required: true }),
    signal: f(2, s.int32(), "Signal that ended it."),
    reason: f(3, s.string(), "Why it exited (Completed, Error, OOMKilled, ...)."),
    message: f(4, s.string(), "Details."),
    startedAt: f(5, s.time(), "When that run started."),
    finishedAt: f(6, s.time(), "When it exited."),
    containerID: f(7, s.string(), "<runtime>://<id>."),
  }),
  t("VolumeMountStatus", "The status of one volume mount.", {
    name: f(1, s.string(), "Name of the mount.", { required: true }),
    mountPath: f(2, s.string(), "Path of the mount.", { required: true }),
    readOnly: f(3, s.bool(), "Mounted read-only."),
    recursiveReadOnly: f(4, s.string(), "Disabled or Enabled."),
  }),
  t("ContainerUser", "Identity of a container's first process.", {
    linux: f(1, core("LinuxContainerUser"), "Linux identity."),
  }),
  t("LinuxContainerUser", "Linux user identity.", {
    uid: f(1, s.int64(), "Primary UID.", { required: true }),
    gid: f(2, s.int64(), "Primary GID.", { required: true }),
    supplementalGroups: f(3, atomic(s.int64()), "Supplemental groups."),
  }),
  t("ResourceStatus", "Health of one allocated resource.", {
    name: f(1, s.string(), "Resource name, or claim:<claim>/<request>.", { required: true }),
    resources: f(2, mapList(core("ResourceHealth"), "resourceID"), "Health of each device."),
  }),
  t("ResourceHealth", "Health of one device.", {
    resourceID: f(1, s.string(), "Device ID.", { required: true }),
    health: f(2, enumOf("Healthy", "Unhealthy", "Unknown"), "Healthy, Unhealthy or Unknown."),
  }),
  t("PodTemplateSpec", "Metadata and spec of pods made from a template (workloads embed it).", {
    metadata: f(1, meta("ObjectMeta"), "Metadata of the pods."),
    spec: f(2, core("PodSpec"), "Spec of the pods."),
  }),
  t("Binding", "Binds a pod to a node (the pods/binding subresource).", {
    metadata: f(1, meta("ObjectMeta"), "Standard object metadata; the name is the pod's."),
    target: f(2, core("ObjectReference"), "The node to bind to.", { required: true }),
  }),
  t("ObjectReference", "A reference to any object.", {
    kind: f(1, s.string(), "Kind of the referent."),
    namespace: f(2, s.string(), "Namespace of the referent."),
    name: f(3, s.string(), "Name of the referent."),
    uid: f(4, s.string(), "UID of the referent."),
    apiVersion: f(5, s.string(), "API version of the referent."),
    resourceVersion: f(6, s.string(), "A specific version of the referent."),
    fieldPath: f(7, s.string(), "A part of the referent, e.g. spec.containers{name}."),
  }),
];

// ---------------------------------------------------------------- Node

const nodeTypes = [
  kind("Node", "A machine that runs pods; its agent reports its status (seed 001, \"Node status\")."),
  t("NodeSpec", "The desired state of a node.", {
    podCIDR: f(1, s.string(), "Pod IP range of the node."),
    podCIDRs: f(7, s.array(s.string(), { listType: "set" }), "Pod IP ranges, at most one per family; the first equals podCIDR.", { patchStrategy: "merge" }),
    providerID: f(3, s.string(), "<provider>://<id> from the cloud provider."),
    unschedulable: f(4, s.bool(), "Cordoned: no new pods are scheduled here."),
    taints: f(5, atomic(core("Taint")), "Taints that repel pods without a matching toleration."),
    externalID: f(2, s.string(), "Deprecated."),
  }),
  t("Taint", "A taint: pods without a matching toleration are affected by its effect.", {
    key: f(1, s.string(), "Taint key.", { required: true }),
    value: f(2, s.string(), "Taint value."),
    effect: f(3, enumOf("NoSchedule", "PreferNoSchedule", "NoExecute"), "NoSchedule, PreferNoSchedule or NoExecute.", { required: true }),
    timeAdded: f(4, s.time(), "When a NoExecute taint was added."),
  }),
  t("NodeStatus", "The observed state of a node, reported by its agent.", {
    capacity: f(1, quantities(), "Total resources: cpu, memory, pods, ..."),
    allocatable: f(2, quantities(), "Resources available to pods; capacity when unset."),
    phase: f(3, s.string(), "Deprecated, never set."),
    conditions: f(4, mapList(core("NodeCondition"), "type"), "Ready, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable.", mergeBy("type")),
    addresses: f(5, mapList(core("NodeAddress"), "type"), "Hostname, InternalIP, ExternalIP.", mergeBy("type")),
    daemonEndpoints: f(6, core("NodeDaemonEndpoints"), "Ports of daemons on the node."),
    nodeInfo: f(7, core("NodeSystemInfo"), "Versions and identifiers of the node."),
    images: f(8, atomic(core("ContainerImage")), "Images present on the node."),
    volumesInUse: f(9, atomic(s.string()), "Attachable volumes mounted on the node."),
    volumesAttached: f(10, atomic(core("AttachedVolume")), "Volumes attached to the node."),
    runtimeHandlers: f(12, atomic(core("NodeRuntimeHandler")), "Runtime handlers and their features."),
    features: f(13, core("NodeFeatures"), "Features of the container runtime."),
    declaredFeatures: f(14, atomic(s.string()), "Gated features enabled on the agent (seed 001)."),
  }),
  t("NodeCondition", "One observed condition of a node.", {
    type: f(1, s.string(), "Condition type.", { required: true }),
    status: f(2, s.string(), "True, False or Unknown.", { required: true }),
    lastHeartbeatTime: f(3, s.time(), "When the agent last reported it."),
    lastTransitionTime: f(4, s.time(), "When status last changed."),
    reason: f(5, s.string(), "Brief reason for the last transition."),
    message: f(6, s.string(), "Human-readable details."),
  }),
  t("NodeAddress", "One address of a node.", {
    type: f(1, enumOf("Hostname", "InternalIP", "InternalDNS", "ExternalIP", "ExternalDNS"), "Hostname, InternalIP, ExternalIP, ...", { required: true }),
    address: f(2, s.string(), "The address.", { required: true }),
  }),
  t("NodeDaemonEndpoints", "Ports of daemons on a node.", {
    kubeletEndpoint: f(1, core("DaemonEndpoint"), "Port of the node agent."),
  }),
  t("DaemonEndpoint", "One daemon port.", {
    Port: f(1, s.int32(), "Port number.", { required: true }),
  }),
  t("NodeSystemInfo", "Identifiers and versions of a node.", {
    machineID: f(1, s.string(), "machine-id of the node.", { required: true }),
    systemUUID: f(2, s.string(), "System UUID.", { required: true }),
    bootID: f(3, s.string(), "Boot ID.", { required: true }),
    kernelVersion: f(4, s.string(), "`uname -r`.", { required: true }),
    osImage: f(5, s.string(), "PRETTY_NAME from /etc/os-release.", { required: true }),
    containerRuntimeVersion: f(6, s.string(), "<runtime>://<version>.", { required: true }),
    kubeletVersion: f(7, s.string(), "Version of the node agent.", { required: true }),
    kubeProxyVersion: f(8, s.string(), "Deprecated: version of the proxy.", { required: true }),
    operatingSystem: f(9, s.string(), "linux or windows.", { required: true }),
    architecture: f(10, s.string(), "amd64, arm64, ...", { required: true }),
    swap: f(11, core("NodeSwapStatus"), "Swap memory of the node."),
  }),
  t("NodeSwapStatus", "Swap memory of a node.", {
    capacity: f(1, s.int64(), "Total swap in bytes."),
  }),
  t("ContainerImage", "An image on a node.", {
    names: f(1, atomic(s.string()), "Names of the image."),
    sizeBytes: f(2, s.int64(), "Size in bytes."),
  }),
  t("AttachedVolume", "A volume attached to a node.", {
    name: f(1, s.string(), "Volume name.", { required: true }),
    devicePath: f(2, s.string(), "Where the device appears.", { required: true }),
  }),
  t("NodeRuntimeHandler", "A runtime handler and its features.", {
    name: f(1, s.string(), "Handler name; empty for the default."),
    features: f(2, core("NodeRuntimeHandlerFeatures"), "Supported features."),
  }),
  t("NodeRuntimeHandlerFeatures", "Features of a runtime handler.", {
    recursiveReadOnlyMounts: f(1, s.bool(), "Supports recursive read-only mounts."),
    userNamespaces: f(2, s.bool(), "Supports user namespaces."),
  }),
  t("NodeFeatures", "Features of the container runtime.", {
    supplementalGroupsPolicy: f(1, s.bool(), "Supports supplementalGroupsPolicy and ContainerUser."),
  }),
];

// ---------------------------------------------------------------- Service and Endpoints

const serviceTypes = [
  kind("Service", "A stable virtual address and port for a set of pods."),
  t("ServiceSpec", "The desired state of a service.", {
    ports: f(1, mapList(core("ServicePort"), "port", "protocol"), "Ports of the service.", mergeBy("port")),
    selector: f(2, s.map(s.string()), "Pods with these labels back the service; endpoints are managed elsewhere when empty."),
    clusterIP: f(3, s.string(), "Virtual IP, allocated when empty; None for a headless service."),
    clusterIPs: f(18, atomic(s.string()), "Virtual IPs, one per family; the first equals clusterIP."),
    type: f(4, enumOf("ClusterIP", "NodePort", "LoadBalancer", "ExternalName"), "ClusterIP, NodePort, LoadBalancer or ExternalName.", { default: "ClusterIP" }),
    externalIPs: f(5, atomic(s.string()), "Extra IPs nodes accept traffic for."),
    sessionAffinity: f(7, enumOf("ClientIP", "None"), "ClientIP or None.", { default: "None" }),
    loadBalancerIP: f(8, s.string(), "Deprecated: requested load balancer IP."),
    loadBalancerSourceRanges: f(9, atomic(s.string()), "Client CIDRs a load balancer admits."),
    externalName: f(10, s.string(), "DNS name the service aliases (type ExternalName)."),
    externalTrafficPolicy: f(11, enumOf("Cluster", "Local"), "Cluster or Local routing of external traffic."),
    healthCheckNodePort: f(12, s.int32(), "Health check port for Local external traffic."),
    publishNotReadyAddresses: f(13, s.bool(), "Publish endpoints of pods that are not ready."),
    sessionAffinityConfig: f(14, core("SessionAffinityConfig"), "Session affinity settings."),
    ipFamilies: f(19, atomic(enumOf("IPv4", "IPv6")), "IP families of the service."),
    ipFamilyPolicy: f(17, enumOf("SingleStack", "PreferDualStack", "RequireDualStack"), "SingleStack, PreferDualStack or RequireDualStack."),
    allocateLoadBalancerNodePorts: f(20, s.bool(), "Allocate node ports for LoadBalancer services (default true)."),
    loadBalancerClass: f(21, s.string(), "Load balancer implementation."),
    internalTrafficPolicy: f(22, enumOf("Cluster", "Local"), "Cluster or Local routing of cluster IP traffic."),
    trafficDistribution: f(23, s.string(), "Routing preference, e.g. PreferClose."),
  }),
  t("ServicePort", "One port of a service.", {
    name: f(1, s.string(), "DNS label; required when there are several ports."),
    protocol: f(2, enumOf("TCP", "UDP", "SCTP"), "TCP, UDP or SCTP.", { default: "TCP" }),
    appProtocol: f(6, s.string(), "Application protocol hint."),
    port: f(3, s.int32(), "Port of the service.", { required: true }),
    targetPort: f(4, s.intOrString(), "Port number or name on the pods; defaults to port."),
    nodePort: f(5, s.int32(), "Port on every node (NodePort and LoadBalancer)."),
  }),
  t("SessionAffinityConfig", "Session affinity settings.", {
    clientIP: f(1, core("ClientIPConfig"), "ClientIP affinity settings."),
  }),
  t("ClientIPConfig", "ClientIP session affinity settings.", {
    timeoutSeconds: f(1, s.int32(), "Sticky time, 1-86400; 10800 by default."),
  }),
  t("ServiceStatus", "The observed state of a service.", {
    loadBalancer: f(1, core("LoadBalancerStatus"), "The load balancer, when there is one."),
    conditions: f(2, mapList(meta("Condition"), "type"), "Observations of the service.", mergeBy("type")),
  }),
  t("LoadBalancerStatus", "The state of a load balancer.", {
    ingress: f(1, atomic(core("LoadBalancerIngress")), "Ingress points."),
  }),
  t("LoadBalancerIngress", "One ingress point of a load balancer.", {
    ip: f(1, s.string(), "IP of the ingress point."),
    hostname: f(2, s.string(), "Host name of the ingress point."),
    ipMode: f(3, enumOf("VIP", "Proxy"), "VIP or Proxy."),
    ports: f(4, atomic(core("PortStatus")), "Per-port status."),
  }),
  t("PortStatus", "The status of one service port.", {
    port: f(1, s.int32(), "Port number.", { required: true }),
    protocol: f(2, enumOf("TCP", "UDP", "SCTP"), "Protocol.", { required: true }),
    error: f(3, s.string(), "Problem with the port, CamelCase or example.com/CamelCase."),
  }),
  t("Endpoints", "The addresses behind a service (deprecated in favor of EndpointSlice).", {
    metadata: f(1, meta("ObjectMeta"), "Standard object metadata."),
    subsets: f(2, atomic(core("EndpointSubset")), "Groups of addresses sharing ports."),
  }),
  t("EndpointSubset", "Addresses with a common set of ports.", {
    addresses: f(1, atomic(core("EndpointAddress")), "Ready addresses."),
    notReadyAddresses: f(2, atomic(core("EndpointAddress")), "Addresses not (yet) ready."),
    ports: f(3, atomic(core("EndpointPort")), "Ports of all the addresses."),
  }),
  t("EndpointAddress", "One endpoint address.", {
    ip: f(1, s.string(), "The IP.", { required: true }),
    hostname: f(3, s.string(), "Host name of the endpoint."),
    nodeName: f(4, s.string(), "Node hosting the endpoint."),
    targetRef: f(2, core("ObjectReference"), "The object (usually a pod) behind the endpoint."),
  }),
  t("EndpointPort", "One endpoint port.", {
    name: f(1, s.string(), "Matches the service port's name."),
    port: f(2, s.int32(), "Port number.", { required: true }),
    protocol: f(3, enumOf("TCP", "UDP", "SCTP"), "TCP, UDP or SCTP.", { default: "TCP" }),
    appProtocol: f(4, s.string(), "Application protocol hint."),
  }),
];

// ---------------------------------------------------------------- ConfigMap, Secret, ServiceAccount, Event

const configTypes = [
  t("ConfigMap", "Configuration data for pods.", {
    metadata: f(1, meta("ObjectMeta"), "Standard object metadata."),
    immutable: f(4, s.bool(), "When true, data and binaryData can no longer change."),
    data: f(2, s.map(s.string()), "UTF-8 values by key."),
    binaryData: f(3, s.map(s.string({ format: "byte" })), "Binary values by key (base64 in JSON)."),
  }),
  t("Secret", "Sensitive data for pods.", {
    metadata: f(1, meta("ObjectMeta"), "Standard object metadata."),
    immutable: f(5, s.bool(), "When true, data can no longer change."),
    data: f(2, s.map(s.string({ format: "byte" })), "Values by key (base64 in JSON)."),
    stringData: f(4, s.map(s.string()), "Write-only plain-text values, merged into data on write."),
    type: f(3, s.string(), "Secret type, e.g. Opaque or <domain>/tls.", { default: "Opaque" }),
  }),
  t("ServiceAccount", "An identity for processes in pods.", {
    metadata: f(1, meta("ObjectMeta"), "Standard object metadata."),
    secrets: f(2, mapList(core("ObjectReference"), "name"), "Secrets pods of this account may use.", mergeBy("name")),
    imagePullSecrets: f(3, atomic(core("LocalObjectReference")), "Image pull secrets added to pods of this account."),
    automountServiceAccountToken: f(4, s.bool(), "Whether pods get a token mounted by default."),
  }),
  t("Event", "A report of something that happened to an object (core v1 events).", {
    metadata: f(1, meta("ObjectMeta"), "Standard object metadata.", { required: true }),
    involvedObject: f(2, core("ObjectReference"), "The object the event is about.", { required: true }),
    reason: f(3, s.string(), "Short, machine-readable reason."),
    message: f(4, s.string(), "Human-readable description."),
    source: f(5, core("EventSource"), "The component that reported it."),
    firstTimestamp: f(6, s.time(), "When the event was first recorded."),
    lastTimestamp: f(7, s.time(), "When it was most recently recorded."),
    count: f(8, s.int32(), "How many times it occurred."),
    type: f(9, s.string(), "Normal or Warning."),
    eventTime: f(10, s.microTime(), "When it was first observed (new-style events)."),
    series: f(11, core("EventSeries"), "The series this event belongs to, for repeated events."),
    action: f(12, s.string(), "What was done or failed."),
    related: f(13, core("ObjectReference"), "A secondary object."),
    reportingComponent: f(14, s.string(), "Controller that emitted the event."),
    reportingInstance: f(15, s.string(), "Instance of that controller."),
  }),
  t("EventSource", "The origin of an event.", {
    component: f(1, s.string(), "Reporting component."),
    host: f(2, s.string(), "Node it was reported on."),
  }),
  t("EventSeries", "A series of repeated events.", {
    count: f(1, s.int32(), "Occurrences so far."),
    lastObservedTime: f(2, s.microTime(), "Time of the last occurrence."),
  }),
];

const lists = [
  listOf(CORE_V1, "Namespace", "A list of namespaces."),
  listOf(CORE_V1, "Pod", "A list of pods."),
  listOf(CORE_V1, "Node", "A list of nodes."),
  listOf(CORE_V1, "Service", "A list of services."),
  listOf(CORE_V1, "Endpoints", "A list of endpoints."),
  listOf(CORE_V1, "ConfigMap", "A list of config maps."),
  listOf(CORE_V1, "Secret", "A list of secrets."),
  listOf(CORE_V1, "ServiceAccount", "A list of service accounts."),
  listOf(CORE_V1, "Event", "A list of events."),
];

export const CORE_TYPES: readonly TypeDef[] = [
  ...namespaceTypes,
  ...containerTypes,
  ...volumeTypes,
  ...schedulingTypes,
  ...podTypes,
  ...nodeTypes,
  ...serviceTypes,
  ...configTypes,
  ...lists,
];

/** Register meta/v1 (once) and the core v1 types (once): other groups may call this for PodTemplateSpec. */
export function registerCoreSchemas(registry: SchemaRegistry): void {
  registerMetaSchemas(registry);
  if (registry.get(`${CORE_V1}.Pod`) !== undefined) return;
  registry.add(...CORE_TYPES);
}
