// The ServiceAccount admission step (upstream's plugin of that name), for pod
// creates: a pod without spec.serviceAccountName runs as `default`; a pod
// naming an account that does not exist is refused (403, upstream's text);
// unless automountServiceAccountToken is false (on the pod, else on the
// account), the pod gets the projected volume `<product>-api-access-XXXXX`
// (a bound token of 3607 s, the cluster CA from the `<product>-root-ca.crt`
// configmap, the namespace) mounted read-only in every container and init
// container at /var/run/secrets/<key domain>/serviceaccount; and it inherits
// the account's imagePullSecrets when it names none. Mirror pods are not
// changed, and may not name an account or project a token.

import type { MutatingPlugin } from "../../api/admission.js";
import { DEFAULT_SERVICE_ACCOUNT, PROJECTED_TOKEN_SECONDS, serviceAccountNames } from "../../api/authentication/token-request.js";
import type { Container, Pod, ServiceAccount, Volume } from "../../api/core/types.js";
import { forbidden, generateName } from "../../machinery/index.js";
import { configAnnotations, type Naming } from "../../machinery/naming.js";
import { sleep } from "../../machinery/until.js";

const PODS = { group: "", resource: "pods" };

/**
 * How the plugin reads accounts: `cached` (the watch cache as it stands) or
 * `fresh` (a consistent read); undefined when missing. Declared here, as
 * PriorityClassStore is, because the registry runs the admission chain.
 */
export type ServiceAccountLookup = (namespace: string, name: string, read: "cached" | "fresh") => Promise<ServiceAccount | undefined>;

export interface ServiceAccountAdmissionOptions {
  readonly lookup: ServiceAccountLookup;
  readonly naming: Naming;
  /** The volume's name from its prefix (default: upstream's generated name, 5 random characters; tests fix it). */
  readonly volumeName?: (prefix: string) => string;
}

export function serviceAccountAdmission(options: ServiceAccountAdmissionOptions): MutatingPlugin {
  const names = serviceAccountNames(options.naming);
  const mirror = configAnnotations(options.naming.keyDomain).mirror;
  const volumeName = options.volumeName ?? ((prefix: string) => generateName(prefix));
  return {
    name: "ServiceAccount",
    handles: (a) => a.operation === "CREATE" && a.resource.group === "" && a.resource.resource === "pods" && a.subresource === undefined,
    admit: async (a) => {
      const pod = a.object as Pod;
      const spec = (pod.spec ??= {});
      const podName = pod.metadata?.name ?? "";
      if (pod.metadata?.annotations?.[mirror] !== undefined) return checkMirrorPod(pod, podName);
      const name = spec.serviceAccountName || spec.serviceAccount || DEFAULT_SERVICE_ACCOUNT;
      spec.serviceAccountName = name;
      spec.serviceAccount = name;
      const namespace = a.namespace ?? pod.metadata?.namespace ?? "default";
      const account = await findAccount(options.lookup, namespace, name);
      if (account === undefined) throw forbidden(PODS, podName, `error looking up service account ${namespace}/${name}: serviceaccount ${JSON.stringify(name)} not found`);
      if ((spec.automountServiceAccountToken ?? account.automountServiceAccountToken ?? true) !== false) mountToken(spec, names, volumeName);
      if ((spec.imagePullSecrets ?? []).length === 0 && (account.imagePullSecrets ?? []).length > 0) {
        spec.imagePullSecrets = account.imagePullSecrets!.map((s) => ({ name: s.name ?? "" }));
      }
    },
  };
}

/**
 * Upstream's getServiceAccount: the cache, then fresh reads; `default` is
 * tried ten times about 100-200 ms apart, since the controller makes it just
 * after its namespace.
 */
async function findAccount(lookup: ServiceAccountLookup, namespace: string, name: string): Promise<ServiceAccount | undefined> {
  const cached = await lookup(namespace, name, "cached");
  if (cached !== undefined) return cached;
  const attempts = name === DEFAULT_SERVICE_ACCOUNT ? 10 : 1;
  const interval = 100 + Math.floor(Math.random() * 100);
  for (let i = 0; i < attempts; i++) {
    if (i > 0) await sleep(interval);
    const found = await lookup(namespace, name, "fresh");
    if (found !== undefined) return found;
  }
  return undefined;
}

function checkMirrorPod(pod: Pod, podName: string): void {
  const spec = pod.spec ?? {};
  if (spec.serviceAccountName) throw forbidden(PODS, podName, "a mirror pod may not reference service accounts");
  const projectsToken = (spec.volumes ?? []).some((v) => ((v["projected"] as { sources?: Record<string, unknown>[] } | undefined)?.sources ?? []).some((s) => s["serviceAccountToken"] != null));
  if (projectsToken) throw forbidden(PODS, podName, "a mirror pod may not use ServiceAccountToken volume projections");
}

function mountToken(spec: NonNullable<Pod["spec"]>, names: ReturnType<typeof serviceAccountNames>, generate: (prefix: string) => string): void {
  const existing = (spec.volumes ?? []).find((v) => v.name?.startsWith(names.volumePrefix));
  const volumeName = existing?.name ?? generate(names.volumePrefix);
  let needed = false;
  const mount = (c: Container) => {
    if ((c.volumeMounts ?? []).some((m) => m.mountPath === names.mountPath)) return;
    (c.volumeMounts ??= []).push({ name: volumeName, readOnly: true, mountPath: names.mountPath });
    needed = true;
  };
  for (const c of spec.initContainers ?? []) mount(c);
  for (const c of spec.containers ?? []) mount(c);
  if (existing === undefined && needed) (spec.volumes ??= []).push(tokenVolume(volumeName, names.rootCaConfigMap));
}

/** Upstream's TokenVolumeSource. */
function tokenVolume(name: string, rootCaConfigMap: string): Volume {
  return {
    name,
    projected: {
      defaultMode: 0o644,
      sources: [
        { serviceAccountToken: { expirationSeconds: PROJECTED_TOKEN_SECONDS, path: "token" } },
        { configMap: { name: rootCaConfigMap, items: [{ key: "ca.crt", path: "ca.crt" }] } },
        { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } },
      ],
    },
  };
}
