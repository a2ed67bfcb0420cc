// A binary heap keyed by string, with update and delete by key: the active
// queue (priority order) and the backoff queue (expiry order) are both one.

export class KeyedHeap<T> {
  readonly #items: T[] = [];
  readonly #index = new Map<string, number>();
  readonly #key: (item: T) => string;
  readonly #less: (a: T, b: T) => boolean;

  constructor(key: (item: T) => string, less: (a: T, b: T) => boolean) {
    this.#key = key;
    this.#less = less;
  }

  get size(): number {
    return this.#items.length;
  }

  has(key: string): boolean {
    return this.#index.has(key);
  }

  get(key: string): T | undefined {
    const i = this.#index.get(key);
    return i === undefined ? undefined : this.#items[i];
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  /** Adds, or replaces the item with the same key and restores order. */
  push(item: T): void {
    const key = this.#key(item);
    const i = this.#index.get(key);
    if (i !== undefined) {
      this.#items[i] = item;
      this.#fix(i);
      return;
    }
    this.#items.push(item);
    this.#index.set(key, this.#items.length - 1);
    this.#up(this.#items.length - 1);
  }

  pop(): T | undefined {
    if (this.#items.length === 0) return undefined;
    const top = this.#items[0]!;
    this.#removeAt(0);
    return top;
  }

  delete(key: string): T | undefined {
    const i = this.#index.get(key);
    if (i === undefined) return undefined;
    const item = this.#items[i]!;
    this.#removeAt(i);
    return item;
  }

  values(): IterableIterator<T> {
    return this.#items.values();
  }

  #removeAt(i: number): void {
    const last = this.#items.pop()!;
    this.#index.delete(this.#key(i === this.#items.length ? last : this.#items[i]!));
    if (i < this.#items.length) {
      this.#items[i] = last;
      this.#index.set(this.#key(last), i);
      this.#fix(i);
    }
  }

  #fix(i: number): void {
    if (!this.#up(i)) this.#down(i);
  }

  #up(i: number): boolean {
    let moved = false;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(this.#items[i]!, this.#items[parent]!)) break;
      this.#swap(i, parent);
      i = parent;
      moved = true;
    }
    return moved;
  }

  #down(i: number): void {
    const n = this.#items.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let best = i;
      if (l < n && this.#less(this.#items[l]!, this.#items[best]!)) best = l;
      if (r < n && this.#less(this.#items[r]!, this.#items[best]!)) best = r;
      if (best === i) return;
      this.#swap(i, best);
      i = best;
    }
  }

  #swap(a: number, b: number): void {
    const items = this.#items;
    [items[a], items[b]] = [items[b]!, items[a]!];
    this.#index.set(this.#key(items[a]!), a);
    this.#index.set(this.#key(items[b]!), b);
  }
}
