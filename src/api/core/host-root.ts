// The host-root marker: a pod annotation `<key domain>/host-root: "true"`
// (orch.io/host-root, or kubernetes.io/host-root on the k8s.io profile) by
// which a pod asks that, where the embedded runtime has no image for a
// container, the container run on the node's own root file system. Admission
// cannot know which images a node holds, so the request has to be explicit:
// Pod Security counts a marked pod as privileged (baseline and restricted
// refuse it), and the node agent runs only marked pods on the host root.

import { namingFor } from "../../machinery/naming.js";

/** The marker's annotation key under a key domain (naming.keyDomain). */
export function hostRootAnnotation(keyDomain: string): string {
  return `${keyDomain}/host-root`;
}

/** The marker under both profiles' key domains (Pod Security reads pods of either). */
export const HOST_ROOT_ANNOTATIONS: readonly string[] = [...new Set([hostRootAnnotation(namingFor("orch.io").keyDomain), hostRootAnnotation(namingFor("k8s.io").keyDomain)])];

/** Whether annotations ask for the host-root fallback (the value "true", as upstream's boolean annotations). */
export function marksHostRoot(annotations: Readonly<Record<string, string>> | null | undefined, key: string): boolean {
  return annotations?.[key] === "true";
}
