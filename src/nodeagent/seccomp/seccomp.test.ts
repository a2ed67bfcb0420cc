import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Pod } from "../../api/core/types.js";
import { SeccompError, containerSeccomp, podSeccomp } from "./seccomp.js";

const root = mkdtempSync(join(tmpdir(), "nodeagent-seccomp-"));
writeFileSync(join(root, "good.json"), JSON.stringify({ defaultAction: "SCMP_ACT_ERRNO", defaultErrnoRet: 1, syscalls: [{ names: ["read", "write"], action: "SCMP_ACT_ALLOW" }] }));
writeFileSync(join(root, "bad-action.json"), JSON.stringify({ defaultAction: "SCMP_ACT_MAYBE" }));
writeFileSync(join(root, "bad-json.json"), "{");
const options = { profileRoot: root };

const pod = (podProfile?: object, containerSc?: Record<string, unknown>): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p" },
  spec: { securityContext: podProfile ? { seccompProfile: podProfile } : {}, containers: [{ name: "c", securityContext: containerSc ?? null }] },
});
const seccomp = (p: Pod) => containerSeccomp(p, p.spec!.containers![0]!, options);

test("seccomp: container overrides pod, unset inherits, default Unconfined, privileged always Unconfined", () => {
  assert.deepEqual(seccomp(pod()), { profileType: "Unconfined", localhostRef: "" });
  assert.deepEqual(seccomp(pod({ type: "RuntimeDefault" })), { profileType: "RuntimeDefault", localhostRef: "" });
  assert.deepEqual(seccomp(pod({ type: "RuntimeDefault" }, { seccompProfile: { type: "Localhost", localhostProfile: "good.json" } })), { profileType: "Localhost", localhostRef: join(root, "good.json") });
  assert.deepEqual(seccomp(pod({ type: "RuntimeDefault" }, { privileged: true, seccompProfile: { type: "Localhost", localhostProfile: "good.json" } })), { profileType: "Unconfined", localhostRef: "" });
  assert.deepEqual(containerSeccomp(pod(), pod().spec!.containers![0]!, { ...options, seccompDefault: true }), { profileType: "RuntimeDefault", localhostRef: "" });
  assert.deepEqual(podSeccomp(pod({ type: "RuntimeDefault" }), options), { profileType: "RuntimeDefault", localhostRef: "" });
});

test("seccomp: Localhost files missing, not JSON, with unknown actions or escaping the root are CreateContainerError", () => {
  for (const [profile, message] of [
    ["missing.json", /no such file or directory/],
    ["bad-json.json", /not valid JSON/],
    ["bad-action.json", /defaultAction: unknown action "SCMP_ACT_MAYBE"/],
    ["../etc/passwd", /must be a relative path/],
  ] as const) {
    assert.throws(() => seccomp(pod(undefined, { seccompProfile: { type: "Localhost", localhostProfile: profile } })), (e: unknown) => e instanceof SeccompError && e.reason === "CreateContainerError" && message.test((e as Error).message));
  }
});
