// The client our controllers, scheduler and node agent use to talk to the
// API server like any user: kubeconfig loading, a REST client over HTTP/2,
// informers, a rate-limited work queue and leader election on leases.

export { loadKubeconfig, parseKubeconfig, type ClientConfig, type LoadKubeconfigOptions, type ParseKubeconfigOptions } from "./kubeconfig.js";
export { apiServerCheck } from "./api-server-check.js";
export { inClusterConfig, tokenSource, NOT_IN_CLUSTER, type InClusterOptions } from "./in-cluster.js";
export {
  RestClient,
  errorFromResponse,
  type ResourceRef,
  type RestClientOptions,
  type LabelSelectorInput,
  type GetOptions,
  type ListOptions,
  type WatchOptions,
  type WriteOptions,
  type CreateOptions,
  type UpdateOptions,
  type PatchOptions,
  type PatchType,
  type DeleteOptions,
  type DeleteCollectionOptions,
  type Preconditions,
  type PropagationPolicy,
  type Watch,
  type WatchEvent,
  type WatchEventType,
  type DiscoveredResource,
  type RawRequest,
  type RawResponse,
} from "./rest.js";
export { DiscoveryCache, type DiscoveryCacheOptions } from "./discovery-cache.js";
export { Informer, dropManagedFields, keyOf, splitKey, type EventHandlers, type HandlerOptions, type InformerOptions } from "./informer.js";
export { Indexer, NAMESPACE_INDEX, namespaceIndexFunc, type IndexFunc, type Indexers, type IndexerOptions } from "./indexer.js";
export { InformerFactory, type InformerFactoryOptions, type InformerRequest } from "./informer-factory.js";
export { WorkQueue, type WorkQueueOptions, type ProcessResult } from "./workqueue.js";
export {
  LeaderElector,
  leaseResource,
  defaultIdentity,
  type LeaderElectionOptions,
  type Lease,
  type LeaseSpec,
} from "./leader-election.js";
export { componentClient, namingOfServer } from "./server-naming.js";
export { EventRecorder, type EventRecorderOptions } from "./event-recorder.js";
export { ApiError, isApiError } from "../machinery/index.js";
