import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  FeatureGateError,
  FeatureGates,
  defaultFeatureGates,
  featureGatesFlag,
  parseFeatureGates,
  type FeatureGateErrorCode,
  type FeatureRegistry,
} from "./feature-gates.js";
import { knownFeatures, type FeatureName } from "./features.js";
import { FlagError, FlagSet } from "./flags.js";
import { packageRoot } from "./package-root.js";

const names = Object.keys(knownFeatures) as FeatureName[];

test("every gate starts at its registered default", () => {
  const gates = defaultFeatureGates();
  for (const name of names) assert.equal(gates.enabled(name), knownFeatures[name].default, name);
  assert.deepEqual(gates.list().map((g) => g.name), [...names].sort());
  assert.ok(gates.list().every((g) => !g.set));
  assert.equal(gates.toString(), "");
  assert.deepEqual(gates.warnings, []);
});

test("the gates the brief and the seeds name have their stage and default", () => {
  const want: Record<string, [string, boolean]> = {
    ListFromCacheSnapshot: ["BETA", true],
    ShardedListAndWatch: ["ALPHA", false],
    CBORServingAndStorage: ["ALPHA", false],
    APIResponseCompression: ["BETA", true],
    AllowUnsafeMalformedObjectDeletion: ["ALPHA", false],
    WatchList: ["BETA", true],
    ConsistentListFromCache: ["BETA", true],
    ComponentSLIs: ["GA", true],
    ComponentStatusz: ["BETA", true],
    ComponentFlagz: ["BETA", true],
    NativeHistograms: ["ALPHA", false],
    NodeAgentPSI: ["GA", true],
    PodAndContainerStatsFromCRI: ["ALPHA", false],
    ContainerCheckpoint: ["BETA", true],
    InPlacePodVerticalScaling: ["GA", true],
    NodeDeclaredFeatures: ["BETA", true],
    PodsAPI: ["ALPHA", false],
  };
  const registry: FeatureRegistry = knownFeatures;
  for (const [name, [stage, dflt]] of Object.entries(want)) {
    assert.equal(registry[name]?.stage, stage, name);
    assert.equal(registry[name]?.default, dflt, name);
  }
});

test("the table keeps its own rules: alpha gates default off, GA gates locked on", () => {
  const registry: FeatureRegistry = knownFeatures;
  for (const [name, spec] of Object.entries(registry)) {
    assert.match(name, /^[A-Z][A-Za-z0-9]+$/, name);
    assert.ok(spec.description.length > 0, `${name} needs a description`);
    if (spec.stage === "ALPHA") assert.equal(spec.default, false, `${name}: alpha gates are off by default`);
    if (spec.stage === "GA") assert.deepEqual([spec.default, spec.lockToDefault], [true, true], `${name}: GA gates are locked on`);
  }
});

test("--feature-gates settings override defaults", () => {
  const gates = parseFeatureGates("NativeHistograms=true, APIResponseCompression=false");
  assert.equal(gates.enabled("NativeHistograms"), true);
  assert.equal(gates.enabled("APIResponseCompression"), false);
  assert.equal(gates.enabled("WatchList"), true);
  assert.equal(gates.toString(), "APIResponseCompression=false,NativeHistograms=true");
  const state = gates.list().find((g) => g.name === "NativeHistograms");
  assert.deepEqual(
    { ...state },
    { name: "NativeHistograms", stage: "ALPHA", default: false, lockToDefault: false, enabled: true, set: true, description: knownFeatures.NativeHistograms.description },
  );
  // Go's strconv.ParseBool spellings, and plain booleans from config files.
  assert.equal(parseFeatureGates("PodsAPI=1").enabled("PodsAPI"), true);
  assert.equal(parseFeatureGates("WatchList=F").enabled("WatchList"), false);
  assert.equal(parseFeatureGates({ PodsAPI: true, WatchList: false }).enabled("WatchList"), false);
});

test("unknown gates, non-boolean values and locked gates are errors", () => {
  const cases: Array<[string, FeatureGateErrorCode, string, string]> = [
    ["Nope=true", "unknown-gate", "Nope", "unrecognized feature gate: Nope"],
    ["WatchList=true,nativehistograms=true", "unknown-gate", "nativehistograms", "unrecognized feature gate: nativehistograms"],
    ["NativeHistograms=maybe", "invalid-value", "NativeHistograms", "invalid value of NativeHistograms=maybe, err: not a boolean (true or false)"],
    ["NativeHistograms=", "invalid-value", "NativeHistograms", "invalid value of NativeHistograms=, err: not a boolean (true or false)"],
    ["NativeHistograms", "invalid-value", "NativeHistograms", "missing bool value for NativeHistograms"],
    ["NodeAgentPSI=false", "locked", "NodeAgentPSI", "cannot set feature gate NodeAgentPSI to false, feature is locked to true"],
    ["ComponentSLIs=false", "locked", "ComponentSLIs", "cannot set feature gate ComponentSLIs to false, feature is locked to true"],
  ];
  for (const [input, code, gate, message] of cases) {
    assert.throws(
      () => parseFeatureGates(input),
      (err: unknown) => {
        assert.ok(err instanceof FeatureGateError, input);
        assert.deepEqual([err.code, err.gate, err.message], [code, gate, message], input);
        return true;
      },
    );
  }
});

