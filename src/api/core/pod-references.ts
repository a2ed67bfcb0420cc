// What a pod refers to by name in its own namespace (upstream's node
// authorizer graph edges and podutil.VisitPodSecretNames /
// VisitPodConfigmapNames): secrets, config maps, claims and its service
// account. The Node authorizer lets a node read exactly these for the pods
// bound to it.

import { podContainers } from "./pod-containers.js";
import type { Pod } from "./types.js";

export interface PodReferences {
  readonly secrets: ReadonlySet<string>;
  readonly configMaps: ReadonlySet<string>;
  readonly claims: ReadonlySet<string>;
  readonly serviceAccount: string;
}

type Obj = Record<string, unknown> | undefined;
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

export function podReferences(pod: Pod): PodReferences {
  const secrets = new Set<string>();
  const configMaps = new Set<string>();
  const claims = new Set<string>();
  const add = (set: Set<string>, v: unknown) => {
    const s = str(v);
    if (s !== undefined) set.add(s);
  };
  const spec = pod.spec;
  for (const s of spec?.imagePullSecrets ?? []) add(secrets, s.name);
  for (const c of podContainers(spec)) {
    for (const from of c.envFrom ?? []) {
      add(secrets, (from["secretRef"] as Obj)?.["name"]);
      add(configMaps, (from["configMapRef"] as Obj)?.["name"]);
    }
    for (const e of (c.env ?? []) as { valueFrom?: Record<string, Obj> | null }[]) {
      add(secrets, e.valueFrom?.["secretKeyRef"]?.["name"]);
      add(configMaps, e.valueFrom?.["configMapKeyRef"]?.["name"]);
    }
  }
  for (const v of spec?.volumes ?? []) {
    add(secrets, (v["secret"] as Obj)?.["secretName"]);
    add(configMaps, (v["configMap"] as Obj)?.["name"]);
    add(claims, (v["persistentVolumeClaim"] as Obj)?.["claimName"]);
    if (v["ephemeral"] !== undefined && v.name) claims.add(`${pod.metadata.name}-${v.name}`);
    for (const source of ((v["projected"] as Obj)?.["sources"] ?? []) as Record<string, Obj>[]) {
      add(secrets, source["secret"]?.["name"]);
      add(configMaps, source["configMap"]?.["name"]);
    }
    // Volume plugins that name a secret for their credentials (csi, and the in-tree ones upstream lists).
    for (const plugin of Object.values(v)) {
      if (typeof plugin !== "object" || plugin === null) continue;
      for (const key of ["nodePublishSecretRef", "secretRef"]) add(secrets, ((plugin as Record<string, Obj>)[key])?.["name"]);
    }
  }
  return { secrets, configMaps, claims, serviceAccount: str(spec?.serviceAccountName) ?? "" };
}
