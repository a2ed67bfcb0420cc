// The watch cache and the one door to storage built on it (cached-storage.ts):
// what the API server's registry uses to read, watch and write a resource.

export { CachedStorage, type CachedList, type CachedStorageOptions, type CachedWatch, type CorruptKey, type ReadAt, type WatchSink } from "./cached-storage.js";
export { cachedRecord, decodeRecord, decodedObjects, storedKeyValue, DecodedObjects, type Cached, type CacheEvent, type WithRevision } from "./cached.js";
export { Cacher, type CacheListener, type CacherOptions } from "./cacher.js";
export { WindowBudget, defaultBudgetBytes, eventCost, type BudgetedWindow } from "./budget.js";
