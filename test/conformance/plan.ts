// How the runner splits the selected specs, and which kubectl it may use.
//
// Specs marked [Serial] or [Disruptive] change the cluster for everyone (a
// NoExecute taint on the node evicts every pod without a toleration; a
// restarted component fails the calls of others): ginkgo's parallel mode runs
// them alone after the parallel ones, and so does the runner. The others go
// round-robin into the shards.

/** The parallel shards (round-robin) and, alone after them, the serial specs. */
export function planShards(specs: readonly string[], shards: number): { parallel: string[][]; serial: string[] } {
  const serial = specs.filter((s) => /\[(Serial|Disruptive)\]/.test(s));
  const rest = specs.filter((s) => !serial.includes(s));
  const parallel: string[][] = Array.from({ length: Math.min(Math.max(1, shards), rest.length) }, () => []);
  rest.forEach((name, i) => parallel[i % parallel.length]!.push(name));
  return { parallel, serial };
}

/**
 * Whether `kubectl version --client` output carries the version variables a
 * release build sets: the suite's "Kubectl version should check is all data is
 * printed" matches the client's line against this (a build without them says
 * GitCommit:"$Format:%H$").
 */
export function hasReleaseVersion(versionOutput: string, item = "Client Version: "): boolean {
  return new RegExp(`${item}version.Info\\{Major:"\\d", Minor:"\\d+\\+?", GitVersion:"v\\d\\.\\d+\\.[\\d\\w\\-\\.\\+]+", GitCommit:"[0-9a-f]+"`).test(versionOutput);
}
