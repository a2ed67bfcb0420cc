// The objects service-account tokens name (accounts, pods, secrets), read
// from the registry stores: the watch cache first, a consistent read when it
// lacks the object or when asked for one (see AccountObjects).

import { isApiError, type ApiObject } from "../../machinery/index.js";
import type { Stores } from "../storage-factory.js";
import type { AccountObjects, AccountResource } from "./service-account-tokens.js";
import type { ServiceAccountLookup } from "../admission/service-account.js";
import type { ServiceAccount } from "../../api/core/types.js";

export function storeObjects(stores: () => Stores): AccountObjects {
  return {
    async get(resource: AccountResource, namespace: string, name: string, read: "cached" | "fresh"): Promise<ApiObject | undefined> {
      const store = stores().for({ group: "", resource });
      if (store === undefined || name === "") return undefined;
      const attempt = async (params: { resourceVersion?: string }) => {
        try {
          return (await store.get(namespace, name, params)).object;
        } catch (err) {
          if (isApiError(err, "NotFound")) return undefined;
          throw err;
        }
      };
      return (read === "cached" ? await attempt({ resourceVersion: "0" }) : undefined) ?? attempt({});
    },
  };
}

/** The ServiceAccount admission step's reads (admission/service-account.ts). */
export function accountLookup(stores: () => Stores): ServiceAccountLookup {
  const objects = storeObjects(stores);
  return async (namespace, name, read) => (await objects.get("serviceaccounts", namespace, name, read)) as ServiceAccount | undefined;
}
