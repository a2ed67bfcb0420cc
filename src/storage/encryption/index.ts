// Encryption at rest (--encryption-provider-config): the configuration, the
// providers and the storage wrapper that applies them.

export { EncryptionConfigError, encryptionConfigGroups, loadEncryptionConfig, parseEncryptionConfig, type EncryptionConfig, type EncryptionRule } from "./config.js";
export { EncryptedStorage, type TransformerLookup } from "./encrypted-storage.js";
export { PrefixTransformers, type ValueTransformer } from "./providers.js";
