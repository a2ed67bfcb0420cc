// ConfigMaps and Secrets read from the API, for containers' environment and
// volumes (and claims and volumes, for persistentVolumeClaim volumes) (a joined agent; a standalone one has NO_OBJECTS),
// and pod-bound service-account tokens for projected volumes (TokenRequest, kept and renewed by the token manager).
// A missing object is undefined, so an optional reference can be skipped; other errors throw.

import type { ConfigMap, Secret, Service } from "../../api/core/types.js";
import type { PersistentVolume, PersistentVolumeClaim } from "../../api/core/persistent-volume-types.js";
import { CONFIGMAPS, PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, SECRETS, SERVICES, SERVICE_ACCOUNTS } from "../../api/resource-refs.js";
import type { RestClient, ResourceRef } from "../../client/index.js";
import { isApiError, type ApiObject } from "../../machinery/index.js";
import type { ObjectSource } from "./env.js";
import { TokenManager } from "../tokens/token-manager.js";
import { ServiceCache } from "./service-cache.js";
import type { TokenRequest } from "../../api/authentication/token-request.js";

/** `authenticationGroup`: the group the TokenRequests are written in (the naming table's). */
/** With `signal` (the agent's stop), services come from a watch that ends with it (service-cache.ts); without, one LIST per call. */
export function apiObjects(client: RestClient, authenticationGroup: string, signal?: AbortSignal): ObjectSource {
  const serviceCache = signal ? new ServiceCache(client, signal) : undefined;
  const get = async <T,>(ref: ResourceRef, namespace: string, name: string): Promise<T | undefined> => {
    try {
      return (await client.get(ref, { namespace, name })) as T;
    } catch (err) {
      if (isApiError(err) && err.code === 404) return undefined;
      throw err;
    }
  };
  const tokens = new TokenManager(async (namespace, serviceAccount, spec) => {
    const answer = await client.create<TokenRequest & ApiObject>(SERVICE_ACCOUNTS, {
      apiVersion: `${authenticationGroup}/v1`,
      kind: "TokenRequest",
      metadata: { name: serviceAccount, creationTimestamp: null },
      spec: { audiences: [...spec.audiences], expirationSeconds: spec.expirationSeconds, boundObjectRef: { kind: "Pod", apiVersion: "v1", name: spec.boundPod.name, uid: spec.boundPod.uid } },
      status: { token: "", expirationTimestamp: null },
    }, { namespace, subresource: "token" });
    return { token: answer.status.token, expiresAtMs: Date.parse(answer.status.expirationTimestamp ?? ""), expirationSeconds: answer.spec.expirationSeconds };
  });
  // The API server's service changes seldom (its cluster IP never): one read a minute serves every container start.
  let kubernetes: { at: number; service: Promise<Service | undefined> } | undefined;
  return {
    serviceAccountToken: (namespace, serviceAccount, spec) => tokens.token(namespace, serviceAccount, spec),
    apiServerService: () => {
      if (kubernetes === undefined || Date.now() - kubernetes.at > 60_000) {
        const service = get<Service>(SERVICES, "default", "kubernetes").catch(() => undefined);
        kubernetes = { at: Date.now(), service };
      }
      return kubernetes.service;
    },
    configMap: (ns, name) => get<ConfigMap>(CONFIGMAPS, ns, name),
    services: async (ns) => (serviceCache ? serviceCache.services(ns) : (await client.list<Service>(SERVICES, { namespace: ns })).items),
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
