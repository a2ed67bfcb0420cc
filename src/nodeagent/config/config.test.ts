import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, defaultConfig, loadConfig } from "./index.js";

const HEAD = "apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeAgentConfiguration\n";

function setup(main: string, dropIns: Record<string, string> = {}): { file: string; dir: string } {
  const root = mkdtempSync(join(tmpdir(), "nodeagent-config-"));
  const file = join(root, "config.yaml");
  writeFileSync(file, HEAD + main);
  const dir = join(root, "conf.d");
  mkdirSync(dir);
  for (const [name, text] of Object.entries(dropIns)) writeFileSync(join(dir, name), text.startsWith("{") ? text : HEAD + text);
  return { file, dir };
}

const merging: { name: string; main: string; dropIns: Record<string, string>; check: (c: ReturnType<typeof loadConfig>) => void }[] = [
  {
    name: "rule 1: scalars are overridden, the later drop-in wins",
    main: "maxPods: 50\nfailSwapOn: false\n",
    dropIns: { "20-b.conf": "maxPods: 70\n", "10-a.conf": "maxPods: 60\n" },
    check: (c) => assert.deepEqual([c.maxPods, c.failSwapOn], [70, false]),
  },
  {
    name: "rule 2: embedded structs merge field by field",
    main: "authorization:\n  mode: AlwaysAllow\n  webhook:\n    cacheAuthorizedTTL: 1m\n",
    dropIns: { "10.conf": "authorization:\n  webhook:\n    cacheUnauthorizedTTL: 5s\n" },
    check: (c) => assert.deepEqual(c.authorization, { mode: "AlwaysAllow", webhook: { cacheAuthorizedTTL: 60_000, cacheUnauthorizedTTL: 5_000 } }),
  },
  {
    name: "rule 3: lists are replaced whole",
    main: "clusterDNS: [10.0.0.10, 10.0.0.11]\n",
    dropIns: { "10.conf": "clusterDNS: [10.0.0.12]\n" },
    check: (c) => assert.deepEqual(c.clusterDNS, ["10.0.0.12"]),
  },
  {
    name: "rule 4: maps merge by key",
    main: "featureGates:\n  A: true\n  B: true\n",
    dropIns: { "10.conf": "featureGates:\n  B: false\n  C: true\n" },
    check: (c) => assert.deepEqual(c.featureGates, { A: true, B: false, C: true }),
  },
  {
    name: "rule 5: a map of lists replaces the list under a key, keeps other keys",
    main: "staticPodURLHeader:\n  X: [a, b]\n  Y: [c]\n",
    dropIns: { "10.conf": "staticPodURLHeader:\n  X: [z]\n" },
    check: (c) => assert.deepEqual(c.staticPodURLHeader, { X: ["z"], Y: ["c"] }),
  },
  {
    name: "JSON drop-ins, durations, and files that are not drop-ins are ignored",
    main: "nodeStatusReportFrequency: 1m\n",
    dropIns: {
      "10.json": '{"apiVersion":"nodeagent.config.orch.io/v1beta1","kind":"NodeAgentConfiguration","nodeStatusReportFrequency":"30s"}',
      "README.txt": "maxPods: nonsense\n",
    },
    check: (c) => assert.equal(c.nodeStatusReportFrequency, 30_000),
  },
];

for (const row of merging) {
  test(`config merging: ${row.name}`, () => {
    const { file, dir } = setup(row.main, row.dropIns);
    row.check(loadConfig({ file, dir }));
  });
}

test("config: defaults as upstream with the seed's paths", () => {
  const c = loadConfig();
  assert.deepEqual(
    [c.staticPodPath, c.maxPods, c.failSwapOn, c.memorySwap.swapBehavior, c.nodeStatusReportFrequency, c.nodeLeaseDurationSeconds, c.port],
    ["/etc/orch/manifests", 110, true, "NoSwap", 300_000, 40, 10250],
  );
  assert.deepEqual(c, defaultConfig());
});

test("config: flags override every file; feature gates from flags merge by key", () => {
  const { file, dir } = setup("maxPods: 5\nfeatureGates:\n  A: true\n", { "10.conf": "maxPods: 6\nport: 1234\n" });
  const c = loadConfig({ file, dir, flags: { maxPods: 7, featureGates: { B: true }, port: undefined } });
  assert.deepEqual([c.maxPods, c.port, c.featureGates], [7, 1234, { A: true, B: true }]);
});

const errors: { name: string; text: string; field: string; message: RegExp }[] = [
  { name: "unknown field", text: HEAD + "maxPod: 3\n", field: "maxPod", message: /unknown field/ },
  { name: "unknown nested field", text: HEAD + "authorization:\n  webhook:\n    ttl: 1s\n", field: "authorization.webhook.ttl", message: /unknown field/ },
  { name: "wrong type", text: HEAD + "maxPods: many\n", field: "maxPods", message: /must be an integer/ },
  { name: "bad enum", text: HEAD + "memorySwap:\n  swapBehavior: UnlimitedSwap\n", field: "memorySwap.swapBehavior", message: /unsupported value "UnlimitedSwap"/ },
  { name: "bad duration", text: HEAD + "nodeStatusReportFrequency: soon\n", field: "nodeStatusReportFrequency", message: /invalid duration/ },
  { name: "bad map value", text: HEAD + "featureGates:\n  A: yes-please\n", field: 'featureGates["A"]', message: /true or false/ },
  { name: "wrong kind", text: "apiVersion: nodeagent.config.orch.io/v1beta1\nkind: Other\n", field: "kind", message: /NodeAgentConfiguration/ },
  { name: "duplicate key", text: HEAD + "maxPods: 1\nmaxPods: 2\n", field: "", message: /not valid YAML/ },
  { name: "log size not a quantity", text: HEAD + "containerLogMaxSize: ten megs\n", field: "containerLogMaxSize", message: /must be a quantity such as "10Mi", got "ten megs"/ },
  { name: "one log file", text: HEAD + "containerLogMaxFiles: 1\n", field: "containerLogMaxFiles", message: /must be at least 2, got 1/ },
  { name: "log monitor interval under 3s", text: HEAD + "containerLogMonitorInterval: 1s\n", field: "containerLogMonitorInterval", message: /must be at least 3s/ },
];

test("config: container log rotation fields, defaults as upstream's and set from a file", () => {
  const d = defaultConfig();
  assert.deepEqual([d.containerLogMaxSize, d.containerLogMaxFiles, d.containerLogMonitorInterval], ["10Mi", 5, 10_000]);
  const { file } = setup("containerLogMaxSize: 1Ki\ncontainerLogMaxFiles: 3\ncontainerLogMonitorInterval: 3s\n");
  const c = loadConfig({ file });
  assert.deepEqual([c.containerLogMaxSize, c.containerLogMaxFiles, c.containerLogMonitorInterval], ["1Ki", 3, 3000]);
});

for (const row of errors) {
  test(`config errors name the file and field: ${row.name}`, () => {
    const { file, dir } = setup("", { "50-bad.conf": row.text.slice(HEAD.length) });
    // The main file is fine; the drop-in is to blame.
    if (!row.text.startsWith(HEAD)) writeFileSync(join(dir, "50-bad.conf"), row.text);
    assert.throws(
      () => loadConfig({ file, dir }),
      (err: unknown) => err instanceof ConfigError && err.file === join(dir, "50-bad.conf") && err.field === row.field && row.message.test(err.message) && err.message.includes("50-bad.conf"),
    );
  });
}
