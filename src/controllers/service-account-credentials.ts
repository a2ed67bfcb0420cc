// --use-service-account-credentials (upstream's SAControllerClientBuilder):
// each controller talks to the API server as its own service account,
// `<system namespace>/<account>` of api/rbac/controller-roles.ts, so the
// bootstrap role system:controller:<account> bounds what it may do. The
// manager's own credentials make the account when it is missing and ask for
// its token (TokenRequest, one hour), renewed at 80 % of its life; the
// shared informers and discovery keep the manager's credentials, as upstream's.

import { controllerAccount } from "../api/rbac/index.js";
import { SERVICE_ACCOUNTS } from "../api/resource-refs.js";
import type { ServiceAccount } from "../api/core/types.js";
import type { TokenRequest } from "../api/authentication/token-request.js";
import { isApiError, type ApiObject } from "../machinery/index.js";
import { componentName, type Naming } from "../machinery/naming.js";
import { sleep } from "../machinery/until.js";
import { RestClient, type ClientConfig } from "../client/index.js";
import type { MetricsRegistry } from "../component/metrics/index.js";
import { errorMessage } from "./controller.js";

/** The lifetime asked for (upstream's DynamicControllerClientBuilder default). */
export const CONTROLLER_TOKEN_SECONDS = 3600;
const RETRY_MS = 2000;

export interface ServiceAccountClients {
  /** The client `controller` runs with: its account's, once it holds a token (waits); the manager's when the controller has no account. */
  clientFor(controller: string): Promise<RestClient>;
  close(): void;
}

export interface ServiceAccountClientOptions {
  root: RestClient;
  naming: Naming;
  signal: AbortSignal;
  log: (line: string) => void;
  metrics?: MetricsRegistry;
  /** The clock for renewals (tests); default Date.now. */
  now?: () => number;
}

export function serviceAccountClients(options: ServiceAccountClientOptions): ServiceAccountClients {
  const made: RestClient[] = [];
  const byAccount = new Map<string, Promise<RestClient>>();
  return {
    clientFor(controller) {
      const account = controllerAccount(options.naming, controller);
      if (account === undefined) return Promise.resolve(options.root);
      let client = byAccount.get(account);
      if (client === undefined) {
        client = accountClient(options, account).then((c) => (made.push(c), c));
        byAccount.set(account, client);
      }
      return client;
    },
    close() {
      for (const c of made) c.close();
    },
  };
}

/** A client holding `account`'s token, kept fresh until the signal fires. */
async function accountClient(o: ServiceAccountClientOptions, account: string): Promise<RestClient> {
  const namespace = o.naming.systemNamespace;
  const first = await untilDone(o, account, () => issue(o, account));
  // Only the server's address and trust: no client certificate or token of the manager.
  const { server, ca, insecureSkipTlsVerify, tlsServerName } = o.root.config;
  const config: ClientConfig = { server, token: first.token, ...(ca !== undefined ? { ca } : {}), ...(insecureSkipTlsVerify ? { insecureSkipTlsVerify } : {}), ...(tlsServerName !== undefined ? { tlsServerName } : {}) };
  const client = new RestClient(config, {
    userAgent: `${componentName(o.naming, "controller-manager")}/system:serviceaccount:${namespace}:${account}`,
    ...(o.metrics !== undefined ? { metrics: o.metrics } : {}),
  });
  void renew(o, account, config, first.expiresAtMs);
  return client;
}

async function renew(o: ServiceAccountClientOptions, account: string, config: ClientConfig, expiresAtMs: number): Promise<void> {
  const now = o.now ?? Date.now;
  for (let expires = expiresAtMs; !o.signal.aborted;) {
    const issuedFor = expires - now();
    await sleep(Math.max(1000, issuedFor * 0.8), o.signal).catch(() => undefined);
    if (o.signal.aborted) return;
    const next = await untilDone(o, account, () => issue(o, account)).catch(() => undefined);
    if (next === undefined) return;
    config.token = next.token; // the transport reads the token on every request
    expires = next.expiresAtMs;
  }
}

/** Makes the account when missing, then asks for a token. */
async function issue(o: ServiceAccountClientOptions, account: string): Promise<{ token: string; expiresAtMs: number }> {
  const namespace = o.naming.systemNamespace;
  try {
    await o.root.create<ServiceAccount>(SERVICE_ACCOUNTS, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: account, namespace } });
  } catch (err) {
    if (!isApiError(err, "AlreadyExists")) throw err;
  }
  const answer = await o.root.create<TokenRequest & ApiObject>(SERVICE_ACCOUNTS, {
    apiVersion: `${o.naming.authenticationGroup}/v1`, kind: "TokenRequest", metadata: { name: account, creationTimestamp: null },
    spec: { audiences: [], expirationSeconds: CONTROLLER_TOKEN_SECONDS }, status: { token: "", expirationTimestamp: null },
  }, { namespace, subresource: "token" });
  const token = answer.status?.token;
  if (!token) throw new Error(`the TokenRequest for ${namespace}/${account} answered no token`);
  const at = Date.parse(answer.status?.expirationTimestamp ?? "");
  return { token, expiresAtMs: Number.isNaN(at) ? (o.now ?? Date.now)() + CONTROLLER_TOKEN_SECONDS * 1000 : at };
}

async function untilDone<T>(o: ServiceAccountClientOptions, account: string, attempt: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      if (o.signal.aborted) throw err;
      o.log(`controller-manager: credentials of ${o.naming.systemNamespace}/${account}: ${errorMessage(err)}; retrying`);
      await sleep(RETRY_MS, o.signal).catch(() => undefined);
      if (o.signal.aborted) throw err;
    }
  }
}
