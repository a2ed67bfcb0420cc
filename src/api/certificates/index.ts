// The certificates.<suffix> API group: CertificateSigningRequests (the
// signer and approver controllers act on them: src/controllers/certificates).

import { namingFor, type Naming } from "../../machinery/naming.js";
import { storedUnderGroup } from "../alias-group.js";
import type { SchemaRegistry } from "../../machinery/schema.js";
import type { ApiGroupModule, ResourceDefinition } from "../resource.js";
import { certificateSigningRequests } from "./certificatesigningrequests.js";
import { CERTIFICATES_TYPES } from "./schemas.js";

export { CERTIFICATES_TYPES, CERTIFICATES_V1 } from "./schemas.js";
export type { CertificateSigningRequest, CertificateSigningRequestCondition, CertificateSigningRequestSpec, CertificateSigningRequestStatus } from "./types.js";
export { csrCondition } from "./certificatesigningrequests.js";
export { parseCsr, type ParsedCsr } from "./csr.js";
export { BOOTSTRAPPERS_GROUP, CONDITION, KEY_USAGES, NODE_USER_PREFIX, NODES_GROUP, nodeOfUser, signerNames, type SignerNames } from "./signers.js";

export const certificatesModule: ApiGroupModule = {
  registerSchemas(registry: SchemaRegistry): void {
    registry.add(...CERTIFICATES_TYPES);
  },
  resources(naming: Naming): ResourceDefinition[] {
    // kubectl `certificate approve|deny` has upstream's group name compiled in: serve that name too, over the same storage.
    const upstream = namingFor("k8s.io").certificatesGroup;
    if (naming.certificatesGroup === upstream) return [certificateSigningRequests(naming)];
    const alias = certificateSigningRequests({ ...naming, certificatesGroup: upstream });
    // Upstream's name first: discovery lists it first, so kubectl's mapping of `certificate approve NAME` (by resource, the
    // first group serving it) lands on the group it checks for.
    return [storedUnderGroup(alias, naming.certificatesGroup), certificateSigningRequests(naming)];
  },
};

export default certificatesModule;
export {
  authenticateBootstrapToken, BOOTSTRAP_KEYS, BOOTSTRAP_SECRET_PREFIX, BOOTSTRAP_TOKEN_PATTERN, bootstrapTokenExpiry, bootstrapTokenSecret,
  bootstrapTokenType, bootstrapUser, generateBootstrapToken,
} from "./bootstrap-tokens.js";
