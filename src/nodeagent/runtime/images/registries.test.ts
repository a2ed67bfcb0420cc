// The registries file (k3s's registries.yaml shape): what it accepts, each
// mistake it refuses with the file and field named, the order pulls try
// mirrors in, and pulls through mirrors of Debian's docker-registry on
// loopback (plain HTTP, and HTTPS with ca_file or insecure_skip_verify).

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, get as httpGet } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { selfSignedServingCert } from "../../../component/pki.js";
import { buildBusyboxImage, busyboxSkipReason } from "../../../../test/support/busybox-image.js";
import { registrySkipReason, startRegistry, type Registry } from "../../../../test/support/registry.js";
import { containerdHostsFiles, loadRegistriesConfig, loadRegistriesFile, parseRegistriesConfig, pullEndpoints, RegistriesConfigError } from "./registries.js";
import { pullImage } from "./registry.js";
import { ImageStore } from "./store.js";

const FILE = "/etc/orch/registries.yaml";

describe("the registries file", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "orch-registries-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("a full file: mirrors with endpoints (the API root /v2 added), rewrites, a wildcard; auth and TLS per host", () => {
    writeFileSync(join(dir, "ca.pem"), "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n");
    const config = parseRegistriesConfig([
      "mirrors:",
      "  docker.io:",
      "    endpoint:",
      "      - http://127.0.0.1:5000",
      "      - https://mirror.example/prefix/",
      "      - mirror2.example:8443",
      "    rewrite:",
      '      "^library/(.*)": "mirrored/$1"',
      '  "*":',
      "    endpoint: [https://catch-all.example]",
      "configs:",
      "  mirror.example:",
      "    auth: {username: u, password: p}",
      "    tls: {ca_file: ca.pem, insecure_skip_verify: false}",
      "  mirror2.example:8443:",
      `    auth: {auth: ${Buffer.from("a:b").toString("base64")}}`,
      "    tls: {insecure_skip_verify: true}",
      "  quay.io:",
      "    auth: {identity_token: tok}",
    ].join("\n"), join(dir, "registries.yaml"));
    const docker = config.mirrors.get("docker.io")!;
    assert.deepEqual(docker.endpoints.map((u) => u.href), ["http://127.0.0.1:5000/v2", "https://mirror.example/prefix/v2", "https://mirror2.example:8443/v2"]);
    assert.equal(docker.rewrite.length, 1);
    assert.deepEqual(config.mirrors.get("*")!.endpoints.map((u) => u.href), ["https://catch-all.example/v2"]);
    const m = config.configs.get("mirror.example")!;
    assert.deepEqual(m.auth, { username: "u", password: "p" });
    assert.equal(m.tls?.caFile, join(dir, "ca.pem"), "a relative ca_file is read beside the registries file");
    assert.match(m.tls?.ca ?? "", /BEGIN CERTIFICATE/);
    assert.equal(config.configs.get("mirror2.example:8443")!.tls?.insecureSkipVerify, true);
    assert.deepEqual(config.configs.get("quay.io")!.auth, { identityToken: "tok" });
    // An empty file, and one with only comments: no mirrors, nothing configured.
    for (const empty of ["", "# nothing yet\n"]) {
      const c = parseRegistriesConfig(empty, FILE);
      assert.equal(c.mirrors.size + c.configs.size, 0);
    }
  });

  test("each mistake is refused, naming the file and the field", () => {
    const cases: Array<[string, RegExp]> = [
      ["mirrors: [a]", /^\/etc\/orch\/registries.yaml: mirrors: must be a mapping of registry host to mirror, not a list$/],
      ["mirror: {}", /registries.yaml: mirror: unknown field \(known: mirrors, configs\)$/],
      ["mirrors:\n  docker.io:\n    endpoints: [http://x]", /mirrors\["docker.io"\].endpoints: unknown field \(known: endpoint, rewrite\)/],
      ["mirrors:\n  docker.io:\n    endpoint: http://x", /mirrors\["docker.io"\].endpoint: must be a list of URLs, not string "http:\/\/x"/],
      ["mirrors:\n  docker.io:\n    endpoint: [ftp://x]", /mirrors\["docker.io"\].endpoint\[0\]: "ftp:\/\/x": the scheme must be http or https, not ftp/],
      ["mirrors:\n  docker.io:\n    endpoint: [\"http://\"]", /mirrors\["docker.io"\].endpoint\[0\]: "http:\/\/" is not a valid URL/],
      ["mirrors:\n  docker.io:\n    endpoint: [\"http://u:p@x\"]", /endpoint\[0\]: "http:\/\/u:p@x": an endpoint has no query, fragment or user \(credentials go in configs\)/],
      ["mirrors:\n  docker.io:\n    endpoint: [3]", /endpoint\[0\]: must be a URL string, not number 3/],
      ["mirrors:\n  https://docker.io:\n    endpoint: []", /mirrors\["https:\/\/docker.io"\]: "https:\/\/docker.io" is not a registry host \(host or host:port, without a scheme or path\)/],
      ["mirrors:\n  docker.io: [http://x]", /mirrors\["docker.io"\]: must be a mapping with "endpoint", not a list/],
      ["mirrors:\n  docker.io:\n    rewrite: {\"(\": x}", /mirrors\["docker.io"\].rewrite\["\("\]: not a valid regular expression/],
      ["mirrors:\n  docker.io:\n    rewrite: {a: 1}", /rewrite\["a"\]: the replacement must be a string, not number 1/],
      ["configs:\n  r.example:\n    auth: {user: u}", /configs\["r.example"\].auth.user: unknown field \(known: username, password, auth, identity_token\)/],
      ["configs:\n  r.example:\n    auth: {password: p}", /configs\["r.example"\].auth.password: a password needs a username/],
      ["configs:\n  r.example:\n    auth: {}", /configs\["r.example"\].auth: names no credentials/],
      ["configs:\n  r.example:\n    auth: {auth: not-base64!}", /configs\["r.example"\].auth.auth: must be base64 of "username:password"/],
      ["configs:\n  r.example:\n    auth: {username: 5}", /configs\["r.example"\].auth.username: must be a string, not number 5/],
      ["configs:\n  r.example:\n    tls: {insecure_skip_verify: yes please}", /tls.insecure_skip_verify: must be true or false, not string "yes please"/],
      ["configs:\n  r.example:\n    tls: {ca_file: /nonexistent/ca.pem}", /configs\["r.example"\].tls.ca_file: cannot read \/nonexistent\/ca.pem: ENOENT/],
      ["configs:\n  r.example:\n    tls: {ca_file: /etc/hostname}", /tls.ca_file: \/etc\/hostname holds no PEM block/],
      ["configs:\n  r.example:\n    tls: {verify: false}", /configs\["r.example"\].tls.verify: unknown field/],
      ["configs:\n  r.example:\n    token: x", /configs\["r.example"\].token: unknown field \(known: auth, tls\)/],
      ["configs:\n  r.example/path: {}", /configs\["r.example\/path"\]: "r.example\/path" is not a registry host/],
      ["configs: 3", /registries.yaml: configs: must be a mapping of registry host to its settings, not number 3/],
      ["- a\n- b", /registries.yaml: must be a mapping with "mirrors" and "configs", not a list/],
      ["mirrors: {a: 1\n", /registries.yaml: not valid YAML: /],
      ["mirrors:\n  docker.io: {}\n  docker.io: {}", /registries.yaml: not valid YAML: .*[Uu]nique/],
    ];
    for (const [text, want] of cases) {
      assert.throws(() => parseRegistriesConfig(text, FILE), (err: unknown) => err instanceof RegistriesConfigError && want.test(err.message) && err.file === FILE, text);
    }
    writeFileSync(join(dir, "cert.pem"), "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n");
    assert.throws(() => parseRegistriesConfig(`configs:\n  r.example:\n    tls: {cert_file: ${join(dir, "cert.pem")}}`, FILE), /tls.key_file: cert_file and key_file go together/);
  });

  test("loading: a named file must exist; the default location is used only when present", () => {
    assert.throws(() => loadRegistriesConfig(join(dir, "absent.yaml")), /absent.yaml: cannot read the registries file: ENOENT/);
    assert.throws(() => loadRegistriesFile(join(dir, "absent.yaml"), join(dir, "default.yaml")), RegistriesConfigError);
    assert.equal(loadRegistriesFile("", join(dir, "default.yaml")), undefined);
    writeFileSync(join(dir, "default.yaml"), "mirrors:\n  docker.io:\n    endpoint: [http://127.0.0.1:5000]\n");
    assert.equal(loadRegistriesFile("", join(dir, "default.yaml"))?.mirrors.get("docker.io")?.endpoints.length, 1);
  });

  test("pull order: the registry's mirrors (rewritten), else the wildcard's, then the registry itself (docker.io's is registry-1.docker.io)", () => {
    const config = parseRegistriesConfig([
      "mirrors:",
      "  docker.io:",
      "    endpoint: [http://127.0.0.1:5000, https://mirror.example/prefix]",
      '    rewrite: {"^library/(.*)": "mirrored/$1"}',
      '  "*":',
      "    endpoint: [https://catch-all.example]",
      "  own.example:",
      "    endpoint: [https://own.example]",
      "configs:",
      "  127.0.0.1:5000: {auth: {username: m, password: p}}",
      "  quay.io: {auth: {username: q, password: p}}",
    ].join("\n"), FILE);
    const order = (registry: string, repository: string, insecure?: string[]) => pullEndpoints(config, registry, repository, insecure).map((e) => `${e.mirror ? "mirror" : "registry"} ${e.base}/${e.repository}`);
    assert.deepEqual(order("docker.io", "library/node"), [
      "mirror http://127.0.0.1:5000/v2/mirrored/node",
      "mirror https://mirror.example/prefix/v2/mirrored/node",
      "registry https://registry-1.docker.io/v2/library/node",
    ]);
    assert.deepEqual(order("docker.io", "team/app"), ["mirror http://127.0.0.1:5000/v2/team/app", "mirror https://mirror.example/prefix/v2/team/app", "registry https://registry-1.docker.io/v2/team/app"]);
    assert.deepEqual(order("quay.io", "org/img"), ["mirror https://catch-all.example/v2/org/img", "registry https://quay.io/v2/org/img"]);
    assert.deepEqual(order("own.example", "a"), ["registry https://own.example/v2/a"], "a mirror that is the registry's own address is tried once");
    assert.deepEqual(order("127.0.0.1:6000", "a").at(-1), "registry http://127.0.0.1:6000/v2/a", "loopback registries over plain HTTP");
    assert.deepEqual(order("r.internal:5000", "a", ["r.internal:5000"]).at(-1), "registry http://r.internal:5000/v2/a", "--insecure-registry");
    assert.equal(pullEndpoints(config, "docker.io", "library/node")[0]!.config?.auth?.username, "m", "a mirror's settings are its own host's");
    assert.equal(pullEndpoints(config, "quay.io", "x").at(-1)!.config?.auth?.username, "q");
  });

  test("containerd's hosts.toml files: the mirrors in order as [host] entries, prefixes with override_path, TLS settings", () => {
    writeFileSync(join(dir, "ca.pem"), "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n");
    const config = parseRegistriesConfig([
      "mirrors:",
      "  docker.io:",
      "    endpoint: [http://127.0.0.1:5000, https://mirror.example/prefix]",
      "configs:",
      `  mirror.example: {tls: {ca_file: ${join(dir, "ca.pem")}}}`,
      "  private.example: {tls: {insecure_skip_verify: true}}",
    ].join("\n"), FILE);
    const files = containerdHostsFiles(config);
    assert.deepEqual([...files.keys()].sort(), ["docker.io/hosts.toml", "private.example/hosts.toml"]);
    assert.equal(files.get("docker.io/hosts.toml"), [
      `# Written by orch from ${FILE}.`,
      'server = "https://registry-1.docker.io"',
      "",
      '[host."http://127.0.0.1:5000"]',
      '  capabilities = ["pull", "resolve"]',
      "",
      '[host."https://mirror.example/prefix/v2"]',
      '  capabilities = ["pull", "resolve"]',
      "  override_path = true",
      `  ca = ${JSON.stringify(join(dir, "ca.pem"))}`,
      "",
    ].join("\n"));
    assert.equal(files.get("private.example/hosts.toml"), `# Written by orch from ${FILE}.\nserver = "https://private.example"\nskip_verify = true\n`);
  });
});

