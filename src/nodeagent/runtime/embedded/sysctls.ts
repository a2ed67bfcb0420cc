// A pod's sysctls (securityContext.sysctls, CRI's linux.sysctls): written
// under /proc/sys from inside the container's own namespaces, where they
// change only that container's IPC and the pod's network namespace. A sysctl
// no namespace of the pod holds would change the whole node: refused, as are
// net.* ones of a pod on the host's network.

/** Upstream's namespaced sysctls: IPC (kernel.sem, kernel.shm*, kernel.msg*, fs.mqueue.*) and network (net.*). */
export function sysctlNamespace(name: string): "ipc" | "net" | undefined {
  const dotted = name.replace(/\//g, ".");
  if (dotted === "kernel.sem" || /^kernel\.(shm|msg)/.test(dotted) || dotted.startsWith("fs.mqueue.")) return "ipc";
  if (dotted.startsWith("net.")) return "net";
  return undefined;
}

/**
 * The file of a sysctl under /proc/sys: "." separates the levels, unless the
 * name uses "/" (then a "." is part of a level, as in net/ipv4/conf/eth0.1/rp_filter).
 */
export function sysctlFile(name: string): string {
  return `/proc/sys/${name.includes("/") ? name : name.replace(/\./g, "/")}`;
}

/** Why the sysctls cannot be applied to a container, or undefined. */
export function sysctlRefusal(sysctls: Record<string, string>, hostNetwork: boolean): string | undefined {
  for (const name of Object.keys(sysctls)) {
    if (name === "" || name.split(/[./]/).some((p) => p === "" || p === "..")) return `sysctl ${JSON.stringify(name)} is not a valid name`;
    const ns = sysctlNamespace(name);
    if (ns === undefined) return `sysctl ${JSON.stringify(name)} is not namespaced: it would change the node`;
    if (ns === "net" && hostNetwork) return `sysctl ${JSON.stringify(name)} is a network sysctl and the pod uses the host's network`;
  }
  return undefined;
}
