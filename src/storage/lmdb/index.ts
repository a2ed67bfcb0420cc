// The embedded lmdb backend (the default store).
export { LmdbStorage, type LmdbStorageOptions, type StoreCheck } from "./lmdb-storage.js";
export { STORE_FILE } from "./store-file.js";
