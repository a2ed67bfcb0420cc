// The certificate controllers: the signer, the node client approver and the bootstrap token cleaner.

export { certificateLifetime, csrSigningController, CsrSigner, DEFAULT_SIGNING_DURATION_MS } from "./signer.js";
export { csrApprovingController, CsrApprover } from "./approver.js";
export { tokenCleanerController, TokenCleaner } from "./token-cleaner.js";
export { csrResource } from "./common.js";
