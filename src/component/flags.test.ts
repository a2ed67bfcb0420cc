import { test } from "node:test";
import assert from "node:assert/strict";
import { FlagError, FlagSet, flag, type FlagErrorCode } from "./flags.js";

const decls = {
  name: flag.string({ description: "a string", default: "x" }),
  on: flag.bool({ description: "a boolean, default false" }),
  yes: flag.bool({ description: "a boolean, default true", default: true }),
  count: flag.int({ description: "an int", default: 1, min: 0, max: 10 }),
  ratio: flag.float({ description: "a float" }),
  timeout: flag.duration({ description: "a duration", default: "5m" }),
  servers: flag.strings({ description: "a list", default: ["d"] }),
  labels: flag.map({ description: "a map" }),
  backend: flag.oneOf({ description: "a choice", choices: ["lmdb", "etcd"], default: "lmdb" }),
  v: flag.int({ description: "verbosity", short: "v" }),
  secret: flag.string({ description: "a token", sensitive: true }),
  old: flag.string({ description: "an old flag", deprecated: "use --name instead" }),
};
const set = new FlagSet({ command: "orch test", description: "A test command.", flags: decls });

function parse(argv: string[]) {
  const outcome = set.parse(argv);
  assert.equal(outcome.help, false, `${argv.join(" ")} asked for help`);
  if (outcome.help) throw new Error("unreachable");
  return outcome.flags;
}

test("every syntax parses to the declared type", () => {
  const cases: Array<[string[], Partial<Record<keyof typeof decls, unknown>>]> = [
    [[], { name: "x", on: false, yes: true, count: 1, ratio: 0, timeout: 300_000, servers: ["d"], labels: {}, backend: "lmdb", v: 0 }],
    [["--name=a"], { name: "a" }],
    [["--name", "a"], { name: "a" }],
    [["--name="], { name: "" }],
    [["--name=a=b"], { name: "a=b" }],
    [["--name", "--on"], { name: "--on", on: false }], // a value-taking flag consumes the next word, as pflag does
    [["--on"], { on: true }],
    [["--on=true"], { on: true }],
    [["--on=1"], { on: true }],
    [["--yes=false"], { yes: false }],
    [["--yes=F"], { yes: false }],
    [["--count=7"], { count: 7 }],
    [["--count", "+3"], { count: 3 }],
    [["--ratio=0.25"], { ratio: 0.25 }],
    [["--ratio", "1e3"], { ratio: 1000 }],
    [["--timeout=10s"], { timeout: 10_000 }],
    [["--timeout", "1h30m"], { timeout: 5_400_000 }],
    [["--timeout=250ms"], { timeout: 250 }],
    [["--timeout=0"], { timeout: 0 }],
    [["--servers=a,b", "--servers", "c"], { servers: ["a", "b", "c"] }],
    [["--servers", "a, b ,,c"], { servers: ["a", "b", "c"] }],
    [["--servers="], { servers: [] }],
    [["--labels=a=1,b=2", "--labels", "b=3"], { labels: { a: "1", b: "3" } }],
    [["--labels=k="], { labels: { k: "" } }],
    [["--backend=etcd"], { backend: "etcd" }],
    [["-v=2"], { v: 2 }],
    [["-v", "2"], { v: 2 }],
    [["-v2"], { v: 2 }],
    [["--v=3"], { v: 3 }],
    [["--v", "4", "-v=5"], { v: 5 }], // scalars: the last occurrence wins
  ];
  for (const [argv, want] of cases) {
    const flags = parse(argv);
    for (const [name, value] of Object.entries(want)) {
      assert.deepEqual(flags.values[name as keyof typeof decls], value, `${argv.join(" ")}: --${name}`);
    }
  }
});

