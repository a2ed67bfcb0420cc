// The node agent (seed 001): startNodeAgent runs it as a component, standalone
// or joined to a cluster; the configuration loader is for the CLI.

export { startNodeAgent, localDirectories, type NodeAgent, type NodeAgentOptions } from "./agent.js";
export { loadConfig, defaultConfig, ConfigError, type NodeAgentConfig } from "./config/index.js";
export { CONTAINER_LOGS_PATH } from "./logs/container-logs.js";
export { CHECKPOINT_PATH } from "./checkpoint/checkpoint.js";
export { EXEC_PATH } from "./exec/container-exec.js";
export { ATTACH_PATH } from "./exec/container-attach.js";
export { PORT_FORWARD_PATH } from "./exec/port-forward.js";
export { STATS_PATHS } from "./stats/endpoints.js";
export { LockContentionError } from "./lock/lock-file.js";
export { SwapError } from "./swap/swap.js";
export { loadRegistriesConfig, loadRegistriesFile, RegistriesConfigError, type RegistriesConfig } from "./runtime/images/registries.js";
