// TypeScript views of the core v1 kinds for strategies, tables and other
// groups' pod templates. Every field is optional: these describe request
// bodies, untrusted until validated. The schema data is in schemas.ts.

import type { ApiObject, LabelSelector, ObjectMeta } from "../../machinery/index.js";

export type IntOrString = number | string;
export type Quantities = Record<string, string | number>;

export interface ContainerPort {
  name?: string;
  hostPort?: number;
  containerPort?: number;
  protocol?: string;
  hostIP?: string;
}

export interface EnvVar {
  name?: string;
  value?: string;
  valueFrom?: Record<string, unknown> | null;
}

export interface ResourceRequirements {
  limits?: Quantities | null;
  requests?: Quantities | null;
  claims?: { name?: string; request?: string }[] | null;
}

export interface HTTPGetAction {
  path?: string;
  port?: IntOrString;
  host?: string;
  scheme?: string;
}

export interface Probe {
  exec?: { command?: string[] } | null;
  httpGet?: HTTPGetAction | null;
  tcpSocket?: { port?: IntOrString; host?: string } | null;
  grpc?: { port?: number; service?: string } | null;
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number | null;
}

/** A lifecycle hook's action: one of exec, httpGet, tcpSocket (deprecated, accepted and not run upstream) or sleep. */
export interface LifecycleHandler {
  exec?: Probe["exec"];
  httpGet?: Probe["httpGet"];
  tcpSocket?: Probe["tcpSocket"];
  sleep?: { seconds?: number } | null;
}

export interface Lifecycle {
  postStart?: LifecycleHandler | null;
  preStop?: LifecycleHandler | null;
  stopSignal?: string | null;
}

export interface VolumeMount {
  name?: string;
  mountPath?: string;
  readOnly?: boolean;
  subPath?: string;
  [field: string]: unknown;
}

export interface Container {
  name?: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  ports?: ContainerPort[] | null;
  env?: EnvVar[] | null;
  envFrom?: Record<string, unknown>[] | null;
  resources?: ResourceRequirements | null;
  restartPolicy?: string;
  volumeMounts?: VolumeMount[] | null;
  livenessProbe?: Probe | null;
  readinessProbe?: Probe | null;
  startupProbe?: Probe | null;
  lifecycle?: Lifecycle | null;
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  imagePullPolicy?: string;
  securityContext?: Record<string, unknown> | null;
  stdin?: boolean;
  tty?: boolean;
  [field: string]: unknown;
}

export interface EphemeralContainer extends Container {
  targetContainerName?: string;
}

export interface Volume {
  name?: string;
  [source: string]: unknown;
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number | null;
}

export interface Taint {
  key?: string;
  value?: string;
  effect?: string;
  timeAdded?: string | null;
}

export interface PodSpec {
  volumes?: Volume[] | null;
  initContainers?: Container[] | null;
  containers?: Container[] | null;
  ephemeralContainers?: EphemeralContainer[] | null;
  restartPolicy?: string;
  terminationGracePeriodSeconds?: number | null;
  activeDeadlineSeconds?: number | null;
  dnsPolicy?: string;
  nodeSelector?: Record<string, string> | null;
  serviceAccountName?: string;
  serviceAccount?: string;
  nodeName?: string;
  hostNetwork?: boolean;
  securityContext?: Record<string, unknown> | null;
  imagePullSecrets?: { name?: string }[] | null;
  hostname?: string;
  subdomain?: string;
  affinity?: Record<string, unknown> | null;
  schedulerName?: string;
  tolerations?: Toleration[] | null;
  hostAliases?: { ip?: string; hostnames?: string[] }[] | null;
  priorityClassName?: string;
  priority?: number | null;
  readinessGates?: { conditionType?: string }[] | null;
  enableServiceLinks?: boolean | null;
  preemptionPolicy?: string | null;
  topologySpreadConstraints?: Record<string, unknown>[] | null;
  schedulingGates?: { name?: string }[] | null;
  overhead?: Quantities | null;
  [field: string]: unknown;
}

export interface ContainerState {
  waiting?: { reason?: string; message?: string } | null;
  running?: { startedAt?: string | null } | null;
  terminated?: {
    exitCode?: number;
    signal?: number;
    reason?: string;
    message?: string;
    startedAt?: string | null;
    finishedAt?: string | null;
    containerID?: string;
  } | null;
}

