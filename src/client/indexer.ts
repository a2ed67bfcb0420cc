// The informer's cache: objects by key ("namespace/name") plus named indexes (index name → value →
// keys), kept in step on every set and delete, so a controller asks "pods on node X" or "pods in
// namespace Y" without scanning the cache. Upstream's cache.Indexer; "namespace" is built in.

/** Index name → function from an object to the values it is filed under (none: not in that index). */
export type IndexFunc<T> = (obj: T) => string[];
export type Indexers<T> = Record<string, IndexFunc<T>>;

/** The built-in index: objects by metadata.namespace (cluster-scoped objects are not in it). */
export const NAMESPACE_INDEX = "namespace";

export function namespaceIndexFunc(obj: { metadata?: { namespace?: string } }): string[] {
  const ns = obj.metadata?.namespace;
  return ns ? [ns] : [];
}

interface Index<T> {
  fn: IndexFunc<T>;
  byValue: Map<string, Set<string>>;
}

export interface IndexerOptions {
  /** Told when an index function throws; the object is then in no bucket of that index (default: ignored). */
  onIndexError?: (index: string, key: string, err: unknown) => void;
}

export class Indexer<T extends { metadata?: { namespace?: string } }> {
  readonly #items = new Map<string, T>();
  readonly #indexes = new Map<string, Index<T>>();
  readonly #onIndexError: IndexerOptions["onIndexError"];

  constructor(options: IndexerOptions = {}) {
    this.#onIndexError = options.onIndexError;
    this.addIndexers({ [NAMESPACE_INDEX]: namespaceIndexFunc });
  }

  get size(): number {
    return this.#items.size;
  }

  get(key: string): T | undefined {
    return this.#items.get(key);
  }

  values(): IterableIterator<T> {
    return this.#items.values();
  }

  keys(): IterableIterator<string> {
    return this.#items.keys();
  }

  entries(): IterableIterator<[string, T]> {
    return this.#items.entries();
  }

  /**
   * Adds indexes, built at once from what is cached. Shared informers serve several controllers, so
   * registering the same function under the same name again is a no-op; a different function under a
   * taken name is an error (two meanings for one name would answer one of them wrongly).
   */
  addIndexers(indexers: Indexers<T>): void {
    for (const [name, fn] of Object.entries(indexers)) {
      const existing = this.#indexes.get(name);
      if (existing !== undefined && existing.fn !== fn) throw new Error(`indexer conflict: an index named "${name}" already exists`);
    }
    for (const [name, fn] of Object.entries(indexers)) {
      if (this.#indexes.has(name)) continue;
      const index: Index<T> = { fn, byValue: new Map() };
      this.#indexes.set(name, index);
      for (const [key, obj] of this.#items) file(index, key, this.#values(name, index, key, obj));
    }
  }

  /** The names of the indexes (the built-in one included). */
  indexNames(): string[] {
    return [...this.#indexes.keys()];
  }

  /** Keys of the objects the index files under `value`. */
  indexKeys(name: string, value: string): string[] {
    const keys = this.#index(name).byValue.get(value);
    return keys === undefined ? [] : [...keys];
  }

  /** The objects the index files under `value`. */
  byIndex(name: string, value: string): T[] {
    const keys = this.#index(name).byValue.get(value);
    if (keys === undefined) return [];
    const out: T[] = [];
    for (const key of keys) out.push(this.#items.get(key)!);
    return out;
  }

  /** The values an index holds objects under. */
  indexValues(name: string): string[] {
    return [...this.#index(name).byValue.keys()];
  }

  /** Stores `obj` under `key`; returns what was there. */
  set(key: string, obj: T): T | undefined {
    const old = this.#items.get(key);
    this.#items.set(key, obj);
    for (const [name, index] of this.#indexes) {
      const now = this.#values(name, index, key, obj);
      if (old === undefined) {
        file(index, key, now);
        continue;
      }
      const before = this.#values(name, index, key, old);
      // The common case (the value did not move) touches nothing, so order within a value stays that of arrival.
      if (before.length === now.length && before.every((v, i) => v === now[i])) continue;
      unfile(index, key, before.filter((v) => !now.includes(v)));
      file(index, key, now.filter((v) => !before.includes(v)));
    }
    return old;
  }

  /** Removes `key`; returns what was there. */
  delete(key: string): T | undefined {
    const old = this.#items.get(key);
    if (old === undefined) return undefined;
    this.#items.delete(key);
    for (const [name, index] of this.#indexes) unfile(index, key, this.#values(name, index, key, old));
    return old;
  }

  /**
   * A throwing index function must not leave the cache and its indexes out of step, nor stop the
   * informer's watch: the object goes in no bucket of that index, and the error is reported.
   */
  #values(name: string, index: Index<T>, key: string, obj: T): string[] {
    try {
      return index.fn(obj);
    } catch (err) {
      this.#onIndexError?.(name, key, err);
      return [];
    }
  }

  #index(name: string): Index<T> {
    const index = this.#indexes.get(name);
    if (index === undefined) throw new Error(`index "${name}" does not exist`);
    return index;
  }
}

function file<T>(index: Index<T>, key: string, values: string[]): void {
  for (const v of values) {
    let keys = index.byValue.get(v);
    if (keys === undefined) index.byValue.set(v, (keys = new Set()));
    keys.add(key);
  }
}

function unfile<T>(index: Index<T>, key: string, values: string[]): void {
  for (const v of values) {
    const keys = index.byValue.get(v);
    if (keys === undefined) continue;
    keys.delete(key);
    // Empty sets would pile up for every node name or owner UID ever seen.
    if (keys.size === 0) index.byValue.delete(v);
  }
}