test("usage errors are FlagErrors (exit 2) naming the flag and value", () => {
  const cases: Array<[string[], FlagErrorCode, RegExp]> = [
    [["--bogus"], "unknown-flag", /^unknown flag: --bogus$/],
    [["--bogus=1"], "unknown-flag", /^unknown flag: --bogus$/],
    [["-x"], "unknown-flag", /unknown shorthand flag: 'x' in -x/],
    [["-name=x"], "unknown-flag", /unknown shorthand flag: 'n' in -name=x/],
    [["---x"], "bad-syntax", /bad flag syntax: ---x/],
    [["--count=abc"], "invalid-value", /invalid argument "abc" for "--count" flag: not an integer/],
    [["--count=1.5"], "invalid-value", /invalid argument "1.5" for "--count" flag/],
    [["--count=99"], "invalid-value", /"99" for "--count" flag: must be at most 10/],
    [["--count=-1"], "invalid-value", /must be at least 0/],
    [["--ratio=fast"], "invalid-value", /"fast" for "--ratio" flag: not a number/],
    [["--timeout=5"], "invalid-value", /invalid argument "5" for "--timeout" flag/],
    [["--timeout=5x"], "invalid-value", /invalid argument "5x" for "--timeout" flag: unknown unit "x"/],
    [["--on=maybe"], "invalid-value", /"maybe" for "--on" flag: not a boolean/],
    [["--backend=sqlite"], "invalid-value", /"sqlite" for "--backend" flag: must be one of lmdb, etcd/],
    [["--labels=novalue"], "invalid-value", /"novalue" is not in key=value form/],
    [["-v=x"], "invalid-value", /invalid argument "x" for "-v, --v" flag/],
    [["--name"], "missing-value", /^flag needs an argument: --name$/],
    [["-v"], "missing-value", /flag needs an argument: 'v' in -v/],
    [["stray"], "unexpected-argument", /unexpected argument "stray": orch test takes no arguments/],
    [["--on", "false"], "unexpected-argument", /unexpected argument "false"/], // booleans never take the next word
    [["--", "--name=x"], "unexpected-argument", /unexpected argument "--name=x"/],
  ];
  for (const [argv, code, message] of cases) {
    assert.throws(
      () => set.parse(argv),
      (err: unknown) => {
        assert.ok(err instanceof FlagError, `${argv.join(" ")}: not a FlagError`);
        assert.equal(err.code, code, argv.join(" "));
        assert.equal(err.exitCode, 2);
        assert.match(err.message, message);
        return true;
      },
    );
  }
});

test("the error for a bad value keeps the flag and the value", () => {
  assert.throws(() => set.parse(["--timeout", "soon"]), (err: unknown) => {
    assert.ok(err instanceof FlagError);
    assert.equal(err.flag, "--timeout");
    assert.equal(err.value, "soon");
    return true;
  });
});

test("--help and -h ask for help; --help=false does not", () => {
  for (const argv of [["--help"], ["-h"], ["--name=a", "--help"], ["--help=true"]]) {
    assert.equal(set.parse(argv).help, true, argv.join(" "));
  }
  assert.equal(set.parse(["--help=false"]).help, false);
  // As in pflag, an error before --help wins.
  assert.throws(() => set.parse(["--bogus", "--help"]), FlagError);
});

test("usage is generated from the declarations", () => {
  const text = set.usage();
  assert.match(text, /^A test command\.\n\nUsage:\n {2}orch test \[flags\]\n/);
  assert.match(text, /^ {6}--name string +a string \(default "x"\)$/m);
  assert.match(text, /^ {6}--on +a boolean, default false$/m);
  assert.match(text, /^ {6}--yes +a boolean, default true \(default true\)$/m);
  assert.match(text, /^ {6}--count int +an int \(default 1\)$/m);
  assert.match(text, /^ {6}--timeout duration +a duration \(default 5m0s\)$/m);
  assert.match(text, /^ {6}--servers strings +a list \(default \[d\]\)$/m);
  assert.match(text, /^ {6}--labels mapStringString +a map$/m);
  assert.match(text, /^ {6}--backend string +a choice \(one of lmdb, etcd\) \(default "lmdb"\)$/m);
  assert.match(text, /^ {2}-v, --v int +verbosity$/m);
  assert.match(text, /^ {2}-h, --help +help for orch test$/m);
  assert.doesNotMatch(text, /--old/, "deprecated flags are hidden");
});