export interface ContainerStatus {
  name?: string;
  state?: ContainerState | null;
  lastState?: ContainerState | null;
  ready?: boolean;
  restartCount?: number;
  image?: string;
  imageID?: string;
  containerID?: string;
  started?: boolean | null;
}

export interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string | null;
  lastProbeTime?: string | null;
  lastHeartbeatTime?: string | null;
}

export interface PodStatus {
  phase?: string;
  conditions?: Condition[] | null;
  message?: string;
  reason?: string;
  nominatedNodeName?: string;
  hostIP?: string;
  podIP?: string;
  podIPs?: { ip?: string }[] | null;
  startTime?: string | null;
  initContainerStatuses?: ContainerStatus[] | null;
  containerStatuses?: ContainerStatus[] | null;
  ephemeralContainerStatuses?: ContainerStatus[] | null;
  qosClass?: string;
  [field: string]: unknown;
}

export interface Pod extends ApiObject {
  spec?: PodSpec;
  status?: PodStatus;
}

export interface PodTemplateSpec {
  metadata?: ObjectMeta;
  spec?: PodSpec;
}

export interface Namespace extends ApiObject {
  spec?: { finalizers?: string[] | null };
  status?: { phase?: string; conditions?: Condition[] | null };
}

export interface NodeSpec {
  podCIDR?: string;
  podCIDRs?: string[] | null;
  providerID?: string;
  unschedulable?: boolean;
  taints?: Taint[] | null;
  [field: string]: unknown;
}

export interface NodeStatus {
  capacity?: Quantities | null;
  allocatable?: Quantities | null;
  conditions?: Condition[] | null;
  addresses?: { type?: string; address?: string }[] | null;
  /** Where the node agent serves (upstream's field name). */
  daemonEndpoints?: { kubeletEndpoint?: { Port?: number } } | null;
  nodeInfo?: {
    kubeletVersion?: string;
    osImage?: string;
    kernelVersion?: string;
    containerRuntimeVersion?: string;
    [field: string]: unknown;
  } | null;
  [field: string]: unknown;
}

export interface Node extends ApiObject {
  spec?: NodeSpec;
  status?: NodeStatus;
}

export interface ServicePort {
  name?: string;
  protocol?: string;
  appProtocol?: string;
  port?: number;
  targetPort?: IntOrString;
  nodePort?: number;
}

export interface ServiceSpec {
  ports?: ServicePort[] | null;
  selector?: Record<string, string> | null;
  clusterIP?: string;
  clusterIPs?: string[] | null;
  type?: string;
  externalIPs?: string[] | null;
  sessionAffinity?: string;
  sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } | null } | null;
  externalName?: string;
  externalTrafficPolicy?: string;
  internalTrafficPolicy?: string | null;
  ipFamilies?: string[] | null;
  ipFamilyPolicy?: string | null;
  allocateLoadBalancerNodePorts?: boolean | null;
  healthCheckNodePort?: number;
  loadBalancerClass?: string | null;
  [field: string]: unknown;
}

export interface Service extends ApiObject {
  spec?: ServiceSpec;
  status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] | null } | null; [field: string]: unknown };
}

export interface EndpointAddress {
  ip?: string;
  hostname?: string;
  nodeName?: string;
}

export interface EndpointSubset {
  addresses?: EndpointAddress[] | null;
  notReadyAddresses?: EndpointAddress[] | null;
  ports?: { name?: string; port?: number; protocol?: string }[] | null;
}

export interface Endpoints extends ApiObject {
  subsets?: EndpointSubset[] | null;
}

export interface ConfigMap extends ApiObject {
  immutable?: boolean | null;
  data?: Record<string, string> | null;
  binaryData?: Record<string, string> | null;
}

export interface Secret extends ApiObject {
  immutable?: boolean | null;
  data?: Record<string, string> | null;
  stringData?: Record<string, string> | null;
  type?: string;
}

export interface ObjectReference {
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiVersion?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface Event extends ApiObject {
  involvedObject?: ObjectReference;
  reason?: string;
  message?: string;
  source?: { component?: string; host?: string } | null;
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  count?: number;
  type?: string;
  eventTime?: string | null;
  series?: { count?: number; lastObservedTime?: string | null } | null;
  action?: string;
  related?: ObjectReference | null;
  reportingComponent?: string;
  reportingInstance?: string;
}

export interface ServiceAccount extends ApiObject {
  secrets?: ObjectReference[] | null;
  imagePullSecrets?: { name?: string }[] | null;
  automountServiceAccountToken?: boolean | null;
}

export type { LabelSelector };
