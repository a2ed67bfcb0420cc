// certificates.<suffix>/v1 as schema data (definition names keep upstream's
// `io.k8s.api.certificates.v1`). Protobuf field numbers from
// k8s.io/api/certificates/v1/generated.proto. `extra` is a map of string
// lists in JSON (upstream's ExtraValue messages); it is left out of the
// Protobuf form (tag 0), which has no nested lists.

import { f, s, type, type TypeDef } from "../../machinery/schema.js";
import { META_V1, listOf } from "../apps/schemas.js";

export const CERTIFICATES_V1 = "io.k8s.api.certificates.v1";

const strings = () => s.array(s.string(), { listType: "atomic" });

export const CERTIFICATES_TYPES: readonly TypeDef[] = [
  type(`${CERTIFICATES_V1}.CertificateSigningRequest`, "A request for a certificate from a signer; approved or denied, then signed.", {
    metadata: f(1, s.ref(`${META_V1}.ObjectMeta`), "Standard object metadata."),
    spec: f(2, s.ref(`${CERTIFICATES_V1}.CertificateSigningRequestSpec`), "The request: the PEM CSR, the signer, usages; the requester's identity is set by the server.", { required: true }),
    status: f(3, s.ref(`${CERTIFICATES_V1}.CertificateSigningRequestStatus`), "Approval conditions and the issued certificate."),
  }),
  type(`${CERTIFICATES_V1}.CertificateSigningRequestSpec`, "What is asked for, and by whom.", {
    request: f(1, s.string({ format: "byte" }), "A PEM-encoded PKCS#10 CERTIFICATE REQUEST block.", { required: true }),
    signerName: f(7, s.string(), "The signer asked to sign (a qualified name such as example.com/signer)."),
    expirationSeconds: f(8, s.int32(), "The requested lifetime of the certificate (at least 600 seconds); the signer may shorten it."),
    usages: f(5, strings(), "The key usages asked for (digital signature, key encipherment, client auth, server auth, ...)."),
    username: f(2, s.string(), "The user who created the request (set by the server)."),
    uid: f(3, s.string(), "The uid of the user who created the request (set by the server)."),
    groups: f(4, strings(), "The groups of the user who created the request (set by the server)."),
    // Upstream's field 6 is map<string, ExtraValue>, a message the schema language has no form for: JSON only here.
    extra: f(0, s.map(strings()), "Further attributes of the user who created the request (set by the server; JSON only, not in the Protobuf form)."),
  }),
  type(`${CERTIFICATES_V1}.CertificateSigningRequestStatus`, "Where the request stands.", {
    conditions: f(1, s.array(s.ref(`${CERTIFICATES_V1}.CertificateSigningRequestCondition`), { listType: "map", listMapKeys: ["type"] }), "Approved, Denied, Failed."),
    certificate: f(2, s.string({ format: "byte" }), "The issued certificate chain, PEM CERTIFICATE blocks, set by the signer once approved."),
  }),
  type(`${CERTIFICATES_V1}.CertificateSigningRequestCondition`, "One condition of a request.", {
    type: f(1, s.string(), "Approved, Denied or Failed.", { required: true }),
    status: f(6, s.string(), "True, False or Unknown (Approved, Denied and Failed are only True).", { required: true }),
    reason: f(2, s.string(), "A brief machine-readable reason."),
    message: f(3, s.string(), "A human-readable message."),
    lastUpdateTime: f(4, s.time(), "When the condition was last updated."),
    lastTransitionTime: f(5, s.time(), "When the condition last changed status."),
  }),
  listOf(CERTIFICATES_V1, "CertificateSigningRequest", "A list of CertificateSigningRequests."),
];
