// The token controller (upstream's tokens-controller): a Secret of type
// `<domain>/service-account-token` naming a ServiceAccount in its
// `<domain>/service-account.name` annotation is filled in with `token` (a
// TokenRequest of that account bound to the Secret, so deleting the Secret
// revokes it), `ca.crt` (the CA the controller manager trusts the API server
// with) and `namespace`; the account's uid goes in `<domain>/service-account.uid`.
// A Secret whose account is gone, or is another account of the same name, is
// left alone. With --legacy-service-account-token-generation (v1.23's
// behaviour, off by default as upstream since 1.24) every ServiceAccount
// without such a Secret gets one, `<account>-token-<5 characters>`, listed in
// its `secrets`.

import { randomBytes } from "node:crypto";
import { isApiError } from "../../machinery/index.js";
import { WorkQueue, keyOf, splitKey } from "../../client/index.js";
import type { Secret, ServiceAccount } from "../../api/core/types.js";
import type { TokenRequest } from "../../api/authentication/token-request.js";
import type { ApiObject } from "../../machinery/index.js";
import { SECRETS, SERVICE_ACCOUNTS } from "../../api/resource-refs.js";
import { type ControllerContext, type ControllerDescriptor } from "../controller.js";
import { runQueue } from "../run-queue.js";

/** What a token Secret's token is asked for: ten years (upstream's legacy tokens never expire; the server may cut it). */
export const SECRET_TOKEN_SECONDS = 10 * 365 * 24 * 3600;

export const serviceAccountTokenController: ControllerDescriptor = {
  name: "serviceaccount-token-controller",
  aliases: ["serviceaccount-token"],
  enabledByDefault: true,
  run: (context) => new ServiceAccountTokenController(context).run(),
};

export class ServiceAccountTokenController {
  readonly #ctx: ControllerContext;
  readonly #queue = new WorkQueue({ name: "serviceaccount_tokens", baseDelayMs: 20, maxDelayMs: 30_000 });
  readonly #type: string;
  readonly #nameKey: string;
  readonly #uidKey: string;
  readonly #generate: boolean;

  constructor(context: ControllerContext) {
    this.#ctx = context;
    const d = context.naming.keyDomain;
    this.#type = `${d}/service-account-token`;
    this.#nameKey = `${d}/service-account.name`;
    this.#uidKey = `${d}/service-account.uid`;
    this.#generate = context.config?.legacyServiceAccountTokenGeneration === true;
  }

