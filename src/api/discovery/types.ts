// TypeScript view of an EndpointSlice; fields optional, as request bodies are untrusted.

import type { ApiObject } from "../../machinery/index.js";
import type { ObjectReference } from "../core/types.js";

export interface EndpointConditions {
  ready?: boolean | null;
  serving?: boolean | null;
  terminating?: boolean | null;
}

export interface Endpoint {
  addresses?: string[];
  conditions?: EndpointConditions;
  hostname?: string | null;
  targetRef?: ObjectReference | null;
  deprecatedTopology?: Record<string, string> | null;
  nodeName?: string | null;
  zone?: string | null;
  hints?: { forZones?: { name?: string }[] | null; forNodes?: { name?: string }[] | null } | null;
}

export interface EndpointPort {
  name?: string | null;
  protocol?: string | null;
  port?: number | null;
  appProtocol?: string | null;
}

export interface EndpointSlice extends ApiObject {
  addressType?: string;
  endpoints?: Endpoint[] | null;
  ports?: EndpointPort[] | null;
}
