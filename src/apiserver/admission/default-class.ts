// The default-class rule shared by DefaultStorageClass and DefaultIngressClass:
// of the classes whose annotation `key` is exactly "true", the newest (then
// the first by name), as upstream since 1.26 (storage) and 1.28 (ingress).

import type { ApiObject } from "../../machinery/index.js";

export function newestMarked<T extends ApiObject>(classes: readonly T[], key: string): T | undefined {
  const marked = classes.filter((c) => c.metadata.annotations?.[key] === "true");
  marked.sort((a, b) => (b.metadata.creationTimestamp ?? "").localeCompare(a.metadata.creationTimestamp ?? "") || (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));
  return marked[0];
}
