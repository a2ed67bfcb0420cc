// The CSR signer (upstream's csrsigning controller): an approved request
// for one of the built-in signers is signed with the cluster CA
// (--cluster-signing-cert-file / --cluster-signing-key-file; orch server
// uses its data folder's ca.crt and ca.key) for
// min(--cluster-signing-duration, spec.expirationSeconds), backdated five
// minutes for clock skew (a tenth of a shorter lifetime), never past the CA's own end. A request its signer
// would not sign (a node agent client request whose subject is not a node,
// a client signer asked for server auth) gets a Failed condition instead.

import { readFileSync } from "node:fs";
import { X509Certificate } from "node:crypto";
import { WorkQueue, keyOf } from "../../client/index.js";
import { signCertificate } from "../../component/pki.js";
import { CONDITION, parseCsr, signerNames, type CertificateSigningRequest } from "../../api/certificates/index.js";
import { formatTimestamp } from "../../machinery/index.js";
import { errorMessage, nowMs, type ControllerContext, type ControllerDescriptor } from "../controller.js";
import { runQueue } from "../run-queue.js";
import { awaitsSigning, csrResource, nodeClientProblem } from "./common.js";

/** Upstream's backdate of notBefore (clock skew), at most a tenth of a short lifetime so its renewal point stays ahead. */
const BACKDATE_MS = 5 * 60_000;

/** When a certificate signed at `now` starts and ends: min(--cluster-signing-duration, spec.expirationSeconds), within the CA's life. */
export function certificateLifetime(now: number, durationMs: number, expirationSeconds: number | null | undefined, caNotAfter: number): { notBefore: number; notAfter: number } {
  const ttl = Math.min(durationMs, expirationSeconds != null ? expirationSeconds * 1000 : Infinity);
  return { notBefore: now - Math.min(BACKDATE_MS, ttl / 10), notAfter: Math.min(now + ttl, caNotAfter) };
}
/** Upstream's --cluster-signing-duration default: one year. */
export const DEFAULT_SIGNING_DURATION_MS = 365 * 24 * 3600_000;

export const csrSigningController: ControllerDescriptor = {
  name: "csrsigning-controller",
  aliases: ["csrsigning"],
  enabledByDefault: true,
  run: (context) => new CsrSigner(context).run(),
};

export class CsrSigner {
  readonly #ctx: ControllerContext;
  readonly #queue = new WorkQueue({ name: "certificate", baseDelayMs: 200, maxDelayMs: 60_000 });
  #ca: { cert: string; key: string } | undefined;

  constructor(context: ControllerContext) {
    this.#ctx = context;
  }

  async run(): Promise<void> {
    const signing = this.#ctx.config?.signing;
    if (!signing?.certFile || !signing.keyFile) {
      this.#ctx.log("csrsigning-controller: no --cluster-signing-cert-file and --cluster-signing-key-file: certificate requests are not signed here");
      return;
    }
    try {
      this.#ca = { cert: readFileSync(signing.certFile, "utf8"), key: readFileSync(signing.keyFile, "utf8") };
    } catch (err) {
      this.#ctx.log(`csrsigning-controller: cannot read the signing CA: ${errorMessage(err)}: certificate requests are not signed here`);
      return;
    }
    const csrs = this.#ctx.informers.informerFor<CertificateSigningRequest>({ resource: csrResource(this.#ctx.naming) });
    const add = (csr: CertificateSigningRequest) => {
      if (awaitsSigning(csr)) this.#queue.add(keyOf(csr));
    };
    csrs.addEventHandler({ onAdd: add, onUpdate: (_old, csr) => add(csr) });
    await runQueue(this.#ctx, { name: "csrsigning-controller", queue: this.#queue, workers: 2, describe: (k) => `certificatesigningrequest ${k}`, process: (key) => this.sync(key) });
  }

  /** Signs (or fails) one request; exported for tests. */
  async sync(name: string): Promise<void> {
    const { client, informers, naming } = this.#ctx;
    const csr = informers.informerFor<CertificateSigningRequest>({ resource: csrResource(naming) }).get(name);
    if (csr === undefined || !awaitsSigning(csr) || this.#ca === undefined) return;
    const signers = signerNames(naming);
    const signer = csr.spec?.signerName ?? "";
    if (signer !== signers.apiServerClient && signer !== signers.agentClient && signer !== signers.agentServing) return; // another signer's
    const usages = csr.spec?.usages ?? [];
    const request = parseCsr(Buffer.from(csr.spec?.request ?? "", "base64"));
    const problem = signer === signers.agentClient ? nodeClientProblem(request, usages) : usageProblem(signer === signers.agentServing ? "server auth" : "client auth", usages);
    const updated = structuredClone(csr);
    const now = nowMs(this.#ctx);
    if (problem !== undefined) {
      (updated.status ??= {}).conditions = [...(updated.status.conditions ?? []), {
        type: CONDITION.failed, status: "True", reason: "SignerValidationFailure", message: problem, lastUpdateTime: formatTimestamp(new Date(now)),
      }];
    } else {
      const caEnd = new Date(new X509Certificate(this.#ca.cert).validTo).getTime();
      const life = certificateLifetime(now, this.#ctx.config?.signing?.durationMs ?? DEFAULT_SIGNING_DURATION_MS, csr.spec?.expirationSeconds, caEnd);
      const cert = await signCertificate(this.#ca, {
        publicKeyDer: request.publicKeyDer,
        commonName: request.commonName,
        organizations: request.organizations,
        dnsNames: request.dnsNames,
        ipAddresses: request.ipAddresses,
        usages,
        notBefore: new Date(life.notBefore),
        notAfter: new Date(life.notAfter),
      });
      (updated.status ??= {}).certificate = Buffer.from(cert).toString("base64");
    }
    await client.update(csrResource(naming), updated, { subresource: "status" });
    this.#ctx.log(`csrsigning-controller: certificatesigningrequest ${name}: ${problem === undefined ? `signed for ${request.commonName}` : `failed: ${problem}`}`);
  }
}

/** The client (or serving) signers sign only certificates for that use. */
function usageProblem(needed: string, usages: readonly string[]): string | undefined {
  const allowed = new Set(["key encipherment", "digital signature", needed]);
  const bad = usages.filter((u) => !allowed.has(u));
  return bad.length > 0 || !usages.includes(needed) ? `usages did not match [${[...allowed].join(" ")}]: got [${usages.join(" ")}]` : undefined;
}
