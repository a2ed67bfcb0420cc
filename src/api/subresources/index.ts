// Subresources as declarations (the contract: Subresource in ../resource.ts),
// one file each. A kind lists the ones it has in its `subresources`, with its
// own parameters (scale's replica mapping, binding's binder, ...).

export { findSubresource } from "../resource.js";
export { onlyMoving } from "./only-moving.js";
export { status, type StatusOptions } from "./status.js";
export { scale, scaleAccess } from "./scale.js";
export { binding, binderOf, type Binder } from "./binding.js";
export { finalize } from "./finalize.js";
export { ephemeralContainers } from "./ephemeral-containers.js";
export { log } from "./log.js";
export { exec, attach, portforward } from "./exec.js";
export { token } from "./token.js";
export { eviction } from "./eviction.js";
export { proxy } from "./proxy.js";
