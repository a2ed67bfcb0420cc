// Encryption at rest (--encryption-provider-config): the configuration and
// the providers; ../transformed-storage.ts applies them.

export { EncryptionConfigError, encryptionConfigGroups, loadEncryptionConfig, parseEncryptionConfig, type EncryptionConfig, type EncryptionRule } from "./config.js";
export { PrefixTransformers, type ValueTransformer } from "./providers.js";
