// Upstream's kube-apiserver as a benchmark column: started on an etcd the
// caller gives it, with a throwaway serving certificate, a static token, a
// service-account key pair and AlwaysAllow, on a free loopback port. It looks
// like an OrchProcess (url, pid, kubeconfig) so the same HTTP/2 bench client
// drives both. The binary comes from $KUBE_APISERVER_BIN or --upstream=PATH;
// upstreamBinary() says why the column is skipped when there is none.

import { spawn } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:http2";
import { selfSignedServingCert } from "../../src/component/pki.js";
import type { OrchProcess } from "../../test/support/orch-process.js";

/** The kube-apiserver binary (`--upstream=PATH`, else $KUBE_APISERVER_BIN), or the reason there is none. */
export function upstreamBinary(argv: string[]): { path: string } | { skip: string } {
  return binaryFrom(argv, "--upstream", "KUBE_APISERVER_BIN", "kube-apiserver");
}

/** An upstream binary named by `flag=PATH` in `argv`, else by $`env`, or the reason there is none. */
export function binaryFrom(argv: string[], flag: string, env: string, name: string): { path: string } | { skip: string } {
  const given = argv.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);
  const path = given ?? process.env[env];
  if (path === undefined || path === "") return { skip: `no upstream ${name} (set ${env} or ${flag}=PATH)` };
  try {
    accessSync(path, constants.X_OK);
    return { path };
  } catch {
    return { skip: `upstream ${name} ${path} is not an executable file` };
  }
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

async function ready(url: string, ca: string, token: string): Promise<boolean> {
  return new Promise((resolve) => {
    const session = connect(url, { ca });
    session.on("error", () => resolve(false));
    const s = session.request({ ":path": "/readyz", authorization: `Bearer ${token}` });
    s.on("response", (h) => {
      resolve(h[":status"] === 200);
      session.close();
    });
    s.on("error", () => resolve(false));
    s.end();
  });
}

/** Starts `binary` on `etcdServers`; resolves once /readyz answers 200 (60 s at most). */
export async function startUpstream(binary: string, etcdServers: string[]): Promise<OrchProcess> {
  const dir = mkdtempSync(join(tmpdir(), "bench-upstream-"));
  const serving = await selfSignedServingCert();
  const sa = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const token = randomBytes(16).toString("hex");
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text, { mode: 0o600 });
    return join(dir, name);
  };
  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  const args = [
    `--etcd-servers=${etcdServers.join(",")}`,
    `--secure-port=${port}`,
    "--bind-address=127.0.0.1",
    `--tls-cert-file=${file("serving.crt", serving.cert)}`,
    `--tls-private-key-file=${file("serving.key", serving.key)}`,
    `--token-auth-file=${file("tokens.csv", `${token},admin,admin,"system:masters"\n`)}`,
    "--authorization-mode=AlwaysAllow",
    "--service-account-issuer=https://kubernetes.default.svc",
    `--service-account-key-file=${file("sa.pub", sa.publicKey.export({ type: "spki", format: "pem" }).toString())}`,
    `--service-account-signing-key-file=${file("sa.key", sa.privateKey.export({ type: "pkcs8", format: "pem" }).toString())}`,
    "--service-cluster-ip-range=10.96.0.0/16",
    // No controller manager makes the namespace's default service account; orch's bench pods name none either.
    "--disable-admission-plugins=ServiceAccount",
    "--logtostderr=true",
    "--v=0",
  ];
  const child = spawn(binary, args, { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr!.on("data", (d: Buffer) => (log = (log + d.toString()).slice(-8000)));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  let done = false;
  void exited.then(() => (done = true));
  const deadline = Date.now() + 60_000;
  while (!(await ready(url, serving.ca, token))) {
    if (done || Date.now() > deadline) {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`upstream kube-apiserver did not become ready:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const kubeconfig = file(
    "admin.kubeconfig",
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      `- name: upstream`,
      `  cluster:`,
      `    server: ${url}`,
      `    certificate-authority-data: ${Buffer.from(serving.ca).toString("base64")}`,
      "users:",
      "- name: admin",
      "  user:",
      `    token: ${token}`,
      "contexts:",
      "- name: upstream",
      "  context: {cluster: upstream, user: admin}",
      "current-context: upstream",
      "",
    ].join("\n"),
  );
  return {
    url,
    pid: child.pid!,
    dataDir: dir,
    kubeconfig,
    output: () => log,
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (!done) {
        child.kill(signal);
        const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
