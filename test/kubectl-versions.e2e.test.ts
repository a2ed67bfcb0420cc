// End to end: every kubectl from 1.27 to 1.33 (`kubectl.1.NN` beside the
// resolved kubectl) runs the same script against the real `orch server` on
// both naming profiles (default, and --api-group-suffix=k8s.io): apply (create,
// then a change), apply --server-side with a conflict and --force-conflicts,
// diff (exit 1 with a diff), create with an unknown field (the server
// validates: kubectl found fieldValidation in OpenAPI), edit (KUBE_EDITOR is a sed), explain (a pod
// field and a deployment field), get -w (sees a change), describe, scale,
// rollout status/restart/undo and delete. 1.27 and 1.28 read /openapi/v2 as
// Protobuf for apply, diff, edit and explain; later ones read /openapi/v3.
// One server per profile, the kubectls in sequence, each on objects of its
// own. No node agent runs: the test marks pods Running and Ready, as a node
// agent would.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kubectl, kubectlPath, kubectlSkipReason } from "./support/kubectl.js";
import { deploymentYaml } from "./support/manifests.js";
import { playNodeAgent, type PlayedAgent } from "./support/play-node-agent.js";
import { startOrch, type OrchProcess } from "./support/orch-process.js";

const VERSIONS = ["1.27", "1.28", "1.29", "1.30", "1.31", "1.32", "1.33"];

const deployment = (name: string, replicas: number, image: string) => deploymentYaml(name, replicas, image, "        ports:\n        - containerPort: 80\n");

