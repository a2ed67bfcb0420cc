// ConfigMaps and Secrets read from the API, for containers' environment and
// volumes (and claims and volumes, for persistentVolumeClaim volumes) (a joined agent; a standalone one has NO_OBJECTS). A missing object
// is undefined, so an optional reference can be skipped; other errors throw.

import type { ConfigMap, Secret } from "../../api/core/types.js";
import type { PersistentVolume, PersistentVolumeClaim } from "../../api/core/persistent-volume-types.js";
import { CONFIGMAPS, PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, SECRETS } from "../../api/resource-refs.js";
import type { RestClient, ResourceRef } from "../../client/index.js";
import { isApiError } from "../../machinery/index.js";
import type { ObjectSource } from "./env.js";


export function apiObjects(client: RestClient): ObjectSource {
  const get = async <T,>(ref: ResourceRef, namespace: string, name: string): Promise<T | undefined> => {
    try {
      return (await client.get(ref, { namespace, name })) as T;
    } catch (err) {
      if (isApiError(err) && err.code === 404) return undefined;
      throw err;
    }
  };
  return {
    configMap: (ns, name) => get<ConfigMap>(CONFIGMAPS, ns, name),
    persistentVolumeClaim: (ns, name) => get<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS, ns, name),
    persistentVolume: (name) => get<PersistentVolume>(PERSISTENT_VOLUMES, "", name),
    secret: async (ns, name) => {
      const s = await get<Secret>(SECRETS, ns, name);
      if (!s) return undefined;
      return Object.fromEntries([
        ...Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]),
        ...Object.entries((s as { stringData?: Record<string, string> }).stringData ?? {}),
      ]);
    },
  };
}
