// The agent's configuration (seed 001, "Configuration merging").
export { defaultConfig, loadConfig, parseConfigText, readConfigFile, type LoadConfigOptions, type NodeAgentConfig, type SwapBehavior, type AuthorizationMode } from "./config.js";
export { API_VERSION, KIND, ConfigError } from "./schema.js";