describe("pulls through mirrors (Debian's docker-registry on loopback)", { skip: registrySkipReason() ?? busyboxSkipReason() ?? false }, () => {
  let dir: string;
  let mirror: Registry;
  let origin: Registry;
  let imageId: string;
  let nodeDigest: string;
  let ca: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "orch-mirrors-"));
    const serving = await selfSignedServingCert();
    ca = serving.ca;
    writeFileSync(join(dir, "ca.pem"), ca);
    [mirror, origin] = await Promise.all([startRegistry({ tls: { cert: serving.cert, key: serving.key } }), startRegistry()]);
    const file = join(dir, "image.tar");
    imageId = await buildBusyboxImage({ file, files: { "from.txt": "the mirror\n" } });
    nodeDigest = await mirror.push(file, "library/node", "20-slim");
    await mirror.push(file, "mirrored/busybox", "latest");
    await origin.push(file, "team/app", "v1");
  });
  after(async () => {
    await mirror?.stop();
    await origin?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const pull = async (ref: string, yaml: string) => {
    const store = new ImageStore(mkdtempSync(join(dir, "store-")));
    const log: string[] = [];
    const image = await pullImage(store, ref, { registries: parseRegistriesConfig(yaml, join(dir, "registries.yaml")), log: (l) => log.push(l) });
    return { image, log, store };
  };

  test("docker.io/library/node:20-slim comes from the first mirror that answers, after one that is down; docker.io is never asked", async () => {
    const { image, log, store } = await pull("node:20-slim", `mirrors:\n  docker.io:\n    endpoint: ["http://127.0.0.1:1", "http://${mirror.host}"]\n`);
    assert.equal(image.id, imageId);
    assert.deepEqual(image.repoTags, ["docker.io/library/node:20-slim"]);
    assert.match(image.repoDigests[0] ?? "", /^docker\.io\/library\/node@sha256:[0-9a-f]{64}$/, "the image keeps the name it was asked by");
    assert.equal(readFileSync(join(store.rootfs(image.id), "from.txt"), "utf8"), "the mirror\n");
    assert.equal(log.length, 1);
    assert.match(log[0]!, /^pulling node:20-slim: mirror http:\/\/127.0.0.1:1\/v2 failed: failed to do request: GET http:\/\/127.0.0.1:1\/v2\/library\/node\/manifests\/20-slim: connect ECONNREFUSED/);
  });

  test("by digest through a mirror: the manifest's bytes are checked against the digest asked for", async () => {
    const { image } = await pull(`node@${nodeDigest}`, `mirrors:\n  docker.io:\n    endpoint: ["http://${mirror.host}"]\n`);
    assert.equal(image.id, imageId);
    assert.deepEqual(image.repoDigests, [`docker.io/library/node@${nodeDigest}`]);
    await assert.rejects(pull(`node@sha256:${"0".repeat(64)}`, `mirrors:\n  docker.io:\n    endpoint: ["http://${mirror.host}"]\n`), /manifests\/sha256:0{64}: 404 Not Found/);
  });

  test("a mirror without the image: the registry itself serves it", async () => {
    const { image, log } = await pull(`${origin.host}/team/app:v1`, `mirrors:\n  "${origin.host}":\n    endpoint: ["http://${mirror.host}"]\n`);
    assert.equal(image.id, imageId);
    assert.deepEqual(image.repoTags, [`${origin.host}/team/app:v1`]);
    assert.match(log.join("\n"), new RegExp(`mirror http://${mirror.host}/v2 failed: GET http://${mirror.host}/v2/team/app/manifests/v1: 404 Not Found`));
  });

  test("rewrite: busybox is fetched as mirrored/busybox from the mirror, and stored as docker.io/library/busybox", async () => {
    const { image } = await pull("busybox", `mirrors:\n  docker.io:\n    endpoint: ["http://${mirror.host}"]\n    rewrite: {"^library/(.*)": "mirrored/$1"}\n`);
    assert.deepEqual(image.repoTags, ["docker.io/library/busybox:latest"]);
  });

  test("the wildcard mirror serves registries without their own entry", async () => {
    const { image } = await pull("example.invalid/library/node:20-slim", `mirrors:\n  "*":\n    endpoint: ["http://${mirror.host}"]\n`);
    assert.equal(image.id, imageId);
  });

  test("HTTPS mirrors: trusted through ca_file or insecure_skip_verify, refused otherwise", async () => {
    const endpoint = `mirrors:\n  docker.io:\n    endpoint: ["https://${mirror.tlsHost}"]\n`;
    const withCa = await pull("node:20-slim", `${endpoint}configs:\n  "${mirror.tlsHost}":\n    tls: {ca_file: ca.pem}\n`);
    assert.equal(withCa.image.id, imageId);
    const skip = await pull("node:20-slim", `${endpoint}configs:\n  "${mirror.tlsHost}":\n    tls: {insecure_skip_verify: true}\n`);
    assert.equal(skip.image.id, imageId);
    // Untrusted: the mirror fails on its certificate and docker.io, unreachable here or not, is tried after it.
    const store = new ImageStore(mkdtempSync(join(dir, "store-")));
    const log: string[] = [];
    await assert.rejects(pullImage(store, "node:20-slim", { registries: parseRegistriesConfig(endpoint, FILE), log: (l) => log.push(l), signal: AbortSignal.timeout(20_000) }));
    assert.match(log[0] ?? "", new RegExp(`mirror https://${mirror.tlsHost}/v2 failed: failed to do request: GET https://${mirror.tlsHost}/v2/library/node/manifests/20-slim: (self[- ]signed|unable to verify|.*certificate)`));
  });

  test("credentials: a mirror gets its own host's auth from configs (Basic), not the pod's; without them it is refused", async () => {
    // A gate in front of the mirror that asks for Basic credentials, as a private registry does.
    const want = `Basic ${Buffer.from("puller:s3cret").toString("base64")}`;
    const seen: string[] = [];
    const gate = createServer((req, res) => {
      seen.push(req.headers.authorization ?? "");
      if (req.headers.authorization !== want) {
        res.writeHead(401, { "www-authenticate": 'Basic realm="mirror"', "content-type": "application/json" }).end('{"errors":[{"code":"UNAUTHORIZED"}]}');
        return;
      }
      const upstream = httpGet(`http://${mirror.host}${req.url}`, { headers: { accept: req.headers.accept ?? "*/*" } }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      upstream.once("error", () => res.writeHead(502).end());
    });
    await new Promise<void>((r) => gate.listen(0, "127.0.0.1", r));
    const host = `127.0.0.1:${(gate.address() as AddressInfo).port}`;
    try {
      const endpoint = `mirrors:\n  docker.io:\n    endpoint: ["http://${host}"]\n`;
      const store = new ImageStore(mkdtempSync(join(dir, "store-")));
      const config = parseRegistriesConfig(`${endpoint}configs:\n  "${host}":\n    auth: {username: puller, password: s3cret}\n`, FILE);
      const image = await pullImage(store, "node:20-slim", { registries: config, credentials: { username: "pod", password: "other" } });
      assert.equal(image.id, imageId);
      assert.ok(seen.includes(want), "the mirror got the file's credentials");
      assert.ok(!seen.includes(`Basic ${Buffer.from("pod:other").toString("base64")}`), "the pod's credentials are for docker.io, not the mirror");
      const log: string[] = [];
      await assert.rejects(pullImage(new ImageStore(mkdtempSync(join(dir, "store-"))), "node:20-slim", { registries: parseRegistriesConfig(endpoint, FILE), log: (l) => log.push(l), signal: AbortSignal.timeout(20_000) }));
      assert.match(log[0] ?? "", new RegExp(`mirror http://${host}/v2 failed: the registry asks for a user name and password`));
    } finally {
      await new Promise((r) => gate.close(r));
    }
  });

  test("every endpoint failing: the error names each one's failure in order", async () => {
    await assert.rejects(
      pull(`${origin.host}/team/absent:v1`, `mirrors:\n  "${origin.host}":\n    endpoint: ["http://127.0.0.1:1", "http://${mirror.host}"]\n`),
      (err: Error) => {
        const parts = err.message.split("; ");
        assert.equal(parts.length, 3, err.message);
        assert.match(parts[0]!, /GET http:\/\/127.0.0.1:1\/v2\/team\/absent\/manifests\/v1: connect ECONNREFUSED/);
        assert.match(parts[1]!, new RegExp(`GET http://${mirror.host}/v2/team/absent/manifests/v1: 404 Not Found`));
        assert.match(parts[2]!, new RegExp(`GET http://${origin.host}/v2/team/absent/manifests/v1: 404 Not Found`));
        return true;
      },
    );
  });
});
