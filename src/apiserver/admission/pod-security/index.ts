// Pod Security admission: levels and namespace labels (levels.ts), the
// checks (checks.ts), the cluster defaults and exemptions (config.ts) and
// the plugin (plugin.ts).

export { AdmissionConfigError, DEFAULT_POD_SECURITY, loadAdmissionConfig, parseAdmissionConfig, type PodSecurityConfig } from "./config.js";
export { evaluatePod, forbiddenDetail, type CheckResult } from "./checks.js";
export { LATEST_MINOR, levelVersionString, parseVersion, policyLabels, policyOf, type Level, type LevelVersion, type Policy } from "./levels.js";
export { podSecurity, type PodSecurityDeps } from "./plugin.js";
