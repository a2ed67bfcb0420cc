// guaranteedUpdate on top of get/create/update/delete: read, let the caller
// decide, compare-and-swap, and retry from the value the conflict returned.
// Shared by every backend so the retry rules are written once.

import { ConflictError, NotFoundError, StorageError } from "./errors.js";
import {
  DELETE,
  type GuaranteedUpdateOptions,
  type GuaranteedUpdateResult,
  type KeyValue,
  type Storage,
  type UpdateDecision,
} from "./storage.js";

const DEFAULT_MAX_RETRIES = 100;

export async function guaranteedUpdate(
  store: Pick<Storage, "get" | "create" | "update" | "delete">,
  key: string,
  tryUpdate: (current: KeyValue | undefined) => UpdateDecision | Promise<UpdateDecision>,
  options: GuaranteedUpdateOptions = {},
): Promise<GuaranteedUpdateResult> {
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  // A suggestion saves the read; until a read confirms it, a decision to write nothing is not final.
  let current = options.suggestion ?? (await store.get(key)).kv;
  let unconfirmed = options.suggestion !== undefined;
  const confirm = async (): Promise<boolean> => {
    unconfirmed = false;
    const suggested = current;
    current = (await store.get(key)).kv;
    return current?.modRevision !== suggested?.modRevision;
  };
  for (let attempt = 0; ; attempt++) {
    if (current === undefined && !options.allowCreate) throw new NotFoundError(key);
    let decision: UpdateDecision;
    try {
      decision = await tryUpdate(current);
    } catch (err) {
      if (unconfirmed && (await confirm())) continue;
      throw err;
    }
    if (decision === undefined) {
      if (unconfirmed && (await confirm())) continue;
      return { kv: current, changed: false };
    }
    try {
      if (decision === DELETE) {
        if (current === undefined) return { kv: undefined, changed: false };
        const { revision } = await store.delete(key, { expectedModRevision: current.modRevision });
        return { kv: undefined, changed: true, deleteRevision: revision };
      }
      const kv =
        current === undefined
          ? await store.create(key, decision)
          : await store.update(key, decision, current.modRevision);
      return { kv, changed: true };
    } catch (err) {
      if (attempt >= maxRetries || !isRetryable(err)) throw err;
      // A conflict usually carries the winner's value; otherwise read again.
      unconfirmed = false;
      current = err instanceof ConflictError && err.current !== undefined ? err.current : (await store.get(key)).kv;
    }
  }
}

function isRetryable(err: unknown): boolean {
  return (
    err instanceof StorageError &&
    (err.code === "Conflict" || err.code === "AlreadyExists" || err.code === "NotFound")
  );
}
