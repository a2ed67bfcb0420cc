// The bootstrap token cleaner (upstream's tokencleaner): a bootstrap token
// Secret in the system namespace whose expiration has passed is deleted; one
// not yet expired is looked at again when it expires. Secrets with an
// unreadable expiration are deleted too (they can never authenticate).

import { isApiError } from "../../machinery/index.js";
import { WorkQueue, keyOf } from "../../client/index.js";
import type { Secret } from "../../api/core/types.js";
import { SECRETS } from "../../api/resource-refs.js";
import { bootstrapTokenExpiry, bootstrapTokenType } from "../../api/certificates/index.js";
import { nowMs, type ControllerContext, type ControllerDescriptor } from "../controller.js";
import { runQueue } from "../run-queue.js";
import type { ProcessResult } from "../../client/index.js";

export const tokenCleanerController: ControllerDescriptor = {
  name: "token-cleaner-controller",
  aliases: ["tokencleaner"],
  enabledByDefault: true,
  run: (context) => new TokenCleaner(context).run(),
};

export class TokenCleaner {
  readonly #ctx: ControllerContext;
  readonly #queue = new WorkQueue({ name: "token_cleaner", baseDelayMs: 200, maxDelayMs: 60_000 });

  constructor(context: ControllerContext) {
    this.#ctx = context;
  }

  #secrets() {
    return this.#ctx.informers.informerFor<Secret>({ resource: SECRETS, namespace: this.#ctx.naming.systemNamespace });
  }

  async run(): Promise<void> {
    const type = bootstrapTokenType(this.#ctx.naming);
    const add = (s: Secret) => {
      if (s.type === type) this.#queue.add(keyOf(s));
    };
    this.#secrets().addEventHandler({ onAdd: add, onUpdate: (_o, s) => add(s) });
    await runQueue(this.#ctx, { name: "token-cleaner-controller", queue: this.#queue, workers: 1, describe: (k) => `secret ${k}`, process: (key) => this.sync(key) });
  }

  /** Deletes the Secret if expired, else asks to be called at its expiry; exported for tests. */
  async sync(key: string): Promise<ProcessResult | void> {
    const secret = this.#secrets().get(key);
    if (secret === undefined || secret.type !== bootstrapTokenType(this.#ctx.naming) || secret.metadata.deletionTimestamp) return;
    const expiry = bootstrapTokenExpiry(secret);
    if (expiry === undefined) return;
    const left = expiry - nowMs(this.#ctx);
    if (left > 0) return { requeueAfterMs: left + 1 };
    try {
      await this.#ctx.client.delete(SECRETS, { namespace: secret.metadata.namespace!, name: secret.metadata.name!, preconditions: { uid: secret.metadata.uid! } });
      this.#ctx.log(`token-cleaner-controller: deleted expired bootstrap token secret ${key}`);
    } catch (err) {
      if (!isApiError(err, "NotFound") && !isApiError(err, "Conflict")) throw err;
    }
  }
}
