// A path as the container sees it, resolved on the host before its root is
// entered: mount targets are made under the container's root folder while
// the setup script still runs in the host's view, so a symlink on the way
// (/var/run -> /run in most images and hosts) must be followed inside the
// container's root, not the host's (as runc's securejoin does). Otherwise the
// mount lands on a host path the container never sees.

import { lstatSync, readlinkSync } from "node:fs";
import { join } from "node:path";

const MAX_LINKS = 40;

/** `path` with its symlinks followed within `root` (never above it); parts that do not exist yet are kept as written. */
export function resolveInRoot(root: string, path: string): string {
  const done: string[] = [];
  let rest = path.split("/").filter((p) => p !== "" && p !== ".");
  let links = 0;
  while (rest.length > 0) {
    const part = rest.shift()!;
    if (part === "..") {
      done.pop();
      continue;
    }
    let target: string | undefined;
    try {
      const host = join(root, ...done, part);
      if (lstatSync(host).isSymbolicLink()) target = readlinkSync(host);
    } catch {
      // Missing: made by the mount's mkdir.
    }
    if (target === undefined) {
      done.push(part);
      continue;
    }
    if (++links > MAX_LINKS) throw new Error(`too many symbolic links resolving ${path} in the container's root`);
    if (target.startsWith("/")) done.length = 0;
    rest = [...target.split("/").filter((p) => p !== "" && p !== "."), ...rest];
  }
  return "/" + done.join("/");
}