const configMap = (name: string, value: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
data:
  key: ${value}
`;

for (const profile of [{ name: "default", args: [] as string[] }, { name: "k8s.io", args: ["--api-group-suffix=k8s.io"] }]) {
  describe(`kubectl 1.27–1.33 against orch server (${profile.name} names)`, { skip: kubectlSkipReason() ?? false }, () => {
    let orch: OrchProcess;
    let agent: PlayedAgent;
    const dir = mkdtempSync(join(tmpdir(), "orch-e2e-kubectl-versions-"));
    const file = (name: string, content: string) => {
      writeFileSync(join(dir, name), content);
      return join(dir, name);
    };
    before(async () => {
      orch = await startOrch("server", ["--disable-agent", "--disable-scheduler", ...profile.args]);
      agent = playNodeAgent(orch.kubeconfig);
    });
    after(async () => {
      await agent?.stop();
      await orch?.stop();
    });

    for (const version of VERSIONS) {
      test(`kubectl ${version}`, { skip: kubectlPath(version) === undefined ? `kubectl.${version} not installed` : false }, async () => {
        const k = new Kubectl(orch.kubeconfig, version);
        const step = async (what: string, args: string[], options: { env?: Record<string, string>; timeoutMs?: number; code?: number } = {}) => {
          const r = await k.run(args, { ...options });
          assert.equal(r.code, options.code ?? 0, `${version} ${what}: kubectl ${args.join(" ")}\n${r.stderr}${r.stdout}`);
          return r.stdout + r.stderr;
        };
        const tag = version.replace(".", "-");
        const web = `web-${tag}`;
        const cm = `conf-${tag}`;

        // version: the server reports API release 1.33 with orch's version as build metadata
        // (docs/apiserver.md, "Version"); kubectl warns of the skew only beyond one minor release.
        const v = await k.run(["version", "-o", "json"]);
        assert.equal(v.code, 0, v.stderr);
        const server = JSON.parse(v.stdout).serverVersion;
        assert.deepEqual([server.major, server.minor], ["1", "33"]);
        assert.match(server.gitVersion, /^v1\.33\.0\+orch\.\d+\.\d+\.\d+/);
        const skewed = Number(version.split(".")[1]) < 32;
        assert.equal(/exceeds the supported minor version skew of \+\/-1/.test(v.stderr), skewed, `${version} skew warning: ${v.stderr}`);

        // apply: create, then a change (client-side: strategic merge by the published patch keys).
        const dPath = file(`${web}.yaml`, deployment(web, 1, "nginx:1.27"));
        assert.match(await step("apply (create)", ["apply", "-f", dPath]), new RegExp(`deployment.apps/${web} created`));
        writeFileSync(dPath, deployment(web, 2, "nginx:1.28"));
        assert.match(await step("apply (change)", ["apply", "-f", dPath]), new RegExp(`deployment.apps/${web} configured`));
        const applied = JSON.parse(await step("get", ["get", "deployment", web, "-o", "json"]));
        assert.equal(applied.spec.replicas, 2);
        assert.equal(applied.spec.template.spec.containers[0].image, "nginx:1.28");
        assert.equal(applied.spec.template.spec.containers[0].ports[0].containerPort, 80, "the merge kept the port");

        // apply --server-side, a conflicting manager, then --force-conflicts.
        const cPath = file(`${cm}.yaml`, configMap(cm, "a"));
        assert.match(await step("apply --server-side", ["apply", "--server-side", "-f", cPath]), new RegExp(`configmap/${cm} serverside-applied`));
        writeFileSync(cPath, configMap(cm, "b"));
        const conflict = await step("apply --server-side (conflict)", ["apply", "--server-side", "--field-manager=other", "-f", cPath], { code: 1 });
        assert.match(conflict, /conflict/i);
        assert.match(await step("apply --force-conflicts", ["apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", cPath]), /serverside-applied/);
        assert.equal(JSON.parse(await step("get", ["get", "configmap", cm, "-o", "json"])).data.key, "b");

        // Field validation left to the server (kubectl found fieldValidation on the kind's patch operation): an unknown field is refused.
        const bad = await step("create -f (unknown field)", ["create", "-f", file(`bad-${tag}.yaml`, `${configMap(`bad-${tag}`, "x")}bogus: 1\n`)], { code: 1 });
        assert.match(bad, /strict decoding error: unknown field "bogus"/);

        // diff: exit 1 and the change shown.
        writeFileSync(dPath, deployment(web, 2, "nginx:1.29"));
        const diff = await step("diff", ["diff", "-f", dPath], { code: 1 });
        assert.match(diff, /-\s+- image: nginx:1\.28|-\s+image: nginx:1\.28/);
        assert.match(diff, /\+\s+- image: nginx:1\.29|\+\s+image: nginx:1\.29/);

        // edit through a sed editor.
        assert.match(await step("edit", ["edit", "configmap", cm], { env: { KUBE_EDITOR: "sed -i s/key:\\ b/key:\\ edited/" } }), new RegExp(`configmap/${cm} edited`));
        assert.equal(JSON.parse(await step("get", ["get", "configmap", cm, "-o", "json"])).data.key, "edited");

        // explain.
        const explainPod = await step("explain pods.spec.containers", ["explain", "pods.spec.containers"]);
        assert.match(explainPod, /KIND:\s+Pod/);
        assert.match(explainPod, /FIELDS:/);
        assert.match(explainPod, /image\s/);
        const explainDeploy = await step("explain deployment.spec.replicas", ["explain", "deployment.spec.replicas"]);
        assert.match(explainDeploy, /KIND:\s+Deployment/);
        assert.match(explainDeploy, /replicas/);

        // get -w sees a change, then is killed.
        const watch = k.spawn(["get", "configmap", cm, "-w", "--output-watch-events"]);
        try {
          await until(`${version} get -w lists`, async () => watch.output().includes(cm));
          await step("label", ["label", "configmap", cm, "seen=yes"]);
          await until(`${version} get -w sees the change`, async () => /MODIFIED/.test(watch.output()));
        } finally {
          watch.child.kill();
          await watch.exited;
        }

        // describe, scale, rollout.
        const described = await step("describe", ["describe", "deployment", web]);
        assert.match(described, new RegExp(`Name:\\s+${web}`));
        assert.match(described, /Replicas:/);
        assert.match(await step("scale", ["scale", "deployment", web, "--replicas=1"]), new RegExp(`deployment.apps/${web} scaled`));
        // (One status at the end: it waits for the last rollout; fewer kubectl runs keep the matrix fast.)
        assert.match(await step("rollout restart", ["rollout", "restart", `deployment/${web}`]), new RegExp(`deployment.apps/${web} restarted`));
        assert.match(await step("rollout undo", ["rollout", "undo", `deployment/${web}`]), new RegExp(`deployment.apps/${web} rolled back`));
        assert.match(await step("rollout status", ["rollout", "status", `deployment/${web}`, "--timeout=30s"], { timeoutMs: 40_000 }), /successfully rolled out/);

        // delete.
        assert.match(await step("delete", ["delete", "-f", dPath]), new RegExp(`deployment.apps "${web}" deleted`));
        assert.match(await step("delete", ["delete", "configmap", cm]), new RegExp(`configmap "${cm}" deleted`));
      });
    }
  });
}

async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
