// Signer checks on CertificateSigningRequests (upstream's admission plugins
// CertificateApproval and CertificateSigning, plugin/pkg/admission/
// certificates): approving a request (the `approval` subresource) needs
// `approve`, and setting its certificate or conditions through `status`
// needs `sign`, on the `signers` resource of the certificates group, named
// after the request's stored signerName or its domain (`example.com/*`).
// Asked of the server's authorizers like any request; the server's own
// writes (no user) are not checked. A validating admission step, so dry runs
// are checked alike. On the orch.io profile a rule under upstream's group
// name (certificates.k8s.io, served as an alias) counts as well.

import type { AdmissionAttributes, AdmissionUser, ValidatingPlugin } from "../../api/admission.js";
import type { CertificateSigningRequest } from "../../api/certificates/types.js";
import { forbidden, goQuote } from "../../machinery/index.js";
import { namingFor } from "../../machinery/naming.js";
import { decide, type Authorizer } from "../filters/index.js";
import { canonical } from "./bootstrap.js";

export interface SignerCheckDeps {
  /** The profile's certificates group (naming.certificatesGroup). */
  readonly certificatesGroup: string;
  /** The server's authorizers (looked up per request: they are built after admission). */
  authorizers(): readonly Authorizer[];
}

const UPSTREAM_GROUP = namingFor("k8s.io").certificatesGroup;
const CSRS = "certificatesigningrequests";

export function certificateSigners(deps: SignerCheckDeps): ValidatingPlugin {
  const groups = [...new Set([deps.certificatesGroup, UPSTREAM_GROUP])];
  const isCsr = (a: AdmissionAttributes) => a.resource.resource === CSRS && groups.includes(a.resource.group);

  /** Upstream's IsAuthorizedForSignerName: the signer by name, then its domain's wildcard. */
  const authorized = async (user: AdmissionUser, verb: string, signerName: string): Promise<boolean> => {
    const names = [signerName, `${signerName.split("/")[0]}/*`];
    for (const name of names) {
      for (const apiGroup of groups) {
        const d = await decide(deps.authorizers(), user, {
          resourceRequest: true, verb, apiGroup, apiVersion: "*", resource: "signers", subresource: "", namespace: "", name, path: "",
        });
        if (d.decision === "Allow") return true;
      }
    }
    return false;
  };

  return {
    name: "CertificateSigners",
    handles: (a) => a.operation === "UPDATE" && isCsr(a) && (a.subresource === "approval" || a.subresource === "status"),
    async validate(a) {
      const user = a.request?.user;
      if (user === undefined) return;
      // Judged by the stored request: an update cannot move it to a signer the caller may approve.
      const old = a.oldObject as CertificateSigningRequest;
      const signerName = old.spec?.signerName ?? "";
      if (a.subresource === "approval") {
        if (!(await authorized(user, "approve", signerName))) throw forbidden(a.resource, a.name, `user not permitted to approve requests with signerName ${goQuote(signerName)}`);
        return;
      }
      // status: only when the certificate or the conditions change (an empty list and none are the same).
      const csr = a.object as CertificateSigningRequest;
      const same = (csr.status?.certificate ?? "") === (old.status?.certificate ?? "") &&
        canonical(csr.status?.conditions ?? []) === canonical(old.status?.conditions ?? []);
      if (same) return;
      if (!(await authorized(user, "sign", signerName))) throw forbidden(a.resource, a.name, `user not permitted to sign requests with signerName ${goQuote(signerName)}`);
    },
  };
}
