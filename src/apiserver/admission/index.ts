// Admission: the chain the registry store runs (mutating, then validating)
// and the built-in plugins.

export type { AdmissionAttributes, AdmissionOperation, AdmissionOptions, AdmissionRequest, AdmissionTiming, MutatingPlugin, SideEffects, ValidatingPlugin } from "../../api/admission.js";
export { AdmissionChain } from "./chain.js";
export { namespaceLifecycle } from "./namespace-lifecycle.js";
