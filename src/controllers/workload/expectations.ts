// Controller expectations (upstream's ControllerExpectations): after a
// controller asks for N creations and some deletions, it must not act on the
// same key again until the informer has shown them, or it would create twice.
// Creations are counted; deletions are tracked by pod key so an update that
// marks a pod terminating and its later removal count once. Expectations
// older than the TTL are treated as met, so a lost event cannot wedge a key.

interface Expectation {
  adds: number;
  deletes: Set<string>;
  at: number;
}

export class Expectations {
  readonly #items = new Map<string, Expectation>();
  readonly #ttlMs: number;

  constructor(options: { ttlMs?: number } = {}) {
    this.#ttlMs = options.ttlMs ?? 5 * 60_000;
  }

  /** True when nothing is pending for the key (or what is pending has expired). */
  satisfied(key: string): boolean {
    const e = this.#items.get(key);
    return e === undefined || !pending(e) || this.#expired(e);
  }

  /**
   * True when what is pending for the key was never seen and has expired:
   * the informer is that far behind the server (or lost an event), so its
   * count of the key's pods is not to be trusted without asking the server.
   */
  expiredUnmet(key: string): boolean {
    const e = this.#items.get(key);
    return e !== undefined && pending(e) && this.#expired(e);
  }

  #expired(e: Expectation): boolean {
    return Date.now() - e.at > this.#ttlMs;
  }

  /** Replaces the key's expectations: `adds` creations and the deletion of `deletes` (pod keys). */
  expect(key: string, adds: number, deletes: readonly string[] = []): void {
    this.#items.set(key, { adds, deletes: new Set(deletes), at: Date.now() });
  }

  creationObserved(key: string): void {
    const e = this.#items.get(key);
    if (e !== undefined) e.adds--;
  }

  deletionObserved(key: string, podKey: string): void {
    this.#items.get(key)?.deletes.delete(podKey);
  }

  /** A creation that failed (or was skipped) will never be observed. */
  lowerAdds(key: string, by: number): void {
    const e = this.#items.get(key);
    if (e !== undefined) e.adds -= by;
  }

  delete(key: string): void {
    this.#items.delete(key);
  }
}

/** Creations or deletions asked for and not seen yet. */
function pending(e: Expectation): boolean {
  return e.adds > 0 || e.deletes.size > 0;
}
