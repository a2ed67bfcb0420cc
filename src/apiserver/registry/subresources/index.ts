// Subresources as declarations: the contract (./subresource.ts, with the
// store-facing part in ./strategy.ts) and one file per subresource. A kind
// lists the ones it has in ResourceDefinition.subresources.

export type { Subresource, SubresourceHandler, SubresourceRequest, SubresourceVerb, UpgradeRequest } from "./subresource.js";
export { findSubresource, subresourceVerb } from "./subresource.js";
export type { SubresourceStrategy } from "./strategy.js";
export { onlyMoving } from "./strategy.js";
export { status, type StatusOptions } from "./status.js";
export { scale, scaleAccess, type ScaleAccess } from "./scale.js";
export { binding, type Binder } from "./binding.js";
export { finalize } from "./finalize.js";
export { ephemeralContainers } from "./ephemeral-containers.js";
export { log } from "./log.js";
export { exec, attach } from "./exec.js";
export { handleUpgrade, type UpgradeOptions } from "./upgrade.js";