test("setting a locked GA gate to its value is allowed, with upstream's warning", () => {
  const gates = parseFeatureGates("NodeAgentPSI=true");
  assert.equal(gates.enabled("NodeAgentPSI"), true);
  assert.deepEqual(gates.warnings, ["Setting GA feature gate NodeAgentPSI=true. It will be removed in a future release."]);
});

test("AllAlpha and AllBeta switch every unset gate of their stage, never locked ones", () => {
  const gates = parseFeatureGates("AllAlpha=true,PodsAPI=false,AllBeta=false,WatchList=true");
  for (const g of gates.list()) {
    if (g.name === "PodsAPI") assert.equal(g.enabled, false, "explicit settings win");
    else if (g.name === "WatchList") assert.equal(g.enabled, true, "explicit settings win");
    else if (g.name === "AllAlpha") assert.equal(g.enabled, true);
    else if (g.name === "AllBeta") assert.equal(g.enabled, false);
    else if (g.stage === "ALPHA") assert.equal(g.enabled, true, g.name);
    else if (g.stage === "BETA") assert.equal(g.enabled, false, g.name);
    else assert.equal(g.enabled, g.default, g.name);
  }
});

test("a component's gate set cannot be changed", () => {
  const gates = defaultFeatureGates();
  assert.throws(() => {
    (gates.list()[0] as { enabled: boolean }).enabled = true;
  }, TypeError);
  assert.throws(() => {
    (gates.warnings as string[]).push("x");
  }, TypeError);
  assert.equal("set" in gates, false);
  assert.throws(() => gates.enabled("NotAGate" as FeatureName), /not registered/);
});

test("any registry works, deprecated gates warn", () => {
  const registry = {
    Old: { stage: "DEPRECATED", default: true, description: "going away" },
    New: { stage: "ALPHA", default: false, description: "coming" },
  } as const satisfies FeatureRegistry;
  const gates = FeatureGates.from({ registry, settings: "Old=false,New=true" });
  assert.equal(gates.enabled("Old"), false);
  assert.equal(gates.enabled("New"), true);
  assert.deepEqual(gates.warnings, ["Setting deprecated feature gate Old=false. It will be removed in a future release."]);
  assert.throws(() => FeatureGates.from({ registry, settings: "WatchList=true" }), /unrecognized feature gate: WatchList/);
});

test("the --feature-gates flag rejects bad settings at parse time and merges repeats", () => {
  const set = new FlagSet({ command: "orch t", flags: { "feature-gates": featureGatesFlag() } });
  const cases: Array<[string, RegExp]> = [
    ["Bogus=true", /invalid argument "Bogus=true" for "--feature-gates" flag: unrecognized feature gate: Bogus/],
    ["WatchList=yes", /invalid argument "WatchList=yes" for "--feature-gates" flag: invalid value of WatchList=yes/],
    ["NodeSwap=false", /cannot set feature gate NodeSwap to false, feature is locked to true/],
  ];
  for (const [value, message] of cases) {
    assert.throws(() => set.parse([`--feature-gates=${value}`]), (err: unknown) => err instanceof FlagError && err.exitCode === 2 && message.test(err.message));
  }
  const outcome = set.parse(["--feature-gates=WatchList=false,PodsAPI=true", "--feature-gates", "WatchList=true"]);
  assert.ok(!outcome.help);
  const gates = parseFeatureGates(outcome.flags.get("feature-gates"));
  assert.equal(gates.enabled("WatchList"), true);
  assert.equal(gates.enabled("PodsAPI"), true);
  assert.equal(outcome.flags.list()[0]?.text, "PodsAPI=true,WatchList=true");
});

test("--help lists the gates one can still change, as upstream does", () => {
  const usage = new FlagSet({ command: "orch t", flags: { "feature-gates": featureGatesFlag() } }).usage();
  assert.match(usage, /--feature-gates mapStringBool/);
  assert.match(usage, /NativeHistograms=true\|false \(ALPHA - default=false\)/);
  assert.match(usage, /WatchList=true\|false \(BETA - default=true\)/);
  assert.doesNotMatch(usage, /NodeAgentPSI/, "GA gates are not offered");
});

test("docs/cli.md lists every registered gate with its stage, default and lock, and no others", () => {
  const docs = readFileSync(join(packageRoot(), "docs", "cli.md"), "utf8");
  const rows = new Map<string, string[]>();
  for (const m of docs.matchAll(/^\| `([A-Za-z0-9]+)` \| (\w+) \| (\w+) \| (\w*) \|/gm)) {
    rows.set(m[1] as string, [m[2] as string, m[3] as string, m[4] as string]);
  }
  const registry: FeatureRegistry = knownFeatures;
  for (const [name, spec] of Object.entries(registry)) {
    assert.deepEqual(
      rows.get(name),
      [spec.stage, String(spec.default), spec.lockToDefault ? "locked" : ""],
      `docs/cli.md: the gate table row for ${name} is missing or wrong`,
    );
  }
  for (const name of rows.keys()) assert.ok(name in registry, `docs/cli.md lists ${name}, which is not registered`);
});
