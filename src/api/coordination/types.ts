// TypeScript view of a Lease; fields optional, as request bodies are untrusted.

import type { ApiObject } from "../../machinery/index.js";

export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number | null;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number | null;
  strategy?: string | null;
  preferredHolder?: string | null;
}

export interface Lease extends ApiObject {
  spec?: LeaseSpec;
}
