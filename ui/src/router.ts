// Hash routes (the server serves one page at /ui/): #/, #/pods, #/list/GROUP/RESOURCE,
// #/object/GROUP/RESOURCE/NAMESPACE/NAME ("core" for the core group, "-" for no namespace).

import { useEffect, useState } from "preact/hooks";

export type Route =
  | { view: "overview" | "namespaces" | "workloads" | "pods" | "services" | "kinds" }
  | { view: "list"; group: string; resource: string }
  | { view: "object"; group: string; resource: string; namespace: string | undefined; name: string; tab: string | undefined };

export function parse(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").map((p) => decodeURIComponent(p));
  const g = (s: string | undefined) => (s === "core" ? "" : s ?? "");
  switch (parts[0]) {
    case "namespaces":
    case "workloads":
    case "pods":
    case "services":
    case "kinds":
      return { view: parts[0] };
    case "list":
      return { view: "list", group: g(parts[1]), resource: parts[2] ?? "" };
    case "object":
      return { view: "object", group: g(parts[1]), resource: parts[2] ?? "", namespace: parts[3] === "-" ? undefined : parts[3], name: parts[4] ?? "", tab: parts[5] };
    default:
      return { view: "overview" };
  }
}

const seg = (s: string) => encodeURIComponent(s);

export function listHref(group: string, resource: string): string {
  return `#/list/${seg(group || "core")}/${seg(resource)}`;
}

export function objectHref(group: string, resource: string, namespace: string | undefined, name: string, tab?: string): string {
  return `#/object/${seg(group || "core")}/${seg(resource)}/${seg(namespace ?? "-")}/${seg(name)}${tab ? `/${tab}` : ""}`;
}

export function useRoute(): Route {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return parse(hash);
}