test("usage groups flags by section in declaration order and wraps long text", () => {
  const grouped = new FlagSet({
    command: "orch g",
    flags: {
      zeta: flag.string({ section: "First", description: "declared first" }),
      alpha: flag.string({ section: "Second", description: "word ".repeat(40).trim() }),
      beta: flag.string({ section: "First", description: "also first" }),
    },
  });
  const text = grouped.usage({ width: 80 });
  assert.ok(text.indexOf("First:") < text.indexOf("Second:"));
  assert.ok(text.indexOf("--beta") < text.indexOf("--zeta"), "sorted within a section");
  for (const line of text.split("\n")) assert.ok(line.length <= 80, `too long: ${line}`);
});

test("the parsed result lists each flag with value, default and whether it was set", () => {
  const flags = parse(["--name=x", "--count=3", "--secret=hunter2", "--servers=a", "--servers=b"]);
  const entries = flags.list();
  assert.deepEqual(entries.map((e) => e.name), Object.keys(decls).sort());
  const byName = new Map(entries.map((e) => [e.name, e]));
  assert.deepEqual(
    { ...byName.get("name") },
    { name: "name", kind: "string", description: "a string", value: "x", default: "x", set: true, sensitive: false, text: "x", defaultText: "x" },
    "set explicitly to its default still counts as set",
  );
  assert.equal(byName.get("count")?.set, true);
  assert.equal(byName.get("count")?.text, "3");
  assert.equal(byName.get("ratio")?.set, false);
  assert.equal(byName.get("timeout")?.text, "5m0s");
  assert.equal(byName.get("servers")?.text, "[a,b]");
  assert.equal(byName.get("servers")?.defaultText, "[d]");
  assert.equal(byName.get("secret")?.sensitive, true);
  assert.equal(flags.isSet("name"), true);
  assert.equal(flags.isSet("on"), false);
  assert.equal(flags.get("count"), 3);
});

test("maps list sorted, and the parsed values are immutable", () => {
  const flags = parse(["--labels=b=2,a=1"]);
  assert.equal(flags.list().find((e) => e.name === "labels")?.text, "a=1,b=2");
  assert.throws(() => {
    (flags.values as Record<string, unknown>).name = "changed";
  }, TypeError);
  assert.throws(() => {
    (flags.get("servers") as string[]).push("x");
  }, TypeError);
});

test("a deprecated flag still works and warns once", () => {
  const flags = parse(["--old=a", "--old=b"]);
  assert.equal(flags.get("old"), "b");
  assert.deepEqual(flags.warnings, ["Flag --old has been deprecated, use --name instead"]);
});

test("positional arguments are accepted only when declared", () => {
  const withArgs = new FlagSet({
    command: "orch p",
    flags: { on: flag.bool({ description: "b" }) },
    positionals: { name: "file", description: "files", min: 1, max: 2 },
  });
  const outcome = withArgs.parse(["a", "--on", "--", "-b"]);
  assert.ok(!outcome.help);
  assert.deepEqual(outcome.flags.args, ["a", "-b"]);
  assert.equal(outcome.flags.get("on"), true);
  assert.throws(() => withArgs.parse([]), /needs at least 1 file/);
  assert.throws(() => withArgs.parse(["a", "b", "c"]), /unexpected argument "c"/);
  assert.match(withArgs.usage(), /orch p \[flags\] file\.\.\./);
});

test("bad declarations fail when the flag set is built", () => {
  assert.throws(() => new FlagSet({ command: "c", flags: { Bad_Name: flag.bool({ description: "" }) } }), /bad flag name/);
  assert.throws(() => new FlagSet({ command: "c", flags: { help: flag.bool({ description: "" }) } }), /bad flag name/);
  assert.throws(() => new FlagSet({ command: "c", flags: { a: flag.bool({ description: "", short: "h" }) } }), /shorthand/);
  assert.throws(
    () => new FlagSet({ command: "c", flags: { a: flag.bool({ description: "", short: "x" }), b: flag.bool({ description: "", short: "x" }) } }),
    /duplicate shorthand/,
  );
  assert.throws(() => flag.duration({ description: "", default: "forever" }), /duration/);
});
