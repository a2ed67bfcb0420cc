// The certificates.<suffix> API group: CertificateSigningRequests (the
// signer and approver controllers act on them: src/controllers/certificates).

import type { Naming } from "../../machinery/naming.js";
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
    return [certificateSigningRequests(naming)];
  },
};

export default certificatesModule;
export {
  authenticateBootstrapToken, BOOTSTRAP_KEYS, BOOTSTRAP_SECRET_PREFIX, BOOTSTRAP_TOKEN_PATTERN, bootstrapTokenExpiry, bootstrapTokenSecret,
  bootstrapTokenType, bootstrapUser, generateBootstrapToken,
} from "./bootstrap-tokens.js";