  async run(): Promise<void> {
    const { informers } = this.#ctx;
    const secrets = informers.informerFor<Secret>({ resource: SECRETS });
    const accounts = informers.informerFor<ServiceAccount>({ resource: SERVICE_ACCOUNTS });
    const onSecret = (s: Secret) => {
      if (s.type === this.#type) this.#queue.add(`secret/${keyOf(s)}`);
    };
    secrets.addEventHandler({ onAdd: onSecret, onUpdate: (_o, s) => onSecret(s) });
    if (this.#generate) {
      const onAccount = (sa: ServiceAccount) => this.#queue.add(`account/${keyOf(sa)}`);
      accounts.addEventHandler({ onAdd: onAccount, onUpdate: (_o, sa) => onAccount(sa) });
      // A deleted token Secret: its account gets a new one.
      secrets.addEventHandler({ onDelete: (s) => {
        const account = s.metadata.annotations?.[this.#nameKey];
        if (s.type === this.#type && account) this.#queue.add(`account/${s.metadata.namespace}/${account}`);
      } });
    }
    await runQueue(this.#ctx, { name: "serviceaccount-token", queue: this.#queue, workers: 2, process: (key) => this.sync(key) });
  }

  /** `secret/<ns>/<name>` fills a token Secret; `account/<ns>/<name>` gives an account its Secret. Exported for tests. */
  async sync(key: string): Promise<void> {
    const [kind, ...rest] = key.split("/");
    const { namespace, name } = splitKey(rest.join("/"));
    if (kind === "secret") await this.#fill(namespace!, name);
    else if (kind === "account") await this.#ensureSecret(namespace!, name);
  }

  async #account(namespace: string, name: string): Promise<ServiceAccount | undefined> {
    try {
      return await this.#ctx.client.get<ServiceAccount>(SERVICE_ACCOUNTS, { namespace, name });
    } catch (err) {
      if (isApiError(err, "NotFound")) return undefined;
      throw err;
    }
  }

  async #fill(namespace: string, name: string): Promise<void> {
    const { client } = this.#ctx;
    const secret = this.#ctx.informers.informerFor<Secret>({ resource: SECRETS }).get(`${namespace}/${name}`);
    if (secret === undefined || secret.type !== this.#type || secret.metadata.deletionTimestamp) return;
    const data = secret.data ?? {};
    const ca = client.config.ca;
    const caData = ca === undefined ? undefined : Buffer.from(ca).toString("base64");
    const complete = !!data["token"] && data["namespace"] !== undefined && (caData === undefined || data["ca.crt"] !== undefined);
    const accountName = secret.metadata.annotations?.[this.#nameKey] ?? "";
    const wantUid = secret.metadata.annotations?.[this.#uidKey];
    if (complete && wantUid) return;
    const account = accountName === "" ? undefined : await this.#account(namespace, accountName);
    if (account === undefined || (wantUid && wantUid !== account.metadata.uid)) return;
    const next: Record<string, string> = { ...data, namespace: Buffer.from(namespace).toString("base64") };
    if (caData !== undefined && next["ca.crt"] === undefined) next["ca.crt"] = caData;
    if (!next["token"]) {
      const answer = await client.create<TokenRequest & ApiObject>(SERVICE_ACCOUNTS, {
        apiVersion: `${this.#ctx.naming.authenticationGroup}/v1`, kind: "TokenRequest", metadata: { name: accountName, creationTimestamp: null },
        spec: { audiences: [], expirationSeconds: SECRET_TOKEN_SECONDS, boundObjectRef: { kind: "Secret", apiVersion: "v1", name, uid: secret.metadata.uid } },
        status: { token: "", expirationTimestamp: null },
      } as never, { namespace, subresource: "token" });
      if (!answer.status?.token) throw new Error(`the TokenRequest for ${namespace}/${accountName} answered no token`);
      next["token"] = Buffer.from(answer.status.token).toString("base64");
    }
    try {
      await client.update<Secret>(SECRETS, {
        ...secret,
        metadata: { ...secret.metadata, annotations: { ...secret.metadata.annotations, [this.#uidKey]: account.metadata.uid! } },
        data: next,
      });
    } catch (err) {
      if (!isApiError(err, "Conflict") && !isApiError(err, "NotFound")) throw err;
      if (isApiError(err, "Conflict")) this.#queue.add(`secret/${namespace}/${name}`); // changed meanwhile: once more with the new version
    }
  }

  async #ensureSecret(namespace: string, name: string): Promise<void> {
    const { client } = this.#ctx;
    const account = this.#ctx.informers.informerFor<ServiceAccount>({ resource: SERVICE_ACCOUNTS }).get(`${namespace}/${name}`);
    if (account === undefined || account.metadata.deletionTimestamp) return;
    const secrets = this.#ctx.informers.informerFor<Secret>({ resource: SECRETS });
    const listed = (account.secrets ?? []).map((r) => secrets.get(`${namespace}/${r.name}`));
    if (listed.some((s) => s?.type === this.#type && s.metadata.annotations?.[this.#nameKey] === name)) return;
    // Upstream's names: the account's name cut to leave room, then "-token-" and five random characters.
    const prefix = `${name.slice(0, 253 - "-token-".length - 5)}-token-`;
    const created = await client.create<Secret>(SECRETS, {
      apiVersion: "v1", kind: "Secret",
      metadata: { name: `${prefix}${randomSuffix()}`, namespace, annotations: { [this.#nameKey]: name, [this.#uidKey]: account.metadata.uid! } },
      type: this.#type,
    });
    try {
      // The list is guarded by the account's resourceVersion: a concurrent change makes this sync run again.
      await client.patch(SERVICE_ACCOUNTS, {
        namespace, name,
        patch: { metadata: { resourceVersion: account.metadata.resourceVersion }, secrets: [...(account.secrets ?? []), { name: created.metadata.name }] },
      });
    } catch (err) {
      await client.delete(SECRETS, { namespace, name: created.metadata.name! }).catch(() => {});
      if (isApiError(err, "NotFound")) return;
      throw err;
    }
  }
}

/** Five characters of upstream's alphabet for generated names (no vowels, no look-alikes). */
function randomSuffix(): string {
  const alphabet = "bcdfghjklmnpqrstvwxz2456789";
  return [...randomBytes(5)].map((b) => alphabet[b % alphabet.length]).join("");
}
