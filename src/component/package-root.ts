// Finds the orch package's root directory (where package.json lives) from any
// module, whether it runs from src/ or from the compiled dist/src/.

import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let cached: string | undefined;

/** The directory holding orch's package.json; throws if there is none above this module. */
export function packageRoot(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, "package.json");
    if (existsSync(candidate) && (JSON.parse(readFileSync(candidate, "utf8")) as { name?: unknown }).name === "orch") {
      cached = dir;
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error("orch: cannot find the package root (no package.json named orch)");
    dir = parent;
  }
}
