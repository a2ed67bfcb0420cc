// Images the runtime said it has, remembered for a few seconds so that pods
// started together on the same image ask ImageStatus once rather than once
// per container (each CRI call is an HTTP/2 stream, the largest share of the
// agent's CPU per pod start). Only a present image is remembered: an absent
// one is asked again, so a pull is never skipped. The short window is the
// same race upstream's kubelet already has between its ImageStatus and
// CreateContainer (an image removed in between fails the create); a failed
// create forgets the image, so the retry asks the runtime again.

/** How long a present image is believed without asking (a burst of pods on one image arrives within it). */
export const PRESENT_FOR_MS = 10_000;
/** Distinct images remembered at most; the oldest confirmations go first. */
const MAX_IMAGES = 256;

export class ImagePresence {
  readonly #ttlMs: number;
  readonly #now: () => number;
  /** image reference → when the runtime last said it has it (insertion order = oldest first). */
  readonly #confirmed = new Map<string, number>();

  constructor(ttlMs = PRESENT_FOR_MS, now: () => number = () => performance.now()) {
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** Whether `image` was confirmed present within the window. */
  known(image: string): boolean {
    const at = this.#confirmed.get(image);
    if (at === undefined) return false;
    if (this.#now() - at < this.#ttlMs) return true;
    this.#confirmed.delete(image);
    return false;
  }

  confirm(image: string): void {
    this.#confirmed.delete(image);
    this.#confirmed.set(image, this.#now());
    if (this.#confirmed.size > MAX_IMAGES) this.#confirmed.delete(this.#confirmed.keys().next().value!);
  }

  forget(image: string): void {
    this.#confirmed.delete(image);
  }
}
