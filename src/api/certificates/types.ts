// TypeScript view of a CertificateSigningRequest; fields optional, as request bodies are untrusted.

import type { ApiObject } from "../../machinery/index.js";

export interface CertificateSigningRequestSpec {
  /** Base64 (JSON) of a PEM "CERTIFICATE REQUEST" block. */
  request?: string | null;
  signerName?: string | null;
  expirationSeconds?: number | null;
  usages?: string[] | null;
  /** Set by the server from the requester, never from the body. */
  username?: string | null;
  uid?: string | null;
  groups?: string[] | null;
  extra?: Record<string, string[]> | null;
}

export interface CertificateSigningRequestCondition {
  type?: string | null;
  status?: string | null;
  reason?: string | null;
  message?: string | null;
  lastUpdateTime?: string | null;
  lastTransitionTime?: string | null;
}

export interface CertificateSigningRequestStatus {
  conditions?: CertificateSigningRequestCondition[] | null;
  /** Base64 (JSON) of PEM "CERTIFICATE" blocks, set by the signer. */
  certificate?: string | null;
}

export interface CertificateSigningRequest extends ApiObject {
  spec?: CertificateSigningRequestSpec;
  status?: CertificateSigningRequestStatus;
}
