// Starts a component's HTTPS base (src/component/component-server.ts) from its
// parsed command line: --bind-address with --secure-port (or the node agent's
// --port), the TLS flags, --kubeconfig to check scrapers' tokens, and the
// metrics flags. What `orch controller-manager`, `proxy`,
// `cloud-controller-manager`, `scheduler` and `nodeagent` call first.

import { loadKubeconfig, type ClientConfig } from "../client/kubeconfig.js";
import { apiServerCheck } from "../client/api-server-check.js";
import {
  componentRegistry, readTlsFiles, startComponentServer,
  type AccessPolicy, type CertDirOptions, type ExtraHandler, type FlagDecls, type HealthCheck, type ParsedFlags, type RunningComponentServer, type UpgradeHandler,
} from "../component/index.js";
import { readFileSync } from "node:fs";
import { watchStalls } from "../component/stall-watch.js";
import type { RunContext } from "./command.js";

export interface ServeComponentOptions {
  /** "orch-scheduler". */
  readonly name: string;
  readonly flags: ParsedFlags<FlagDecls>;
  readonly context: RunContext;
  /** Where to listen when the component does not use --bind-address/--secure-port (the proxy's --metrics-bind-address). */
  readonly listen?: { readonly host: string; readonly port: number };
  readonly liveChecks?: readonly HealthCheck[];
  readonly readyChecks?: readonly HealthCheck[];
  readonly extra?: Readonly<Record<string, ExtraHandler>>;
  readonly upgrades?: Readonly<Record<string, UpgradeHandler>>;
  /** Without --tls-cert-file: where the self-signed pair is kept and reused (the node agent's --cert-dir). */
  readonly certDir?: CertDirOptions;
  /** Who else gets past the certificate check (the node agent's authentication and authorization settings). */
  readonly access?: AccessPolicy;
  /** The client CA when --client-ca-file is not given (the node agent's authentication.x509.clientCAFile). */
  readonly clientCaFile?: string;
}

export async function serveComponent(options: ServeComponentOptions): Promise<RunningComponentServer & { apiServer: ClientConfig | undefined }> {
  const values = options.flags.values as Readonly<Record<string, unknown>>;
  const str = (name: string): string => (typeof values[name] === "string" ? (values[name] as string) : "");
  const kubeconfig = str("kubeconfig");
  const apiServer = kubeconfig === "" ? undefined : loadKubeconfig(kubeconfig);
  const port = options.listen?.port ?? (typeof values["secure-port"] === "number" ? values["secure-port"] : values["port"]);
  if (typeof port !== "number") throw new Error(`${options.name}: no --secure-port or --port to serve on`);
  const clientCaFile = str("client-ca-file") || (options.clientCaFile ?? "");
  const tls = readTlsFiles(str("tls-cert-file"), str("tls-private-key-file"));
  const metrics = componentRegistry({
    featureGates: options.context.featureGates,
    showHiddenMetricsForVersion: str("show-hidden-metrics-for-version"),
    disabledMetrics: Array.isArray(values["disabled-metrics"]) ? (values["disabled-metrics"] as string[]) : [],
  });
  watchStalls({ log: (line) => options.context.stderr.write(`${options.context.command}: ${line}\n`), signal: options.context.signal });
  const server = await startComponentServer({
    name: options.name,
    featureGates: options.context.featureGates,
    bindAddress: options.listen?.host ?? (str("bind-address") || "0.0.0.0"),
    port,
    metrics,
    flags: options.flags,
    log: (line) => options.context.stderr.write(`${line}\n`),
    signal: options.context.signal,
    ...(tls ? { tls } : {}),
    ...(clientCaFile ? { clientCa: readFileSync(clientCaFile, "utf8") } : {}),
    ...(apiServer ? { apiServer: apiServerCheck(apiServer) } : {}),
    ...(options.liveChecks ? { liveChecks: options.liveChecks } : {}),
    ...(options.readyChecks ? { readyChecks: options.readyChecks } : {}),
    ...(options.extra ? { extra: options.extra } : {}),
    ...(options.upgrades ? { upgrades: options.upgrades } : {}),
    ...(options.certDir ? { certDir: options.certDir } : {}),
    ...(options.access ? { access: options.access } : {}),
  });
  return Object.assign(server, { apiServer });
}
