// Storage errors as API statuses (seed 000): what the storage door throws,
// said about one object of one resource. API errors pass through unchanged.

import {
  alreadyExists,
  conflict,
  insufficientStorage,
  internalError,
  isApiError,
  listExpired,
  notFound,
  requestEntityTooLarge,
  serviceUnavailable,
  tooLargeResourceVersion,
  type GroupResource,
} from "../../machinery/index.js";
import { isStorageError, type FutureRevisionError } from "../../storage/index.js";

export function apiErrorFrom(err: unknown, resource: GroupResource, name: string): unknown {
  if (isApiError(err) || !isStorageError(err)) return err;
  switch (err.code) {
    case "NotFound":
      return notFound(resource, name);
    case "AlreadyExists":
      return alreadyExists(resource, name);
    case "Conflict":
      return conflict(resource, name);
    case "TooLarge":
      return requestEntityTooLarge(err.message);
    case "Compacted":
      return listExpired();
    case "FutureRevision": {
      const { requestedRevision = "", currentRevision = "" } = err as Partial<FutureRevisionError>;
      return tooLargeResourceVersion(requestedRevision, currentRevision);
    }
    case "NoSpace":
      return insufficientStorage(`storage is full: ${err.message}`);
    case "Unavailable":
      return serviceUnavailable(`storage is unavailable: ${err.message}`);
    default:
      return internalError(err);
  }
}
