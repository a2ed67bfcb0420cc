// What the REST client's callers name and pass: which resource a call is about,
// the options of each verb (seed 000, "Query parameters"), watch events and the
// raw request/response of RestClient.request. Declarations only.

import type { IncomingHttpHeaders } from "node:http2";
import type { ApiObject } from "../../machinery/index.js";
import type { MetricsRegistry } from "../../component/metrics/index.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import type { TypeLookup } from "../../machinery/codec/protobuf/index.js";

/** Which resource a call is about: enough to build its paths. */
export interface ResourceRef {
  /** "" for the core group. */
  group: string;
  version: string;
  /** Plural: "namespaces". */
  resource: string;
  namespaced: boolean;
}

export type LabelSelectorInput = string | Readonly<Record<string, string>>;

export interface CallOptions {
  /** Cancels the request (a watch: ends its stream). */
  signal?: AbortSignal;
}

export interface GetOptions extends CallOptions {
  namespace?: string;
  name: string;
  subresource?: string;
  resourceVersion?: string;
  /** Ask for PartialObjectMetadata (falls back to the full object when the server lacks it). */
  metadataOnly?: boolean;
}

export interface ListOptions extends CallOptions {
  /** Omitted on a namespaced resource: every namespace. */
  namespace?: string;
  labelSelector?: LabelSelectorInput;
  fieldSelector?: LabelSelectorInput;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: "Exact" | "NotOlderThan";
  timeoutSeconds?: number;
  metadataOnly?: boolean;
}

export interface WatchOptions extends CallOptions {
  namespace?: string;
  labelSelector?: LabelSelectorInput;
  fieldSelector?: LabelSelectorInput;
  resourceVersion?: string;
  resourceVersionMatch?: "Exact" | "NotOlderThan";
  allowWatchBookmarks?: boolean;
  sendInitialEvents?: boolean;
  timeoutSeconds?: number;
  metadataOnly?: boolean;
}

export interface WriteOptions extends CallOptions {
  /** Default: the object's metadata.namespace. */
  namespace?: string;
  dryRun?: boolean;
  fieldValidation?: "Ignore" | "Warn" | "Strict";
  fieldManager?: string;
}

export interface CreateOptions extends WriteOptions {
  subresource?: string;
}

export interface UpdateOptions extends WriteOptions {
  /** Default: the object's metadata.name. */
  name?: string;
  subresource?: string;
}

export type PatchType = "merge" | "json" | "strategic" | "apply";

export interface PatchOptions extends WriteOptions {
  name: string;
  patch: unknown;
  /** Default "merge" (JSON merge patch, RFC 7386). */
  type?: PatchType;
  subresource?: string;
  /** Server-side apply: take over conflicting fields. */
  force?: boolean;
}

export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

export type PropagationPolicy = "Orphan" | "Background" | "Foreground";

export interface DeleteOptions extends CallOptions {
  namespace?: string;
  name: string;
  propagationPolicy?: PropagationPolicy;
  gracePeriodSeconds?: number;
  preconditions?: Preconditions;
  dryRun?: boolean;
}

export interface DeleteCollectionOptions extends CallOptions {
  namespace?: string;
  labelSelector?: LabelSelectorInput;
  fieldSelector?: LabelSelectorInput;
  propagationPolicy?: PropagationPolicy;
  gracePeriodSeconds?: number;
  dryRun?: boolean;
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK";

export interface WatchEvent<T extends ApiObject = ApiObject> {
  type: WatchEventType;
  object: T;
}

/** An open watch: iterate it for events; close() ends it (iteration then ends quietly). */
export interface Watch<T extends ApiObject = ApiObject> extends AsyncIterable<WatchEvent<T>> {
  close(): void;
}

/** One resource from discovery, with what may be done to it. */
export interface DiscoveredResource extends ResourceRef {
  kind: string;
  singularName: string;
  verbs: readonly string[];
  shortNames: readonly string[];
  categories: readonly string[];
  subresources: readonly { name: string; verbs: readonly string[] }[];
  /** True for the group's preferred version. */
  preferred: boolean;
}

export interface RawRequest extends CallOptions {
  method: string;
  /** Absolute path, without the query. */
  path: string;
  query?: URLSearchParams;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface RestClientOptions {
  userAgent?: string;
  /** Limit on every call but watches (default 60 s). */
  requestTimeoutMs?: number;
  /** While streams are open, PING the server this often and drop a session that does not answer (default 30 s). */
  healthCheckIntervalMs?: number;
  /** Server `Warning` headers (unknown fields and the like). */
  onWarning?: (warning: string) => void;
  /** Ask for Protobuf (then JSON) on get and list, and decode it with these schemas. */
  protobuf?: ProtobufDecoding;
  /** The component's registry: rest_client_* metrics. */
  metrics?: MetricsRegistry;
}

export interface ProtobufDecoding {
  schemas: SchemaRegistry;
  /** Schema type name of an envelope's apiVersion and kind. */
  lookupType: TypeLookup;
}
